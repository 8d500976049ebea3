// SPDX-License-Identifier: GPL-2.0
/*
 * mh_port.c - userspace port of the table build and the lookup of Linux
 * 6.12's ip_vs_mh (net/netfilter/ipvs/ip_vs_mh.c), written from reading
 * it, as the honest baseline of make bench-host.
 *
 * What is kept as ip_vs_mh does it, because it is what a rebuild costs:
 * - the table is a compile-time size (CONFIG_IP_VS_MH_TAB_INDEX): the
 *   build functions are specialised for 4093 and 65521 slots so that the
 *   compiler sees a constant modulus, as it does in the kernel;
 * - the lookup table holds 8-byte dest pointers and is updated in place: a
 *   slot is written (and the dest reference counts moved) only when its
 *   owner changes;
 * - each rebuild (ip_vs_mh_dest_changed()) recomputes gcd and shift over
 *   the dest list, allocates dest_setup and a zeroed bitmap, computes each
 *   dest's offset and skip with two hsiphash calls, fills round-robin along
 *   the dest list (newest first) with compare-and-subtract stepping, then
 *   frees both;
 * - hsiphash is SipHash-1-3 as on a 64-bit kernel (lib/siphash.c), keyed as
 *   ip_vs_mh keys it, over offset + ntohs(port) + ntohl(addr), an IPv6
 *   address folded to addr->ip6[0] ^ .. ^ addr->ip6[3] first
 *   (ip_vs_mh_hashkey()); hsiphash(&v, 4, key) is, on x86-64 (efficient
 *   unaligned access, CONFIG_DCACHE_WORD_ACCESS), an out-of-line call of
 *   __hsiphash_unaligned() whose tail is one 8-byte load masked to the
 *   message (load_unaligned_zeropad()): mhp_hsiphash() does the same, so
 *   its callers leave 7 readable bytes after the message;
 * - refcount_inc()/refcount_dec() are relaxed/release atomics;
 * - the lookup (ip_vs_mh_get(), what ip_vs_mh_schedule() runs without
 *   flag-1): the hash modulo the compile-time size, one load of the dest
 *   pointer, is_unavailable() (weight <= 0 or overloaded).
 * Flag-1's fallback loop (ip_vs_mh_get_fallback()) is left out: the
 * benchmark times the common case, an available server.
 */
#include <stdlib.h>

#include "mh_port.h"

#define MHP_C0	0x736f6d6570736575ULL
#define MHP_C1	0x646f72616e646f6dULL
#define MHP_C2	0x6c7967656e657261ULL
#define MHP_C3	0x7465646279746573ULL

static inline u64 mhp_rol64(u64 w, unsigned int s)
{
	return w << s | w >> (64 - s);
}

#define MHP_SIPROUND(a, b, c, d) do {					\
	(a) += (b); (b) = mhp_rol64((b), 13); (b) ^= (a);		\
	(a) = mhp_rol64((a), 32);					\
	(c) += (d); (d) = mhp_rol64((d), 16); (d) ^= (c);		\
	(a) += (d); (d) = mhp_rol64((d), 21); (d) ^= (a);		\
	(c) += (b); (b) = mhp_rol64((b), 17); (b) ^= (c);		\
	(c) = mhp_rol64((c), 32);					\
} while (0)

static inline u32 mhp_finish(u64 v0, u64 v1, u64 v2, u64 v3, u64 b)
{
	v3 ^= b;
	MHP_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	MHP_SIPROUND(v0, v1, v2, v3);
	MHP_SIPROUND(v0, v1, v2, v3);
	MHP_SIPROUND(v0, v1, v2, v3);
	return (u32)((v0 ^ v1) ^ (v2 ^ v3));
}

/*
 * __hsiphash_unaligned() of a 64-bit kernel: SipHash-1-3, 32-bit result.
 * Out of line, as lib/siphash.c's is for ip_vs_mh.
 */
