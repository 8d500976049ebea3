// SPDX-License-Identifier: GPL-2.0
/*
 * Maglev lookup table: preference sequences, the round-robin fill,
 * weights, draining, churn, digest and the key hash.
 *
 * The algorithm only.  It compiles unchanged into ip_vs_maglev.ko and into
 * the userspace tools through maglev_compat.h, and it never allocates: the
 * caller passes the table and a scratch area.  The specification is in
 * include/maglev_table.h.
 */
#include "maglev_table.h"

#define FNV32_BASIS	2166136261U
#define FNV32_PRIME	16777619U
#define GOLDEN64	0x9e3779b97f4a7c15ULL
#define DIGEST_TAG	0x6d61676c65760001ULL	/* "maglev" v1 */

/*
 * Once this few slots are left empty, a backend's next slot is found by
 * computing, for every empty slot, its distance along the backend's
 * preference sequence instead of walking the sequence (see
 * maglev_fill_tail()).
 * Walking costs about M / empty probes per claim, the shortcut one
 * multiply and one modulo per empty slot; 128 is near the break-even point
 * for M = 65537 and harmless for other sizes.
 */
#define TAIL_SLOTS	128

/* In the kernel, the fill calls cond_resched() after this many slots. */
#define MAGLEV_RESCHED_SLOTS	4096U

/* Per-backend fill state, in the scratch area. */
struct maglev_cursor {
	u32 pos;	/* next candidate slot of the preference sequence */
	u32 skip;
	u32 inv;	/* skip^-1 mod M, 0 until the tail needs it */
	u32 turns;
};

static void maglev_set_why(const char **why, const char *reason)
{
	if (why)
		*why = reason;
}

/**
 * maglev_is_prime() - primality test for table sizes
 * @n: number to test
 *
 * Trial division; a table size is at most a few million.
 *
 * Return: true if @n is prime.
 */
bool maglev_is_prime(u32 n)
{
	u32 d;

	if (n < 2)
		return false;
	if (n < 4)
		return true;
	if (!(n % 2) || !(n % 3))
		return false;
	for (d = 5; d <= n / d; d += 6)
		if (!(n % d) || !(n % (d + 2)))
			return false;
	return true;
}

/**
 * maglev_check_size() - validate a table size
 * @size: proposed number of slots M
 * @why: if not NULL, set to a reason on error
 *
 * Return: 0 if @size is a prime from %MAGLEV_SIZE_MIN to %MAGLEV_SIZE_MAX,
 * -EINVAL otherwise.  Sizes are never rounded.
 */
int maglev_check_size(u32 size, const char **why)
{
	if (size < MAGLEV_SIZE_MIN || size > MAGLEV_SIZE_MAX) {
		maglev_set_why(why, "table size must be between 251 and 5000011");
		return -EINVAL;
	}
	if (!maglev_is_prime(size)) {
		maglev_set_why(why, "table size must be a prime number");
		return -EINVAL;
	}
	return 0;
}

/**
 * maglev_fit_size() - table size for a number of backends
 * @size: configured table size M
 * @nr_backends: number of backends N, weight 0 included
 *
 * A table needs at least one slot per backend.  Callers pass the size they
 * are about to allocate and build through this; maglev_build() itself takes
 * the size it is given and refuses N > M.  All backends count, not only
 * those with a positive weight, so draining a backend never changes M.
 *
 * Return: @size if @nr_backends <= @size (or @nr_backends is above
 * %MAGLEV_MAX_BACKENDS, which maglev_build() refuses anyway), otherwise the
 * smallest prime >= @nr_backends: at most 65537, so a valid table size
 * whenever @size is.
 */
u32 maglev_fit_size(u32 size, u32 nr_backends)
{
	u32 m;

	if (nr_backends <= size || nr_backends > MAGLEV_MAX_BACKENDS)
		return size;
	for (m = nr_backends; !maglev_is_prime(m); m++)
		;
	return m;
}

