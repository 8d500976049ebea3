// SPDX-License-Identifier: GPL-2.0
/*
 * maglev-sim - userspace planner for ip_vs_maglev tables.
 *
 * Reads commands from standard input, one per line, keeps a backend set,
 * rebuilds the table with the same maglev_table.c the kernel module uses
 * after every change, and answers questions about it.  "maglev-sim --help"
 * describes the protocol.
 *
 * A line that fails prints "error: line N: why" on standard error and
 * changes nothing: the previous table keeps serving, as in the kernel.  The
 * exit status is 1 if any line failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "maglev_table.h"
#include "ring_set.h"

#define SIM_MAX_ARGS	4	/* more words than any command takes */

static const char sim_help[] =
"usage: maglev-sim [--help] [-32] < commands\n"
"\n"
"  -32   compute the client hash as 32-bit kernels do (HalfSipHash-1-3);\n"
"        by default as 64-bit kernels do (SipHash-1-3)\n"
"\n"
"Plans IPVS maglev tables: reads commands from standard input, one per line,\n"
"rebuilds the table with the kernel module's own maglev_table.c after each\n"
"change of the backend set, and prints answers on standard output.\n"
"\n"
"Backend set (each change rebuilds the table):\n"
"  ADD_NODE <name> [weight]  add a backend; weight 0..2147483647 (as IPVS),\n"
"                            default 1.  Weights are scaled into the table\n"
"                            as the kernel does (docs/specification.md)\n"
"  REMOVE_NODE <name>        remove a backend\n"
"  WEIGHT <name> <weight>    change a weight (0..2147483647).  Going from a\n"
"                            positive weight to 0 drains the backend as the\n"
"                            kernel does: its last positive weight becomes\n"
"                            its drain weight, only its own slots move, and\n"
"                            restoring that weight gives back the previous\n"
"                            table exactly.\n"
"                            A backend added with weight 0 does not drain;\n"
"                            a positive weight ends draining.\n"
"  REBUILD                   rebuild with the current set (applies SIZE)\n"
"\n"
"Parameters (like the module parameter table_size and the sysctl\n"
"net.ipv4.vs.maglev_hash_key):\n"
"  SIZE <M>                  table size: a prime in 251..5000011, default\n"
"                            65537 as the kernel's.  Like table_size, it\n"
"                            takes effect at the next rebuild, not at once.\n"
"                            The size never follows the number of backends,\n"
"                            but a table gets at least one slot per backend:\n"
"                            with more backends than M it uses the smallest\n"
"                            prime >= their number (STATS shows size= in\n"
"                            use, next_size= as set)\n"
"  KEY <32 hex digits>       128-bit key of the client hash of LOOKUP and\n"
"                            LOOKUP_ADDR (the kernel's hsiphash: SipHash-1-3,\n"
"                            with -32 HalfSipHash-1-3), 16 bytes in hex,\n"
"                            first byte first, as maglev_hash_key is written\n"
"                            (default all zero).  Takes effect at once.\n"
"  FINGERPRINT               the key's fingerprint, 8 lowercase hex digits,\n"
"                            as /proc/net/ip_vs_maglev shows it (key FP)\n"
"\n"
"Questions (about the table currently serving):\n"
"  CHURN                     slots whose owner changed in the last rebuild;\n"
"                            a slot that lost its owner counts, so emptying\n"
"                            the table counts M (all slots if it changed\n"
"                            the size)\n"
"  OWNER <slot>              owner of a slot, 0..M-1\n"
"  LOOKUP <key>              owner of a text key: hsiphash of its bytes\n"
"                            under KEY (hsiphash())\n"
"  LOOKUP_ADDR <addr>        owner of an address, hashed as the scheduler\n"
"                            does: the 4- or 16-byte address in network\n"
"                            order, then, only if one is given, the 2-byte\n"
"                            port in network order and two zero bytes.\n"
"                            Forms: 10.0.0.1,\n"
"                            10.0.0.1:80, 2001:db8::1, [2001:db8::1],\n"
"                            [2001:db8::1]:80\n"
"  COUNTS                    \"<name> <slots>\" per backend, in name order,\n"
"                            weight 0 included\n"
"  DIGEST                    table digest, 16 lowercase hex digits\n"
"  SHOW                      \"<name> weight=W drain=D turns=T slots=S\" per\n"
"                            backend, in name order\n"
"  STATS                     table size, pending size, key fingerprint,\n"
"                            backends,\n"
"                            filled slots, fills and probes of the last build,\n"
"                            slot width, table bytes, build scratch bytes\n"
"\n"
"Algorithm (the backend set is kept across changes):\n"
"  ALGO maglev               Maglev table (the default); all commands above\n"
"  ALGO ring64 <V>           ring of seed 002: V points per server, 1..1024,\n"
"                            at FNV-1a 64 + finalizer of \"<name>#<i>\"\n"
"  ALGO ring32               ring of seed 004: one point per server at\n"
"                            FNV-1a 32 of its name\n"
"  POSITION <text>           with a ring: the text's position, unsigned\n"
"                            decimal\n"
"With a ring, ADD_NODE and REMOVE_NODE change the set (the weight is kept\n"
"for ALGO maglev, but rings ignore weights: every server is on the ring),\n"
"LOOKUP <key> prints the owner of the first point at or above the key's\n"
"position (wrapping; a tie goes to the lower name) in O(log points), and\n"
"the table commands (WEIGHT, REBUILD, CHURN, OWNER, LOOKUP_ADDR, COUNTS,\n"
"DIGEST, SHOW, STATS) are errors.  ALGO maglev rebuilds the table from\n"
"the set.\n"
"\n"
"OWNER, LOOKUP and LOOKUP_ADDR print \"-\" when the table is empty (no\n"
"backend with a positive or draining weight).  Names are 1..64 bytes\n"
"without whitespace; backends are ordered by the bytes of their names.  A\n"
"name that is an address with a port (10.0.0.1:80, [2001:DB8:0::1]:80) is\n"
"written the way the kernel names destinations, as ipvsadm -Ln prints\n"
"them ([2001:db8::1]:80), so any spelling of one address is one backend.\n"
"Commands are case-insensitive; blank lines and lines starting with '#'\n"
"are ignored.\n"
"\n"
"A bad line prints \"error: line N: why\" on standard error and changes\n"
"nothing; the exit status is then 1.\n";