__attribute__((__noinline__))
u32 mhp_hsiphash(const void *data, size_t len, const struct mhp_hkey *key)
{
	const u8 *p = data, *end = p + len - (len % 8);
	u64 v0 = MHP_C0 ^ key->key[0], v1 = MHP_C1 ^ key->key[1];
	u64 v2 = MHP_C2 ^ key->key[0], v3 = MHP_C3 ^ key->key[1];
	u64 b = (u64)len << 56;
	unsigned int left = len & 7;

	for (; p != end; p += 8) {
		u64 m = get_unaligned_le64(p);

		v3 ^= m;
		MHP_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	/* load_unaligned_zeropad(end) & bytemask_from_count(left) */
	if (left)
		b |= get_unaligned_le64(end) & ~(~0ULL << (left * 8));
	return mhp_finish(v0, v1, v2, v3, b);
}

/*
 * hsiphash_1u32() of a 64-bit kernel, out of line: hsiphash(&v, 4, key)'s
 * value without the store and reload of v (ip_vs_mh does not call it; the
 * benchmark's "mh-1u32" shows what it would save).
 */
__attribute__((__noinline__))
u32 mhp_hsiphash_1u32(u32 first, const struct mhp_hkey *key)
{
	u64 v0 = MHP_C0 ^ key->key[0], v1 = MHP_C1 ^ key->key[1];
	u64 v2 = MHP_C2 ^ key->key[0], v3 = MHP_C3 ^ key->key[1];

	return mhp_finish(v0, v1, v2, v3, (u64)4 << 56 | first);
}

static inline u32 mhp_ntohl(u32 x)
{
	return be32toh(x);
}

static inline u16 mhp_ntohs(u16 x)
{
	return be16toh(x);
}

/* ip_vs_mh_hashkey(), or with @typed hsiphash_1u32() instead of hsiphash() */
static __always_inline unsigned int
mhp_hashkey_as(int af, const union mhp_addr *addr, u16 port,
	       const struct mhp_hkey *key, unsigned int offset,
	       const bool typed)
{
	/* v and the bytes hsiphash's tail load reads past it, on the stack */
	union {
		unsigned int v;
		u64 word;
	} u;
	u32 addr_fold = addr->ip;

	if (af == MHP_AF_INET6)
		addr_fold = addr->ip6[0] ^ addr->ip6[1] ^
			    addr->ip6[2] ^ addr->ip6[3];
	u.v = offset + mhp_ntohs(port) + mhp_ntohl(addr_fold);
	if (typed)
		return mhp_hsiphash_1u32(u.v, key);
	return mhp_hsiphash(&u.v, sizeof(u.v), key);
}

static inline unsigned int mhp_hashkey(int af, const union mhp_addr *addr,
				       u16 port, const struct mhp_hkey *key,
				       unsigned int offset)
{
	return mhp_hashkey_as(af, addr, port, key, offset, false);
}

/* is_unavailable() */
static inline bool mhp_is_unavailable(const struct mhp_dest *dest)
{
	return __atomic_load_n(&dest->weight, __ATOMIC_RELAXED) <= 0 ||
	       dest->flags & MHP_DEST_F_OVERLOAD;
}

/* ip_vs_mh_get() and the flag tests of ip_vs_mh_schedule() around it */
static __always_inline struct mhp_dest *
mhp_schedule_sized(const struct mhp_service *svc, const struct mhp_state *s,
		   const union mhp_addr *addr, u16 port,
		   const unsigned int tab_size, const bool typed)
{
	const struct mhp_dest *dest;
	unsigned int hash;

	if (!(svc->flags & MHP_SVC_F_PORT))
		port = 0;
	hash = mhp_hashkey_as(svc->af, addr, port, &s->hash1, 0, typed) %
	       tab_size;
	dest = __atomic_load_n(&s->lookup[hash].dest, __ATOMIC_RELAXED);
	return (!dest || mhp_is_unavailable(dest)) ? NULL :
	       (struct mhp_dest *)dest;
}

struct mhp_dest *mhp_schedule_small(const struct mhp_service *svc,
				    const struct mhp_state *s,
				    const union mhp_addr *addr, u16 port)
{
	return mhp_schedule_sized(svc, s, addr, port, MHP_SIZE_SMALL, false);
}

struct mhp_dest *mhp_schedule_small_1u32(const struct mhp_service *svc,
					 const struct mhp_state *s,
					 const union mhp_addr *addr, u16 port)
{
	return mhp_schedule_sized(svc, s, addr, port, MHP_SIZE_SMALL, true);
}

struct mhp_dest *mhp_schedule_large(const struct mhp_service *svc,
				    const struct mhp_state *s,
				    const union mhp_addr *addr, u16 port)
{
	return mhp_schedule_sized(svc, s, addr, port, MHP_SIZE_LARGE, false);
}

static inline void mhp_dest_hold(struct mhp_dest *d)
{
	__atomic_fetch_add(&d->refcnt, 1, __ATOMIC_RELAXED);
}

static inline void mhp_dest_put(struct mhp_dest *d)
{
	__atomic_fetch_sub(&d->refcnt, 1, __ATOMIC_RELEASE);
}

#define mhp_entry(p)	((struct mhp_dest *)((char *)(p) - \
				__builtin_offsetof(struct mhp_dest, n_list)))