/**
 * maglev_table_bytes() - memory needed for a table
 * @size: number of slots M
 *
 * Return: bytes for a &struct maglev_table with @size slots.
 */
size_t maglev_table_bytes(u32 size)
{
	return sizeof(struct maglev_table) + (size_t)size * sizeof(u16);
}

/*
 * Scratch layout: the draining fill's table, rounded up to 8 bytes, then
 * the occupancy bitmap, the cursors and the tail's empty-slot list.
 */
static size_t maglev_alt_table_bytes(u32 size)
{
	return (maglev_table_bytes(size) + 7) & ~(size_t)7;
}

static size_t maglev_bitmap_bytes(u32 size)
{
	return ((size_t)size + 63) / 64 * sizeof(u64);
}

/**
 * maglev_work_bytes() - scratch memory needed by maglev_build()
 * @size: number of slots M
 * @nr_backends: number of backends N
 *
 * The scratch area holds a second table (for draining), an occupancy bitmap,
 * one cursor per backend and the tail's list of empty slots.  It is also
 * enough for maglev_churn() against a table of up to @nr_backends backends.
 *
 * Return: bytes of scratch memory, suitably aligned for u64.
 */
size_t maglev_work_bytes(u32 size, u32 nr_backends)
{
	return maglev_alt_table_bytes(size) + maglev_bitmap_bytes(size) +
	       (size_t)nr_backends * sizeof(struct maglev_cursor) +
	       TAIL_SLOTS * sizeof(u32);
}

static u32 maglev_fnv1a32(u32 h, const void *data, size_t len)
{
	const u8 *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV32_PRIME;
	}
	return h;
}

/**
 * maglev_h32() - 32-bit FNV-1a
 * @data: bytes to hash
 * @len: number of bytes
 *
 * Return: FNV-1a of @data (offset basis 2166136261, prime 16777619).
 */
u32 maglev_h32(const void *data, size_t len)
{
	return maglev_fnv1a32(FNV32_BASIS, data, len);
}