struct sim {
	/* the backend set, sorted by name; only the input fields are used */
	struct maglev_backend *node;
	u32 nr_node;

	u32 next_size;		/* table size of the next rebuild */
	u8 key[MAGLEV_KEY_BYTES];	/* KEY, all zero at first: its fingerprint */
	hsiphash_key_t hkey;	/* the same as the client hash's key */

	/* the table serving now, with its backends in name order */
	struct maglev_table *cur;
	struct maglev_backend *cur_b;
	u32 cur_n;
	struct maglev_stats cur_st;
	u32 churn;

	/* with ALGO ring64 or ring32: the ring, which then holds the set */
	struct ring_set *ring;

	char why[160];
};

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static __printf(2, 3) int sim_fail(struct sim *s, const char *fmt, ...);

static int sim_fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Index of @name in the set (in name order), or -(insertion point) - 1 if
 * it is not there.
 */
static long sim_find(const struct sim *s, const char *name, u32 len)
{
	struct maglev_backend key = { .name_len = len };
	u32 lo = 0, hi = s->nr_node;

	memcpy(key.name, name, len);
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		int r = maglev_backend_cmp(&s->node[mid], &key);

		if (!r)
			return mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

static int parse_u32(struct sim *s, const char *str, u32 max,
		     const char *what, u32 *out)
{
	u64 v = 0;
	const char *p;

	if (!*str)
		return sim_fail(s, "bad %s ''", what);
	for (p = str; *p; p++) {
		if (*p < '0' || *p > '9')
			return sim_fail(s, "bad %s '%s'", what, str);
		v = v * 10 + (u64)(*p - '0');
		if (v > max)
			return sim_fail(s, "%s '%s' out of range 0..%u",
					what, str, max);
	}
	*out = (u32)v;
	return 0;
}

/* Value of a hex digit, -1 for anything else. */
static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A hash key as the kernel's maglev_hash_key takes it: exactly 32 hex
 * digits (either case), the key's 16 bytes, first byte first.  Errors do
 * not repeat the text: it may be a secret key with a typo.
 */
static int parse_key(struct sim *s, const char *str, u8 *key,
		     hsiphash_key_t *hkey)
{
	u8 b[MAGLEV_KEY_BYTES];
	size_t len = strlen(str), i;
	int d;

	if (len != 2 * MAGLEV_KEY_BYTES)
		return sim_fail(s, "bad key: %zu characters, want %d hex digits",
				len, 2 * MAGLEV_KEY_BYTES);
	memset(b, 0, sizeof(b));
	for (i = 0; i < len; i++) {
		d = hex_digit(str[i]);
		if (d < 0)
			return sim_fail(s, "bad key: character %zu is not a hex digit",
					i + 1);
		b[i / 2] |= (u8)(i % 2 ? d : d << 4);
	}
	memcpy(key, b, sizeof(b));
	maglev_hkey_from_bytes(hkey, b);
	return 0;
}

static int parse_addr(struct sim *s, const char *str, u8 *key);

/*
 * Copy a backend name into @name (MAGLEV_NAME_MAX + 1 bytes): an address
 * with a port as the kernel names it (maglev_format_name()), anything else
 * as it is.  Return its length, or 0 if it is too long.
 */
static u32 parse_name(struct sim *s, const char *str, char *name)
{
	size_t len = strlen(str);
	u8 key[18];
	int klen;

	/* not an address is no error: s->why only counts on failure */
	klen = parse_addr(s, str, key);
	if (klen == 6 || klen == 18)
		return (u32)maglev_format_name(name, MAGLEV_NAME_MAX + 1, key,
					       (u32)klen - 2,
					       (u16)(key[klen - 2] << 8 |
						     key[klen - 1]));
	if (len > MAGLEV_NAME_MAX) {
		sim_fail(s, "name longer than %d bytes", MAGLEV_NAME_MAX);
		return 0;
	}
	memcpy(name, str, len + 1);
	return (u32)len;
}

/*
 * Build a table of size @s->next_size from @node (@n backends in name
 * order) and make it the one serving.  On failure nothing changes.
 */
static int sim_rebuild(struct sim *s, const struct maglev_backend *node,
		       u32 n)
{
	u32 size = maglev_fit_size(s->next_size, n);
	struct maglev_stats st = { 0 };
	struct maglev_table *t;
	struct maglev_backend *b;
	const char *why = NULL;
	void *work;
	u32 i;
	int ret;

	/* the scratch area serves the build and maglev_churn() */
	t = malloc(maglev_table_bytes(size, n));
	work = malloc(maglev_work_bytes(size, max(n, s->cur_n)));
	b = calloc(n ? n : 1, sizeof(*b));
	if (!t || !work || !b) {
		ret = sim_fail(s, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		memcpy(b[i].name, node[i].name, node[i].name_len);
		b[i].name_len = node[i].name_len;
		b[i].weight = node[i].weight;
		b[i].drain_weight = node[i].drain_weight;
	}

	ret = maglev_build(t, size, b, n, work, &st, &why);
	if (ret) {
		ret = sim_fail(s, "%s", why ? why : "table build failed");
		goto out;
	}

	s->churn = s->cur ? maglev_churn(s->cur, s->cur_b, s->cur_n,
					 t, b, n, work) : 0;
	free(s->cur);
	free(s->cur_b);
	s->cur = t;
	s->cur_b = b;
	s->cur_n = n;
	s->cur_st = st;
	t = NULL;
	b = NULL;
out:
	free(work);
	free(t);
	free(b);
	return ret;
}

/*
 * Commit a new backend set: rebuild from @node and, if that worked, make it
 * the set.  @node is the caller's allocation; it is freed on failure.
 */
static int sim_commit(struct sim *s, struct maglev_backend *node, u32 n)
{
	if (sim_rebuild(s, node, n)) {
		free(node);
		return -1;
	}
	free(s->node);
	s->node = node;
	s->nr_node = n;
	return 0;
}

/* A copy of the set with room for @extra more backends. */
static struct maglev_backend *sim_copy_set(struct sim *s, u32 extra)
{
	struct maglev_backend *node;
	u32 n = s->nr_node + extra;

	node = calloc(n ? n : 1, sizeof(*node));
	if (!node) {
		sim_fail(s, "out of memory");
		return NULL;
	}
	if (s->nr_node)
		memcpy(node, s->node, s->nr_node * sizeof(*node));
	return node;
}

static int cmd_add_node(struct sim *s, int argc, char **argv)
{
	char name[MAGLEV_NAME_MAX + 1];
	struct maglev_backend *node;
	u32 len, weight = 1, at;
	long idx;

	len = parse_name(s, argv[1], name);
	if (!len)
		return -1;
	if (argc > 2 && parse_u32(s, argv[2], MAGLEV_WEIGHT_MAX, "weight",
				  &weight))
		return -1;
	idx = sim_find(s, name, len);
	if (idx >= 0)
		return sim_fail(s, "backend '%s' already exists", name);
	if (s->nr_node >= MAGLEV_MAX_BACKENDS)
		return sim_fail(s, "more than %d backends",
				MAGLEV_MAX_BACKENDS);

	node = sim_copy_set(s, 1);
	if (!node)
		return -1;
	at = (u32)(-idx - 1);
	memmove(&node[at + 1], &node[at], (s->nr_node - at) * sizeof(*node));
	memset(&node[at], 0, sizeof(*node));
	memcpy(node[at].name, name, len);
	node[at].name_len = len;
	node[at].weight = weight;
	return sim_commit(s, node, s->nr_node + 1);
}

static int cmd_remove_node(struct sim *s, int argc, char **argv)
{
	char name[MAGLEV_NAME_MAX + 1];
	struct maglev_backend *node;
	u32 len, at;
	long idx;

	(void)argc;
	len = parse_name(s, argv[1], name);
	if (!len)
		return -1;
	idx = sim_find(s, name, len);
	if (idx < 0)
		return sim_fail(s, "no backend '%s'", name);

	node = sim_copy_set(s, 0);
	if (!node)
		return -1;
	at = (u32)idx;
	memmove(&node[at], &node[at + 1],
		(s->nr_node - at - 1) * sizeof(*node));
	return sim_commit(s, node, s->nr_node - 1);
}

static int cmd_weight(struct sim *s, int argc, char **argv)
{
	char name[MAGLEV_NAME_MAX + 1];
	struct maglev_backend *node, *b;
	u32 len, weight;
	long idx;

	(void)argc;
	len = parse_name(s, argv[1], name);
	if (!len)
		return -1;
	if (parse_u32(s, argv[2], MAGLEV_WEIGHT_MAX, "weight", &weight))
		return -1;
	idx = sim_find(s, name, len);
	if (idx < 0)
		return sim_fail(s, "no backend '%s'", name);

	node = sim_copy_set(s, 0);
	if (!node)
		return -1;
	b = &node[idx];
	if (weight) {
		b->drain_weight = 0;
	} else if (b->weight) {
		/* drain: remember the weight whose slots are handed over */
		b->drain_weight = b->weight;
	}
	b->weight = weight;
	return sim_commit(s, node, s->nr_node);
}

static int cmd_rebuild(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return sim_rebuild(s, s->node, s->nr_node);
}

static int cmd_size(struct sim *s, int argc, char **argv)
{
	const char *why = NULL;
	u32 size;

	(void)argc;
	if (!strcmp(argv[1], "auto"))
		return sim_fail(s, "size auto: no longer a size; the table size is fixed, 65537 by default, or a prime in 251..5000011");
	if (parse_u32(s, argv[1], UINT32_MAX, "size", &size))
		return -1;
	if (maglev_check_size(size, &why))
		return sim_fail(s, "size %u: %s", size,
				why ? why : "not a valid table size");
	s->next_size = size;
	return 0;
}

static int cmd_key(struct sim *s, int argc, char **argv)
{
	(void)argc;
	return parse_key(s, argv[1], s->key, &s->hkey);
}

static int cmd_fingerprint(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%08x\n", maglev_key_fingerprint(s->key));
	return 0;
}

static int cmd_churn(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%u\n", s->churn);
	return 0;
}

static void print_owner(const struct sim *s, u32 idx)
{
	const struct maglev_backend *b;

	if (idx == MAGLEV_NONE || idx >= s->cur_n) {
		puts("-");
		return;
	}
	b = &s->cur_b[idx];
	printf("%.*s\n", (int)b->name_len, b->name);
}

static int cmd_owner(struct sim *s, int argc, char **argv)
{
	u32 slot;

	(void)argc;
	if (parse_u32(s, argv[1], UINT32_MAX, "slot", &slot))
		return -1;
	if (slot >= s->cur->size)
		return sim_fail(s, "slot %u out of range 0..%u", slot,
				s->cur->size - 1);
	print_owner(s, maglev_table_get(s->cur, slot));
	return 0;
}

static int cmd_lookup(struct sim *s, int argc, char **argv)
{
	u32 h;

	(void)argc;
	h = hsiphash(argv[1], strlen(argv[1]), &s->hkey);
	print_owner(s, maglev_lookup(s->cur, h));
	return 0;
}

/*
 * Parse "a.b.c.d", "a.b.c.d:port", "v6", "[v6]" or "[v6]:port" into the key
 * bytes the scheduler hashes.  Return the key length, or -1.
 */
static int parse_addr(struct sim *s, const char *str, u8 *key)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *addr = buf, *port = NULL, *colon;
	size_t len = strlen(str);
	u32 alen, p;
	int af;

	if (len >= sizeof(buf))
		return sim_fail(s, "bad address '%s'", str);
	memcpy(buf, str, len + 1);
	colon = strchr(buf, ':');
	if (buf[0] == '[') {
		char *end = strchr(buf, ']');

		if (!end)
			return sim_fail(s, "bad address '%s': no ']'", str);
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return sim_fail(s, "bad address '%s'", str);
		*end = '\0';
		addr = buf + 1;
		af = AF_INET6;
	} else if (colon && strchr(colon + 1, ':')) {
		/* two colons or more: IPv6, which cannot carry a port */
		af = AF_INET6;
	} else {
		if (colon) {
			*colon = '\0';
			port = colon + 1;
		}
		af = AF_INET;
	}
	alen = af == AF_INET ? 4 : 16;
	if (inet_pton(af, addr, key) != 1)
		return sim_fail(s, "bad %s address '%s'",
				af == AF_INET ? "IPv4" : "IPv6", addr);
	if (!port)
		return (int)alen;
	if (parse_u32(s, port, 65535, "port", &p))
		return -1;
	key[alen] = (u8)(p >> 8);
	key[alen + 1] = (u8)p;
	return (int)alen + 2;
}

static int cmd_lookup_addr(struct sim *s, int argc, char **argv)
{
	u8 key[18] = { 0 };
	__be16 port;
	u32 h;
	int len;

	(void)argc;
	len = parse_addr(s, argv[1], key);
	if (len < 0)
		return -1;
	/* the scheduler's own helpers, as ip_vs_maglev_schedule() calls them */
	memcpy(&port, key + (len & ~3), sizeof(port));
	if (len == 4)
		h = maglev_hash_ip4(key, &s->hkey);
	else if (len == 6)
		h = maglev_hash_ip4_port(key, port, &s->hkey);
	else if (len == 16)
		h = maglev_hash_ip6(key, &s->hkey);
	else
		h = maglev_hash_ip6_port(key, port, &s->hkey);
	print_owner(s, maglev_lookup(s->cur, h));
	return 0;
}

/* One line per backend in name order: slots, or everything with @all. */
static void print_backends(const struct sim *s, bool all)
{
	const struct maglev_backend *b;
	u32 i;

	for (i = 0; i < s->cur_n; i++) {
		b = &s->cur_b[i];
		if (all)
			printf("%.*s weight=%u drain=%u turns=%u slots=%u\n",
			       (int)b->name_len, b->name, b->weight,
			       b->drain_weight, b->turns, b->slots);
		else
			printf("%.*s %u\n", (int)b->name_len, b->name,
			       b->slots);
	}
}

static int cmd_counts(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	print_backends(s, false);
	return 0;
}

static int cmd_digest(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%016llx\n", s->cur->digest);
	return 0;
}

static int cmd_show(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	print_backends(s, true);
	return 0;
}

static int cmd_stats(struct sim *s, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("size=%u next_size=%u key=%08x backends=%u filled=%u fills=%u probes=%llu width=%u bytes=%zu scratch=%zu\n",
	       s->cur->size, s->next_size, maglev_key_fingerprint(s->key),
	       s->cur_n,
	       s->cur->nr_filled, s->cur_st.fills, s->cur_st.probes,
	       s->cur->width, maglev_table_bytes(s->cur->size, s->cur_n),
	       maglev_work_bytes(s->cur->size, s->cur_n));
	return 0;
}

struct sim_cmd {
	const char *name;
	int min_args;		/* words after the command */
	int max_args;
	int (*fn)(struct sim *s, int argc, char **argv);
};

/* --- rings (ALGO ring64, ALGO ring32) ------------------------------------ */

static const char *const sim_ring_names[] = {
	[RING_64] = "ring64",
	[RING_32] = "ring32",
};

static void sim_ring_free(struct sim *s)
{
	if (s->ring) {
		ring_set_free(s->ring);
		free(s->ring);
		s->ring = NULL;
	}
}

/* A new ring with the current backend set, or NULL with s->why set. */
static struct ring_set *sim_ring_from_set(struct sim *s, enum ring_kind kind,
					  u32 v)
{
	const struct ring_set *old = s->ring;
	u32 n = old ? old->nr_nodes : s->nr_node, i, k = 0;
	struct ring_node *nodes;
	struct ring_set *r;
	u32 *w;
	int ret;

	r = calloc(1, sizeof(*r));
	nodes = calloc(n ? n : 1, sizeof(*nodes));
	w = calloc(n ? n : 1, sizeof(*w));
	if (!r || !nodes || !w) {
		sim_fail(s, "out of memory");
		goto fail;
	}
	if (old) {
		for (i = 0; i < old->nr_slots; i++) {
			if (!old->node[i].name_len)
				continue;
			nodes[k] = old->node[i];
			w[k++] = old->weight[i];
		}
	} else {
		for (i = 0; i < n; i++) {
			memcpy(nodes[i].name, s->node[i].name,
			       s->node[i].name_len);
			nodes[i].name_len = s->node[i].name_len;
			w[i] = s->node[i].weight;
		}
	}
	ring_set_init(r, kind, v);
	ret = ring_set_add_many(r, nodes, w, n);
	if (ret) {
		sim_fail(s, "cannot build the ring (error %d)", ret);
		goto fail;
	}
	free(nodes);
	free(w);
	return r;
fail:
	free(r);
	free(nodes);
	free(w);
	return NULL;
}

/*
 * ALGO maglev after a ring: rebuild the table from the ring's set.  A
 * backend that was draining before and still has weight 0 keeps draining.
 */
static int sim_ring_to_maglev(struct sim *s)
{
	const struct ring_set *r = s->ring;
	struct maglev_backend *node;
	u32 i, k = 0;
	long idx;

	if (r->nr_nodes > MAGLEV_MAX_BACKENDS)
		return sim_fail(s, "more than %d backends",
				MAGLEV_MAX_BACKENDS);
	node = calloc(r->nr_nodes ? r->nr_nodes : 1, sizeof(*node));
	if (!node)
		return sim_fail(s, "out of memory");
	for (i = 0; i < r->nr_slots; i++) {
		if (!r->node[i].name_len)
			continue;
		memcpy(node[k].name, r->node[i].name, r->node[i].name_len);
		node[k].name_len = r->node[i].name_len;
		node[k].weight = r->weight[i];
		idx = sim_find(s, node[k].name, node[k].name_len);
		if (idx >= 0 && !node[k].weight && !s->node[idx].weight)
			node[k].drain_weight = s->node[idx].drain_weight;
		k++;
	}
	sort(node, k, sizeof(*node), maglev_backend_cmp, NULL);
	if (sim_commit(s, node, k))
		return -1;
	sim_ring_free(s);
	return 0;
}

static int cmd_algo(struct sim *s, int argc, char **argv)
{
	enum ring_kind kind;
	struct ring_set *r;
	u32 v = 1;

	if (!strcasecmp(argv[1], "maglev")) {
		if (argc > 2)
			return sim_fail(s, "ALGO maglev takes no argument");
		return s->ring ? sim_ring_to_maglev(s) : 0;
	}
	if (!strcasecmp(argv[1], "ring64")) {
		if (argc < 3)
			return sim_fail(s, "ALGO ring64: missing points per server (1..%d)",
					RING_POINTS_MAX);
		if (parse_u32(s, argv[2], UINT32_MAX, "points per server", &v))
			return -1;
		if (v < 1 || v > RING_POINTS_MAX)
			return sim_fail(s, "points per server '%s' out of range 1..%d",
					argv[2], RING_POINTS_MAX);
		kind = RING_64;
	} else if (!strcasecmp(argv[1], "ring32")) {
		if (argc > 2)
			return sim_fail(s, "ALGO ring32 takes no argument");
		kind = RING_32;
	} else {
		return sim_fail(s, "unknown algorithm '%s' (maglev, ring64 <V>, ring32)",
				argv[1]);
	}
	r = sim_ring_from_set(s, kind, v);
	if (!r)
		return -1;
	sim_ring_free(s);
	s->ring = r;
	return 0;
}

static int cmd_position(struct sim *s, int argc, char **argv)
{
	(void)argc;
	if (!s->ring)
		return sim_fail(s, "POSITION needs ALGO ring64 or ALGO ring32");
	printf("%llu\n", (unsigned long long)ring_position(s->ring->kind,
			 argv[1], strlen(argv[1])));
	return 0;
}

static int cmd_ring_add_node(struct sim *s, int argc, char **argv)
{
	char name[MAGLEV_NAME_MAX + 1];
	u32 len, weight = 1;
	int ret;

	len = parse_name(s, argv[1], name);
	if (!len)
		return -1;
	if (argc > 2 && parse_u32(s, argv[2], MAGLEV_WEIGHT_MAX, "weight",
				  &weight))
		return -1;
	ret = ring_set_add(s->ring, name, len, weight);
	if (ret == -EEXIST)
		return sim_fail(s, "backend '%s' already exists", name);
	if (ret)
		return sim_fail(s, "cannot add '%s' (error %d)", name, ret);
	return 0;
}

static int cmd_ring_remove_node(struct sim *s, int argc, char **argv)
{
	char name[MAGLEV_NAME_MAX + 1];
	u32 len;

	(void)argc;
	len = parse_name(s, argv[1], name);
	if (!len)
		return -1;
	if (ring_set_remove(s->ring, name, len))
		return sim_fail(s, "no backend '%s'", name);
	return 0;
}

static int cmd_ring_lookup(struct sim *s, int argc, char **argv)
{
	const struct ring_node *n;
	u32 i;

	(void)argc;
	i = ring_set_lookup(s->ring, argv[1], strlen(argv[1]));
	if (i == RING_NONE) {
		puts("-");
		return 0;
	}
	n = &s->ring->node[i];
	printf("%.*s\n", (int)n->name_len, n->name);
	return 0;
}

/* Run a command with a ring: the ring's own handler, an error or as usual. */
static int sim_ring_cmd(struct sim *s, const struct sim_cmd *c, int argc,
			char **argv)
{
	static const char *const table_only[] = {
		"WEIGHT", "REBUILD", "CHURN", "OWNER", "LOOKUP_ADDR", "COUNTS",
		"DIGEST", "SHOW", "STATS",
	};
	size_t i;

	if (!strcmp(c->name, "ADD_NODE"))
		return cmd_ring_add_node(s, argc, argv);
	if (!strcmp(c->name, "REMOVE_NODE"))
		return cmd_ring_remove_node(s, argc, argv);
	if (!strcmp(c->name, "LOOKUP"))
		return cmd_ring_lookup(s, argc, argv);
	for (i = 0; i < ARRAY_SIZE(table_only); i++)
		if (!strcmp(c->name, table_only[i]))
			return sim_fail(s, "%s needs ALGO maglev (now %s)",
					c->name,
					sim_ring_names[s->ring->kind]);
	return c->fn(s, argc, argv);
}

static const struct sim_cmd sim_cmds[] = {
	{ "ADD_NODE",		1, 2, cmd_add_node },
	{ "REMOVE_NODE",	1, 1, cmd_remove_node },
	{ "WEIGHT",		2, 2, cmd_weight },
	{ "REBUILD",		0, 0, cmd_rebuild },
	{ "SIZE",		1, 1, cmd_size },
	{ "KEY",		1, 1, cmd_key },
	{ "FINGERPRINT",	0, 0, cmd_fingerprint },
	{ "CHURN",		0, 0, cmd_churn },
	{ "OWNER",		1, 1, cmd_owner },
	{ "LOOKUP",		1, 1, cmd_lookup },
	{ "LOOKUP_ADDR",	1, 1, cmd_lookup_addr },
	{ "COUNTS",		0, 0, cmd_counts },
	{ "DIGEST",		0, 0, cmd_digest },
	{ "SHOW",		0, 0, cmd_show },
	{ "STATS",		0, 0, cmd_stats },
	{ "ALGO",		1, 2, cmd_algo },
	{ "POSITION",		1, 1, cmd_position },
};

/* Run one line; 0 if it worked or was blank, -1 with s->why set if not. */
static int sim_line(struct sim *s, char *line)
{
	static const char ws[] = " \t\r\n\v\f";
	char *argv[SIM_MAX_ARGS + 1], *save = NULL, *w;
	const struct sim_cmd *c = NULL;
	int argc = 0;
	size_t i;

	line += strspn(line, ws);
	if (!*line || *line == '#')
		return 0;
	for (w = strtok_r(line, ws, &save); w; w = strtok_r(NULL, ws, &save)) {
		if (argc == SIM_MAX_ARGS)
			return sim_fail(s, "too many arguments");
		argv[argc++] = w;
	}
	argv[argc] = NULL;

	for (i = 0; i < ARRAY_SIZE(sim_cmds); i++) {
		if (!strcasecmp(argv[0], sim_cmds[i].name)) {
			c = &sim_cmds[i];
			break;
		}
	}
	if (!c)
		return sim_fail(s, "unknown command '%s'", argv[0]);
	if (argc - 1 < c->min_args)
		return sim_fail(s, "%s: missing argument", c->name);
	if (argc - 1 > c->max_args)
		return sim_fail(s, "%s: too many arguments", c->name);
	if (s->ring)
		return sim_ring_cmd(s, c, argc, argv);
	return c->fn(s, argc, argv);
}

int main(int argc, char **argv)
{
	struct sim s = { .next_size = MAGLEV_SIZE_DEFAULT };
	unsigned long lineno = 0;
	size_t cap = 0;
	char *line = NULL;
	ssize_t len;
	int failed = 0;

	if (argc == 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		fputs(sim_help, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "-32")) {
		maglev_hsiphash_32 = true;
	} else if (argc > 1) {
		fprintf(stderr, "maglev-sim: unknown argument '%s'\n%s",
			argv[1], sim_help);
		return 2;
	}

	/* start with an empty table, so that every question has an answer */
	if (sim_rebuild(&s, NULL, 0)) {
		fprintf(stderr, "maglev-sim: %s\n", s.why);
		return 2;
	}

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		if (strlen(line) != (size_t)len)
			sim_fail(&s, "NUL byte in line");
		else if (!sim_line(&s, line))
			continue;
		/* keep stdout and stderr in order when they share a file */
		fflush(stdout);
		fprintf(stderr, "error: line %lu: %s\n", lineno, s.why);
		failed = 1;
	}
	free(line);
	free(s.node);
	free(s.cur);
	free(s.cur_b);
	sim_ring_free(&s);
	if (fflush(stdout) || ferror(stdout)) {
		perror("maglev-sim: stdout");
		return 2;
	}
	return failed;
}