void mhp_service_init(struct mhp_service *svc)
{
	svc->destinations.next = &svc->destinations;
	svc->destinations.prev = &svc->destinations;
	svc->num_dests = 0;
	svc->af = MHP_AF_INET;
	svc->flags = 0;
}

void mhp_service_add(struct mhp_service *svc, struct mhp_dest *dest)
{
	struct mhp_list *head = &svc->destinations;

	dest->n_list.next = head->next;
	dest->n_list.prev = head;
	head->next->prev = &dest->n_list;
	head->next = &dest->n_list;
	svc->num_dests++;
}

static void mhp_generate_hash_secret(struct mhp_hkey *hash1,
				     struct mhp_hkey *hash2)
{
	hash1->key[0] = 2654435761UL;
	hash1->key[1] = 2654435761UL;
	hash2->key[0] = 2654446892UL;
	hash2->key[1] = 2654446892UL;
}

static void mhp_reset(struct mhp_state *s)
{
	unsigned int i;

	for (i = 0; i < s->tab_size; i++) {
		struct mhp_dest *dest = s->lookup[i].dest;

		if (dest) {
			mhp_dest_put(dest);
			s->lookup[i].dest = NULL;
		}
	}
}

static u32 mhp_gcd(u32 a, u32 b)
{
	while (b) {
		u32 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static int mhp_gcd_weight(struct mhp_service *svc)
{
	struct mhp_list *p;
	int g = 0;

	for (p = svc->destinations.next; p != &svc->destinations; p = p->next) {
		int weight = mhp_entry(p)->last_weight;

		if (weight > 0)
			g = g > 0 ? (int)mhp_gcd(weight, g) : weight;
	}
	return g;
}

static int mhp_fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static int mhp_shift_weight(struct mhp_service *svc, int gcd, int tab_bits)
{
	struct mhp_list *p;
	int weight = 0, shift;

	if (gcd < 1)
		return 0;
	for (p = svc->destinations.next; p != &svc->destinations; p = p->next)
		if (mhp_entry(p)->last_weight > weight)
			weight = mhp_entry(p)->last_weight;
	shift = mhp_fls(weight / gcd) - tab_bits;
	return shift >= 0 ? shift : 0;
}

static __always_inline void mhp_permutate(struct mhp_state *s,
					  struct mhp_service *svc,
					  const unsigned int tab_size)
{
	struct mhp_dest_setup *ds = s->dest_setup;
	struct mhp_list *p;

	if (s->gcd < 1)
		return;
	for (p = svc->destinations.next; p != &svc->destinations; p = p->next) {
		struct mhp_dest *dest = mhp_entry(p);
		int lw;

		ds->offset = mhp_hashkey(svc->af, &dest->addr, dest->port,
					 &s->hash1, 0) % tab_size;
		ds->skip = mhp_hashkey(svc->af, &dest->addr, dest->port,
				       &s->hash2, 0) % (tab_size - 1) + 1;
		ds->perm = ds->offset;
		lw = dest->last_weight;
		ds->turns = ((lw / s->gcd) >> s->rshift) ? : (lw != 0);
		ds++;
	}
}

static __always_inline int mhp_populate(struct mhp_state *s,
					struct mhp_service *svc,
					const unsigned int tab_size)
{
	struct mhp_dest_setup *ds;
	struct mhp_dest *dest, *new_dest;
	struct mhp_list *p;
	unsigned long *table;
	int n, dt_count;
	unsigned int c;

	if (s->gcd < 1) {
		mhp_reset(s);
		return 0;
	}

	table = calloc((tab_size + 63) / 64, sizeof(*table));
	if (!table)
		return -ENOMEM;

	p = &svc->destinations;
	n = 0;
	dt_count = 0;
	while (n < (int)tab_size) {
		if (p == &svc->destinations)
			p = p->next;

		ds = &s->dest_setup[0];
		while (p != &svc->destinations) {
			if (ds->turns < 1) {
				p = p->next;
				ds++;
				continue;
			}

			c = ds->perm;
			while (table[c / 64] >> (c % 64) & 1) {
				ds->perm += ds->skip;
				if (ds->perm >= tab_size)
					ds->perm -= tab_size;
				c = ds->perm;
			}

			table[c / 64] |= 1UL << (c % 64);

			dest = s->lookup[c].dest;
			new_dest = mhp_entry(p);
			if (dest != new_dest) {
				if (dest)
					mhp_dest_put(dest);
				mhp_dest_hold(new_dest);
				s->lookup[c].dest = new_dest;
			}

			if (++n == (int)tab_size)
				goto out;

			if (++dt_count >= ds->turns) {
				dt_count = 0;
				p = p->next;
				ds++;
			}
		}
	}
out:
	free(table);
	return 0;
}

static __always_inline int mhp_reassign_sized(struct mhp_state *s,
					      struct mhp_service *svc,
					      const unsigned int tab_size)
{
	int ret;

	if (svc->num_dests > tab_size)
		return -EINVAL;
	if (svc->num_dests >= 1) {
		s->dest_setup = calloc(svc->num_dests, sizeof(*s->dest_setup));
		if (!s->dest_setup)
			return -ENOMEM;
	}
	mhp_permutate(s, svc, tab_size);
	ret = mhp_populate(s, svc, tab_size);
	if (svc->num_dests >= 1) {
		free(s->dest_setup);
		s->dest_setup = NULL;
	}
	return ret;
}

static int mhp_reassign(struct mhp_state *s, struct mhp_service *svc)
{
	if (s->tab_size == MHP_SIZE_SMALL)
		return mhp_reassign_sized(s, svc, MHP_SIZE_SMALL);
	return mhp_reassign_sized(s, svc, MHP_SIZE_LARGE);
}

static int mhp_tab_bits(const struct mhp_state *s)
{
	/* CONFIG_IP_VS_MH_TAB_INDEX / 2 */
	return s->tab_size == MHP_SIZE_SMALL ? 12 / 2 : 16 / 2;
}

int mhp_init_svc(struct mhp_state *s, struct mhp_service *svc,
		 unsigned int tab_size)
{
	int ret;

	if (tab_size != MHP_SIZE_SMALL && tab_size != MHP_SIZE_LARGE)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->tab_size = tab_size;
	s->lookup = calloc(tab_size, sizeof(*s->lookup));
	if (!s->lookup)
		return -ENOMEM;
	mhp_generate_hash_secret(&s->hash1, &s->hash2);
	s->gcd = mhp_gcd_weight(svc);
	s->rshift = mhp_shift_weight(svc, s->gcd, mhp_tab_bits(s));
	ret = mhp_reassign(s, svc);
	if (ret < 0)
		mhp_done_svc(s);
	return ret;
}

/* ip_vs_mh_dest_changed(): what IPVS calls on every add, edit or delete. */
int mhp_dest_changed(struct mhp_state *s, struct mhp_service *svc)
{
	s->gcd = mhp_gcd_weight(svc);
	s->rshift = mhp_shift_weight(svc, s->gcd, mhp_tab_bits(s));
	return mhp_reassign(s, svc);
}

void mhp_done_svc(struct mhp_state *s)
{
	if (s->lookup)
		mhp_reset(s);
	free(s->lookup);
	s->lookup = NULL;
}

unsigned int mhp_offset(const struct mhp_state *s, const struct mhp_dest *d)
{
	return mhp_hashkey(d->af, &d->addr, d->port, &s->hash1, 0) %
	       s->tab_size;
}

unsigned int mhp_skip(const struct mhp_state *s, const struct mhp_dest *d)
{
	return mhp_hashkey(d->af, &d->addr, d->port, &s->hash2, 0) %
	       (s->tab_size - 1) + 1;
}

int mhp_turns(const struct mhp_state *s, const struct mhp_dest *d)
{
	int lw = d->last_weight;

	return ((lw / s->gcd) >> s->rshift) ? : (lw != 0);
}
