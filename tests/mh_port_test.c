// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of tools/bench/mh_port.c, the ip_vs_mh port make bench-host
 * measures against: its hsiphash against the kernel's own test vectors
 * (lib/siphash_kunit.c, 64-bit), and its tables against the plain reference
 * fill run on ip_vs_mh's setup (list order, hsiphash offsets and skips,
 * gcd/shift turns), including rebuilds in place after dests come and go
 * and the dest reference counts those leave.  Ends with "N passed, N
 * failed".
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "maglev_table.h"
#include "maglev_ref.h"
#include "mh_port.h"

#define UNIT_RNG_SEED	0x9e3779b97f4a7c15ULL
#include "unit.h"
#include "hsiphash_vectors.h"


static void test_hsiphash(void)
{
	const struct mhp_hkey key = { { 0x0706050403020100UL,
					0x0f0e0d0c0b0a0908UL } };
	/* 7 bytes after each message for the tail's 8-byte load */
	u8 in[64 + 7], in_unaligned[65 + 7];
	bool ok = true;
	unsigned int i;

	memset(in, 0xff, sizeof(in));
	memset(in_unaligned, 0xff, sizeof(in_unaligned));
	for (i = 0; i < 64; i++) {
		in[i] = (u8)i;
		in_unaligned[i + 1] = (u8)i;
	}
	for (i = 0; i < 64; i++) {
		if (mhp_hsiphash(in, i, &key) != hsip64_vectors[i] ||
		    mhp_hsiphash(in_unaligned + 1, i, &key) !=
		    hsip64_vectors[i]) {
			fprintf(stderr, "  hsiphash length %u: %08x, want %08x\n",
				i, mhp_hsiphash(in, i, &key),
				hsip64_vectors[i]);
			ok = false;
		}
	}
	if (mhp_hsiphash_1u32(0x03020100U, &key) != hsip64_vectors[4]) {
		fprintf(stderr, "  hsiphash_1u32 differs\n");
		ok = false;
	}
	result(ok, "hsiphash matches the kernel's test vectors");
}

/*
 * The port's table against maglev_ref_fill() given ip_vs_mh's setup, and
 * each dest's reference count against the slots it owns.
 */
static bool check_table(const struct mhp_state *s,
			const struct mhp_service *svc)
{
	u32 n = svc->num_dests, size = s->tab_size, i, c;
	struct maglev_backend *b = calloc(n ? n : 1, sizeof(*b));
	struct mhp_dest **d = calloc(n ? n : 1, sizeof(*d));
	u16 *ref = malloc((size ? size : 1) * sizeof(*ref));
	struct mhp_list *p;
	u32 *owned = calloc(n ? n : 1, sizeof(*owned));
	bool ok = true;

	if (!b || !d || !ref || !owned)
		abort();
	i = 0;
	for (p = svc->destinations.next; p != &svc->destinations; p = p->next) {
		d[i] = (struct mhp_dest *)p;	/* n_list comes first */
		b[i].offset = mhp_offset(s, d[i]);
		b[i].skip = mhp_skip(s, d[i]);
		b[i].turns = s->gcd < 1 ? 0 : (u32)mhp_turns(s, d[i]);
		i++;
	}
	maglev_ref_fill(ref, size, b, n);
	for (c = 0; c < size; c++) {
		const struct mhp_dest *want =
			ref[c] == MAGLEV_NONE ? NULL : d[ref[c]];

		if (s->lookup[c].dest != want) {
			if (ok)
				fprintf(stderr, "  M %u N %u: slot %u differs\n",
					size, n, c);
			ok = false;
		}
		if (ref[c] != MAGLEV_NONE)
			owned[ref[c]]++;
	}
	for (i = 0; i < n; i++) {
		if ((u32)d[i]->refcnt != owned[i]) {
			if (ok)
				fprintf(stderr, "  dest %u: refcnt %d, owns %u\n",
					i, d[i]->refcnt, owned[i]);
			ok = false;
		}
	}
	free(b);
	free(d);
	free(ref);
	free(owned);
	return ok;
}

static struct mhp_dest *new_dest(u32 i, int weight)
{
	struct mhp_dest *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	d->af = 2;
	d->addr.ip = htonl(0x0a000000U + i);
	d->port = htons(80);
	d->weight = weight;
	d->last_weight = weight;
	return d;
}