/* murmur3's fmix64: a bijection with full avalanche. */
static inline u64 maglev_mix64(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * The n <= 8 bytes at p as a little-endian number, read in 4-, 2- and 1-byte
 * pieces from the front.  Keys are put together the same way (a 4-byte
 * address, then a 2-byte port), so no load straddles two stores, which would
 * defeat store-to-load forwarding.
 */
static inline u64 maglev_load_le(const u8 *p, size_t n)
{
	u64 v = 0;
	u32 shift = 0;

	if (n == 8)
		return maglev_le64(p);
	if (n & 4) {
		v = maglev_le32(p);
		p += 4;
		shift = 32;
	}
	if (n & 2) {
		v |= (u64)maglev_le16(p) << shift;
		p += 2;
		shift += 16;
	}
	if (n & 1)
		v |= (u64)p[0] << shift;
	return v;
}

/**
 * maglev_hash() - 64-bit key hash used for lookups
 * @data: key bytes (an IPVS scheduler key is the 4- or 16-byte address in
 *	network byte order, followed by the 2-byte port in network byte order
 *	when ports are hashed)
 * @len: number of key bytes
 * @seed: 64-bit seed; LB nodes that must agree use the same seed
 *
 * h = seed ^ (len * 0x9e3779b97f4a7c15); then for each 8-byte chunk of the
 * key, read little-endian and zero-padded (one zero chunk for an empty key),
 * h = fmix64(h ^ chunk).  Every key byte goes through the mixer whole; an
 * address and a port are never folded or added together.
 *
 * Return: the hash.
 */
u64 maglev_hash(const void *data, size_t len, u64 seed)
{
	const u8 *p = data;
	u64 h = seed ^ ((u64)len * GOLDEN64);
	size_t i = 0;

	do {
		size_t n = len - i < 8 ? len - i : 8;

		h = maglev_mix64(h ^ maglev_load_le(p + i, n));
		i += 8;
	} while (i < len);
	return h;
}

/**
 * maglev_rehash() - the i-th fallback hash of a client key hash
 * @hash: the 32-bit client key hash (maglev_key_hash())
 * @i: 1, 2, ...
 *
 * Return: fmix32(@hash ^ @i * 0x9e3779b9) (murmur3's 32-bit finalizer), a
 * bijection of @hash for each @i; as hard to predict as @hash itself.
 */
u32 maglev_rehash(u32 hash, u32 i)
{
	u32 x = hash ^ (i * 0x9e3779b9U);

	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return x;
}

/* Append @v in decimal (@hex false) or lower-case hex, no leading zeros. */
static char *maglev_put_num(char *p, u32 v, bool hex)
{
	static const char digits[] = "0123456789abcdef";
	u32 base = hex ? 16 : 10;
	char tmp[10];
	int n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *maglev_put_ipv4(char *p, const u8 *a)
{
	int i;

	for (i = 0; i < 4; i++) {
		if (i)
			*p++ = '.';
		p = maglev_put_num(p, a[i], false);
	}
	return p;
}

/* RFC 5952 text of an IPv6 address, exactly as glibc's inet_ntop(). */
static char *maglev_put_ipv6(char *p, const u8 *a)
{
	int best = -1, best_len = 0, cur = -1, cur_len = 0, i;
	u32 w[8];

	for (i = 0; i < 8; i++)
		w[i] = (u32)a[2 * i] << 8 | a[2 * i + 1];
	/* The longest run of zero groups, the first one on ties. */
	for (i = 0; i < 8; i++) {
		if (w[i]) {
			cur = -1;
			continue;
		}
		if (cur < 0) {
			cur = i;
			cur_len = 0;
		}
		if (++cur_len > best_len) {
			best = cur;
			best_len = cur_len;
		}
	}
	if (best_len < 2)
		best = -1;

	for (i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				*p++ = ':';
			continue;
		}
		if (i)
			*p++ = ':';
		/* ::a.b.c.d (IPv4-compatible) and ::ffff:a.b.c.d (mapped) */
		if (i == 6 && best == 0 &&
		    (best_len == 6 || (best_len == 5 && w[5] == 0xffff)))
			return maglev_put_ipv4(p, a + 12);
		p = maglev_put_num(p, w[i], true);
	}
	if (best >= 0 && best + best_len == 8)
		*p++ = ':';
	return p;
}

/**
 * maglev_format_name() - backend name of an address and a port
 * @buf: output buffer
 * @len: size of @buf; %MAGLEV_ADDR_NAME_MAX + 1 is always enough
 * @addr: 4-byte IPv4 or 16-byte IPv6 address in network byte order
 * @addr_len: 4 or 16
 * @port: port number (host byte order)
 *
 * Writes "A.B.C.D:port" or "[IPv6]:port" and a terminating NUL, the port
 * in decimal and the address exactly as glibc's inet_ntop() prints it, so
 * that names taken from "ipvsadm -Ln" match the kernel's byte for byte:
 * RFC 5952 compression (the longest run of two or more zero groups, the
 * first of equal runs, lower-case hex without leading zeros), and dotted
 * decimal for the last 32 bits only in ::a.b.c.d and ::ffff:a.b.c.d.
 * The one formatter for the module and the userspace tools.
 *
 * Return: length of the name without the NUL, or -EINVAL if @addr_len is
 * neither 4 nor 16, -ENOSPC if @buf is too small (then @buf holds an empty
 * string if @len > 0).
 */
int maglev_format_name(char *buf, size_t len, const void *addr,
		       u32 addr_len, u16 port)
{
	char tmp[MAGLEV_ADDR_NAME_MAX + 1], *p = tmp;

	if (addr_len == 4) {
		p = maglev_put_ipv4(p, addr);
	} else if (addr_len == 16) {
		*p++ = '[';
		p = maglev_put_ipv6(p, addr);
		*p++ = ']';
	} else {
		if (len)
			buf[0] = '\0';
		return -EINVAL;
	}
	*p++ = ':';
	p = maglev_put_num(p, port, false);
	if ((size_t)(p - tmp) >= len) {
		if (len)
			buf[0] = '\0';
		return -ENOSPC;
	}
	memcpy(buf, tmp, p - tmp);
	buf[p - tmp] = '\0';
	return (int)(p - tmp);
}

static int maglev_name_cmp(const struct maglev_backend *a,
			   const struct maglev_backend *b)
{
	u32 n = min(a->name_len, b->name_len);
	int r = memcmp(a->name, b->name, n);

	if (r)
		return r;
	if (a->name_len == b->name_len)
		return 0;
	return a->name_len < b->name_len ? -1 : 1;
}

static int maglev_backend_cmp(const void *a, const void *b)
{
	return maglev_name_cmp(a, b);
}

static u32 maglev_gcd32(u32 a, u32 b)
{
	while (b) {
		u32 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Turns per round from the weights (the "Turns" rule of maglev_table.h).
 * With @drain set, a draining backend (weight 0, drain_weight > 0) counts
 * with its drain_weight.
 */
static void maglev_compute_turns(struct maglev_backend *b, u32 n, u32 size,
				 bool drain)
{
	u32 g = 0, pos = 0, i;
	u64 total = 0;

	for (i = 0; i < n; i++) {
		u32 w = b[i].weight;

		if (!w && drain)
			w = b[i].drain_weight;
		b[i].turns = w;
		if (w) {
			g = maglev_gcd32(g, w);
			pos++;
		}
	}
	if (!pos)
		return;
	for (i = 0; i < n; i++) {
		b[i].turns /= g;
		total += b[i].turns;
	}
	if (total <= size)
		return;
	/*
	 * One round would not fit in the table: scale every backend's turns
	 * by (M - P) / total, rounding down but keeping at least one turn.
	 * Then sum(turns) <= M - P + P = M, a round fills nearly the whole
	 * table, and the shares stay as close to the weights as a table of M
	 * slots allows.  total < 65535 * 2^31 and turns * (M - P) < 2^54:
	 * 64 bits suffice, and the quotient is below M.
	 */
	for (i = 0; i < n; i++) {
		u64 t;

		if (!b[i].turns)
			continue;
		t = maglev_div64((u64)b[i].turns * (size - min(size, pos)),
				 total);
		b[i].turns = t ? (u32)t : 1;
	}
}

/**
 * maglev_prepare() - validate and sort backends, derive offset/skip/turns
 * @b: backends; sorted in place by name
 * @n: number of backends
 * @size: table size M
 * @why: if not NULL, set to a reason on error
 *
 * Turns are those of the primary fill: a draining backend counts with its
 * drain_weight.
 *
 * Return: 0, or -EINVAL (bad size, name or weight), -E2BIG (more backends
 * than slots or than %MAGLEV_MAX_BACKENDS; maglev_fit_size() gives a size
 * that fits), -EEXIST (duplicate name).
 */
int maglev_prepare(struct maglev_backend *b, u32 n, u32 size,
		   const char **why)
{
	u32 i;
	int err;

	err = maglev_check_size(size, why);
	if (err)
		return err;
	if (n > MAGLEV_MAX_BACKENDS) {
		maglev_set_why(why, "too many backends (at most 65535)");
		return -E2BIG;
	}
	if (n > size) {
		maglev_set_why(why, "more backends than table slots");
		return -E2BIG;
	}
	for (i = 0; i < n; i++) {
		if (!b[i].name_len || b[i].name_len > MAGLEV_NAME_MAX) {
			maglev_set_why(why, "backend name must be 1 to 64 bytes");
			return -EINVAL;
		}
		if (b[i].weight > MAGLEV_WEIGHT_MAX ||
		    b[i].drain_weight > MAGLEV_WEIGHT_MAX) {
			maglev_set_why(why,
				       "backend weight must be 0 to 2147483647");
			return -EINVAL;
		}
	}

	maglev_sort(b, n, sizeof(*b), maglev_backend_cmp);

	for (i = 0; i < n; i++) {
		u32 h = maglev_fnv1a32(FNV32_BASIS, b[i].name, b[i].name_len);

		if (i && !maglev_name_cmp(&b[i - 1], &b[i])) {
			maglev_set_why(why, "duplicate backend name");
			return -EEXIST;
		}
		b[i].offset = maglev_fnv1a32(h, "|offset", 7) % size;
		b[i].skip = maglev_fnv1a32(h, "|skip", 5) % (size - 1) + 1;
		b[i].slots = 0;
	}
	maglev_compute_turns(b, n, size, true);
	return 0;
}

static inline bool maglev_test_bit(const u64 *bm, u32 bit)
{
	return bm[bit / 64] >> (bit % 64) & 1;
}

static inline void maglev_set_bit(u64 *bm, u32 bit)
{
	bm[bit / 64] |= 1ULL << (bit % 64);
}

/* skip^-1 mod size, for a prime size and 0 < skip < size. */
static u32 maglev_inverse_mod(u32 skip, u32 size)
{
	s64 t = 0, nt = 1;
	u32 r = size, nr = skip;

	while (nr) {
		u32 q = r / nr, tmp = r - q * nr;
		s64 tt = t - (s64)q * nt;

		t = nt;
		nt = tt;
		r = nr;
		nr = tmp;
	}
	if (t < 0)
		t += size;
	return (u32)t;
}

/*
 * The tail of the fill.  Every slot a backend's walk has passed is owned
 * and stays owned, so its next slot is the empty slot e nearest along its
 * sequence, the one with the smallest (e - pos) * skip^-1 mod M.  This picks
 * exactly the slot the walk would reach, without the walk.  The slot leaves
 * the list of @nr_emptyp empty slots.
 */
static u32 maglev_fill_tail(struct maglev_cursor *c, u32 *empty,
			    u32 *nr_emptyp, u32 size)
{
	u32 best = 0, best_d = U32_MAX, nr_empty = (*nr_emptyp)--, i, e;

	if (!c->inv)
		c->inv = maglev_inverse_mod(c->skip, size);
	for (i = 0; i < nr_empty; i++) {
		u32 delta = empty[i] >= c->pos ? empty[i] - c->pos :
			    empty[i] + size - c->pos;
		u32 d = maglev_mod64((u64)delta * c->inv, size);

		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	e = empty[best];
	empty[best] = empty[nr_empty - 1];
	return e;
}

static u32 maglev_collect_empty(const u64 *bm, u32 size, u32 *empty)
{
	u32 s, k = 0;

	for (s = 0; s < size; s++)
		if (!maglev_test_bit(bm, s))
			empty[k++] = s;
	return k;
}

/* Walk a backend's preference sequence to its first empty slot. */
static inline u32 maglev_walk(const u64 *bm, const struct maglev_cursor *c,
			      u32 size, u64 *probes)
{
	u32 pos = c->pos;

	while (maglev_test_bit(bm, pos)) {
		pos += c->skip;
		if (pos >= size)
			pos -= size;
		(*probes)++;
	}
	(*probes)++;
	return pos;
}

/*
 * The next number of empty slots at which the fill stops to reschedule or
 * to start the tail: MAGLEV_RESCHED_SLOTS claims later, or TAIL_SLOTS; 0
 * once in the tail.
 */
static u32 maglev_fill_mark(u32 left)
{
	if (left <= TAIL_SLOTS)
		return 0;
	if (left - TAIL_SLOTS <= MAGLEV_RESCHED_SLOTS)
		return TAIL_SLOTS;
	return left - MAGLEV_RESCHED_SLOTS;
}

/**
 * maglev_fill() - the Maglev round-robin fill
 * @t: table to fill, maglev_table_bytes(@size) bytes
 * @size: table size M, a prime
 * @b: backends in name order, with offset, skip and turns set
 * @n: number of backends
 * @work: scratch area of maglev_work_bytes(@size, @n) bytes
 * @st: if not NULL, the number of probes is added to it
 *
 * Round after round, each backend in array order takes its turns; on each
 * turn it claims the first empty slot of its preference sequence from where
 * it stopped.  This is the normative fill of seed 000 (with turns), made
 * faster with an occupancy bitmap and an exact shortcut for the last empty
 * slots; the result is identical to the plain fill.  Sets @t's size,
 * nr_backends, nr_filled and slots; not the digest.  With no turns at all
 * the table is empty (every slot %MAGLEV_NONE).
 *
 * Context: in the kernel, calls cond_resched() every %MAGLEV_RESCHED_SLOTS
 * slots (a table may have millions), so the caller must be able to sleep.
 */
void maglev_fill(struct maglev_table *t, u32 size,
		 const struct maglev_backend *b, u32 n, void *work,
		 struct maglev_stats *st)
{
	u64 *bm = (u64 *)((u8 *)work + maglev_alt_table_bytes(size));
	struct maglev_cursor *cur = (void *)((u8 *)bm + maglev_bitmap_bytes(size));
	u32 *empty = (u32 *)(cur + n);
	u32 left = size, mark, nr_empty = 0, i, k;
	bool any = false, bad = false, tail = false;
	u64 probes = 0;

	t->size = size;
	t->nr_backends = n;
	t->nr_filled = 0;
	t->reserved = 0;
	t->digest = 0;
	memset(bm, 0, maglev_bitmap_bytes(size));
	for (i = 0; i < n; i++) {
		cur[i].pos = b[i].offset;
		cur[i].skip = b[i].skip;
		cur[i].inv = 0;
		cur[i].turns = b[i].turns;
		if (b[i].turns)
			any = true;
		if (b[i].offset >= size || !b[i].skip || b[i].skip >= size)
			bad = true;
	}
	/* A composite size or a bad stride would leave slots unreachable. */
	if (WARN_ON_ONCE(bad || !maglev_is_prime(size)))
		any = false;
	if (!any) {
		memset(t->slot, 0xff, (size_t)size * sizeof(u16));
		return;
	}

	/*
	 * At every mark (each MAGLEV_RESCHED_SLOTS claims, then TAIL_SLOTS
	 * before the end) the fill gives the CPU up in the kernel, and at the
	 * last one it switches to the tail; one compare per claim.
	 */
	mark = maglev_fill_mark(left);
	for (;;) {
		for (i = 0; i < n; i++) {
			struct maglev_cursor *c = &cur[i];

			for (k = 0; k < c->turns; k++) {
				u32 pos;

				if (likely(!tail)) {
					pos = maglev_walk(bm, c, size, &probes);
				} else {
					probes += nr_empty;
					pos = maglev_fill_tail(c, empty,
							       &nr_empty, size);
				}
				maglev_set_bit(bm, pos);
				t->slot[pos] = (u16)i;
				pos += c->skip;
				c->pos = pos >= size ? pos - size : pos;
				if (!--left)
					goto done;
				if (likely(left != mark))
					continue;
				maglev_cond_resched();
				mark = maglev_fill_mark(left);
				if (!mark && !tail) {
					tail = true;
					nr_empty = maglev_collect_empty(bm, size, empty);
				}
			}
		}
	}
done:
	t->nr_filled = size;
	if (st) {
		st->probes += probes;
		st->fills++;
	}
}

/**
 * maglev_digest() - 64-bit digest of a table
 * @t: table
 * @b: its backends, in name order
 * @n: number of backends
 *
 * Computed as described in include/maglev_table.h, so that the kernel and
 * maglev-sim print the same value for the same backend set.
 *
 * Return: the digest.
 */
u64 maglev_digest(const struct maglev_table *t,
		  const struct maglev_backend *b, u32 n)
{
	u64 d = maglev_mix64(DIGEST_TAG ^ t->size);
	u32 i, s;

	d = maglev_mix64(d ^ n);
	for (i = 0; i < n; i++)
		d = maglev_hash(b[i].name, b[i].name_len, d);
	for (s = 0; s < t->size; s += 4) {
		u64 w = 0;
		u32 j;

		for (j = 0; j < 4; j++) {
			u64 v = s + j < t->size ? t->slot[s + j] : 0xffff;

			w |= v << (16 * j);
		}
		d = maglev_mix64(d ^ w);
	}
	return d;
}

static bool maglev_is_draining(const struct maglev_backend *b)
{
	return !b->weight && b->drain_weight;
}

/**
 * maglev_build() - build a complete table from a set of backends
 * @t: table to build, maglev_table_bytes(@size) bytes
 * @size: table size M
 * @b: backends in any order; sorted in place by name, and offset, skip,
 *	turns and slots are set
 * @n: number of backends, 0 for an empty table
 * @work: scratch area of maglev_work_bytes(@size, @n) bytes
 * @st: if not NULL, fill statistics are added to it
 * @why: if not NULL, set to a reason on error
 *
 * When a backend is draining, a second fill without the draining backends
 * decides who takes over each of their slots.
 *
 * Return: 0 on success; on error a negative errno from maglev_prepare(),
 * and @t is left untouched.
 */
int maglev_build(struct maglev_table *t, u32 size, struct maglev_backend *b,
		 u32 n, void *work, struct maglev_stats *st, const char **why)
{
	bool drain = false;
	u32 i, s;
	int err;

	err = maglev_prepare(b, n, size, why);
	if (err)
		return err;

	maglev_fill(t, size, b, n, work, st);

	for (i = 0; i < n; i++)
		if (maglev_is_draining(&b[i]))
			drain = true;
	if (drain && t->nr_filled) {
		struct maglev_table *alt = work;

		maglev_compute_turns(b, n, size, false);
		maglev_fill(alt, size, b, n, work, st);
		for (s = 0; s < size; s++)
			if (maglev_is_draining(&b[t->slot[s]]))
				t->slot[s] = alt->slot[s];
		maglev_compute_turns(b, n, size, true);
	}

	/* The draining backends' slots may have found no other owner. */
	t->nr_filled = 0;
	for (s = 0; s < size; s++) {
		if (t->slot[s] != MAGLEV_NONE) {
			b[t->slot[s]].slots++;
			t->nr_filled++;
		}
	}
	t->digest = maglev_digest(t, b, n);
	return 0;
}

/**
 * maglev_churn() - slots whose owner changed between two builds
 * @old: previous table, or NULL
 * @ob: its backends in name order
 * @on: number of @ob
 * @new: new table
 * @nb: its backends in name order
 * @nn: number of @nb
 * @work: scratch area of at least maglev_work_bytes(@new->size, @on) bytes
 *
 * Owners are compared by name, not by index, and "none" is an owner of
 * its own: a slot that gains or loses its owner counts, so a change to an
 * empty table (the last backend removed) counts all M slots.  Without a
 * previous table every owned slot of @new counts; with a different table
 * size every slot of @new counts, unless both tables are empty.
 *
 * Return: number of slots whose owner changed.
 */
u32 maglev_churn(const struct maglev_table *old,
		 const struct maglev_backend *ob, u32 on,
		 const struct maglev_table *new,
		 const struct maglev_backend *nb, u32 nn, void *work)
{
	u16 *map = work;
	u32 i, j = 0, s, churn = 0;

	if (!old)
		return new->nr_filled;
	if (old->size != new->size)
		return old->nr_filled || new->nr_filled ? new->size : 0;

	/* Both lists are sorted: map old indices to new ones in one pass. */
	for (i = 0; i < on; i++) {
		int r = 1;

		while (j < nn && (r = maglev_name_cmp(&nb[j], &ob[i])) < 0)
			j++;
		map[i] = (j < nn && !r) ? (u16)j : MAGLEV_NONE;
	}
	for (s = 0; s < new->size; s++) {
		u16 o = old->slot[s], n = new->slot[s];

		/* An owner that is gone differs from any new owner or none. */
		if (o == MAGLEV_NONE)
			churn += n != MAGLEV_NONE;
		else
			churn += map[o] == MAGLEV_NONE || map[o] != n;
	}
	return churn;
}