static void test_tables(unsigned int size, u32 n, int wmax)
{
	struct mhp_dest **d = calloc(n + 1, sizeof(*d));
	struct mhp_service svc;
	struct mhp_state s;
	char name[96];
	bool ok;
	u32 i;

	if (!d)
		abort();
	mhp_service_init(&svc);
	for (i = 0; i < n; i++) {
		d[i] = new_dest(i, 1 + (int)(rnd() % (u64)wmax));
		mhp_service_add(&svc, d[i]);
	}
	ok = !mhp_init_svc(&s, &svc, size) && check_table(&s, &svc);
	/* one more dest, rebuilt in place */
	d[n] = new_dest(n, 1 + (int)(rnd() % (u64)wmax));
	mhp_service_add(&svc, d[n]);
	ok = ok && !mhp_dest_changed(&s, &svc) && check_table(&s, &svc);
	/* a weight edit, then every weight zero */
	d[n / 2]->last_weight = 0;
	ok = ok && !mhp_dest_changed(&s, &svc) && check_table(&s, &svc);
	for (i = 0; i <= n; i++)
		d[i]->last_weight = 0;
	ok = ok && !mhp_dest_changed(&s, &svc) && check_table(&s, &svc);
	mhp_done_svc(&s);
	for (i = 0; i <= n; i++) {
		ok = ok && !d[i]->refcnt;
		free(d[i]);
	}
	free(d);
	snprintf(name, sizeof(name),
		 "port's table = reference fill on mh's setup (M %u, N %u, weights 1..%d)",
		 size, n, wmax);
	result(ok, name);
}

/*
 * The port's lookup (ip_vs_mh_get()): the slot of hsiphash(offset +
 * ntohs(port) + ntohl(addr)) modulo 4093, the port only with flag-2, an
 * IPv6 address folded first, so that two IPv6 clients whose words xor
 * alike share a server; a drained or overloaded server gives NULL.
 */
static void test_schedule(void)
{
	struct mhp_dest *d[10], *got;
	struct mhp_service svc;
	struct mhp_state s;
	union mhp_addr a = { .ip6 = { htonl(0x20010db8), 0, 0, htonl(1) } };
	union mhp_addr b = { .ip6 = { htonl(0x20010db9), 0, 0, htonl(0) } };
	union {
		u32 v;
		u64 pad;
	} u = { .pad = 0 };
	bool ok = true;
	u32 i;

	mhp_service_init(&svc);
	for (i = 0; i < 10; i++) {
		d[i] = new_dest(i, 1);
		mhp_service_add(&svc, d[i]);
	}
	ok = !mhp_init_svc(&s, &svc, MHP_SIZE_SMALL);
	u.v = ntohl(htonl(0x0a000001));
	got = mhp_schedule_small(&svc, &s, &(union mhp_addr){ .ip =
				 htonl(0x0a000001) }, htons(80));
	ok = ok && got == s.lookup[mhp_hsiphash(&u.v, 4, &s.hash1) %
				  MHP_SIZE_SMALL].dest;
	svc.flags = MHP_SVC_F_PORT;
	u.v = 80 + 0x0a000001;
	got = mhp_schedule_small(&svc, &s, &(union mhp_addr){ .ip =
				 htonl(0x0a000001) }, htons(80));
	ok = ok && got == s.lookup[mhp_hsiphash(&u.v, 4, &s.hash1) %
				  MHP_SIZE_SMALL].dest;
	svc.af = MHP_AF_INET6;
	ok = ok && mhp_schedule_small(&svc, &s, &a, htons(80)) ==
		   mhp_schedule_small(&svc, &s, &b, htons(80));
	got = mhp_schedule_small(&svc, &s, &a, htons(80));
	ok = ok && got;
	if (got) {
		got->flags |= MHP_DEST_F_OVERLOAD;
		ok = ok && !mhp_schedule_small(&svc, &s, &a, htons(80));
		got->flags = 0;
		got->weight = 0;
		ok = ok && !mhp_schedule_small(&svc, &s, &a, htons(80));
	}
	mhp_done_svc(&s);
	for (i = 0; i < 10; i++)
		free(d[i]);
	result(ok, "port's lookup: hashkey, IPv6 fold, availability");
}

int main(void)
{
	test_hsiphash();
	test_schedule();
	test_tables(MHP_SIZE_SMALL, 1, 1);
	test_tables(MHP_SIZE_SMALL, 10, 1);
	test_tables(MHP_SIZE_SMALL, 100, 200);	/* shifted weights */
	test_tables(MHP_SIZE_LARGE, 1000, 1);
	test_tables(MHP_SIZE_LARGE, 300, 5);
	test_tables(MHP_SIZE_LARGE, 50, 1000);	/* shifted weights */
	return unit_summary();
}
