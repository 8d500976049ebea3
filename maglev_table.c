// SPDX-License-Identifier: GPL-2.0
/*
 * The Maglev lookup table: preference sequences, weights, the fill,
 * draining, the packed slots, digest and churn, as docs/specification.md
 * specifies them.  The algorithm only: it compiles unchanged into the
 * module and into the userspace tools (maglev_compat.h), and it never
 * allocates; the caller passes the table and a scratch area.
 */
#include "maglev_table.h"

#define FNV32_BASIS	2166136261U
#define FNV32_PRIME	16777619U
#define GOLDEN64	0x9e3779b97f4a7c15ULL
#define DIGEST_TAG	0x6d61676c65760001ULL	/* "maglev" v1 */

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
VISIBLE_IF_KUNIT bool maglev_is_prime(u32 n)
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
 * Return: @size if @nr_backends <= @size (or @nr_backends is above
 * %MAGLEV_MAX_BACKENDS, which maglev_build() refuses anyway); otherwise the
 * smallest prime >= @nr_backends, a valid table size.
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

/*
 * W = ceil(log2 N) bits per slot, 0 for N <= 1; the 4-byte load of the last
 * slot ends the slot bytes, 4 for a table without slots.
 */
static size_t maglev_slot_bytes(u32 size, u32 nr_backends)
{
	u32 width = order_base_2(nr_backends);

	return width && size ? (size_t)(size - 1) * width / 8 + 4 : 4;
}

/**
 * maglev_table_bytes() - memory needed for a table
 * @size: number of slots M
 * @nr_backends: number of backends N, weight 0 included
 *
 * Enough for any table maglev_build() makes of @nr_backends backends,
 * the empty one included.
 *
 * Return: bytes for a &struct maglev_table with @size packed slots of
 * ceil(log2 @nr_backends) bits.
 */
size_t maglev_table_bytes(u32 size, u32 nr_backends)
{
	return sizeof(struct maglev_table) +
	       maglev_slot_bytes(size, nr_backends);
}

/*
 * Scratch layout: the fill's u16 per slot, rounded up to 8 bytes, then the
 * occupancy bitmap, the cursors and the tail's empty-slot list.
 */
static size_t maglev_slots_bytes(u32 size)
{
	return ((size_t)size * sizeof(u16) + 7) & ~(size_t)7;
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
 * Also enough for maglev_churn() against a table of up to @nr_backends
 * backends.
 *
 * Return: bytes of scratch memory, suitably aligned for u64.
 */
size_t maglev_work_bytes(u32 size, u32 nr_backends)
{
	return maglev_slots_bytes(size) + maglev_bitmap_bytes(size) +
	       (size_t)nr_backends * sizeof(struct maglev_cursor) +
	       MAGLEV_TAIL_SLOTS * sizeof(u32);
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

/**
 * maglev_hash() - 64-bit hash of a byte string (the digest's, for names)
 * @data: bytes
 * @len: number of bytes
 * @seed: 64-bit seed
 *
 * Return: the hash of docs/specification.md, "Digest".
 */
u64 maglev_hash(const void *data, size_t len, u64 seed)
{
	const u8 *p = data;
	u64 h = seed ^ ((u64)len * GOLDEN64);
	size_t i = 0, k;

	do {
		u64 c = 0;

		if (len - i >= 8)
			c = get_unaligned_le64(p + i);
		else
			for (k = len; k > i; k--)
				c = c << 8 | p[k - 1];
		h = maglev_mix64(h ^ c);
		i += 8;
	} while (i < len);
	return h;
}

/**
 * maglev_rehash() - the i-th fallback hash of a client key hash
 * @hash: the 32-bit client key hash
 * @i: 1, 2, ...
 *
 * Return: fmix32(@hash ^ @i * 0x9e3779b9), a bijection of @hash for each
 * @i; as hard to predict as @hash itself.
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

static char *maglev_put_ipv4(char *p, const u8 *a)
{
	return p + sprintf(p, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
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
		p += sprintf(p, "%x", w[i]);
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
 * Writes "A.B.C.D:port" or "[IPv6]:port" and a terminating NUL, the
 * address exactly as glibc's inet_ntop() prints it, so that names taken
 * from "ipvsadm -Ln" match the kernel's byte for byte (docs/specification.md,
 * "Backend names").
 *
 * Return: length of the name without the NUL, or -EINVAL if @addr_len is
 * neither 4 nor 16, -ENOSPC if @buf is too small (then @buf holds an empty
 * string if @len > 0).
 */
int maglev_format_name(char *buf, size_t len, const void *addr,
		       u32 addr_len, u16 port)
{
	char ip[MAGLEV_ADDR_NAME_MAX];
	int n = -EINVAL;

	if (addr_len == 4 || addr_len == 16) {
		*(addr_len == 4 ? maglev_put_ipv4(ip, addr) :
				  maglev_put_ipv6(ip, addr)) = '\0';
		n = snprintf(buf, len, addr_len == 4 ? "%s:%u" : "[%s]:%u",
			     ip, port);
		if ((size_t)n >= len)
			n = -ENOSPC;
	}
	if (n < 0 && len)
		buf[0] = '\0';
	return n;
}

/**
 * maglev_name_cmp() - the order of backend names
 * @a: a name, not NUL-terminated
 * @alen: its length
 * @b: another one
 * @blen: its length
 *
 * Plain byte order, a shorter name first when it is a prefix of the other.
 *
 * Return: <0, 0 or >0 as @a sorts before, equals or sorts after @b.
 */
int maglev_name_cmp(const char *a, u32 alen, const char *b, u32 blen)
{
	int r = memcmp(a, b, min(alen, blen));

	if (r || alen == blen)
		return r;
	return alen < blen ? -1 : 1;
}

/**
 * maglev_backend_cmp() - the name order of backends
 * @pa: a &struct maglev_backend
 * @pb: another one
 *
 * Return: maglev_name_cmp() of their names.
 */
int maglev_backend_cmp(const void *pa, const void *pb)
{
	const struct maglev_backend *a = pa, *b = pb;

	return maglev_name_cmp(a->name, a->name_len, b->name, b->name_len);
}

/*
 * Turns per round from the weights (docs/specification.md, "Turns").  With
 * @drain set, a draining backend counts with its drain_weight.
 */
static void maglev_compute_turns(struct maglev_backend *b, u32 n, u32 size,
				 bool drain)
{
	u32 g = 0, pos = 0, i;
	u64 total = 0;

	for (i = 0; i < n; i++) {
		u32 w = b[i].weight;

		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		if (!w && drain)
			w = b[i].drain_weight;
		b[i].turns = w;
		if (w) {
			g = gcd(g, w);
			pos++;
		}
	}
	if (!pos)
		return;
	for (i = 0; i < n; i++) {
		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		b[i].turns /= g;
		total += b[i].turns;
	}
	if (total <= size)
		return;
	/*
	 * One round would not fit: scale by (M - P) / total, keeping at least
	 * one turn, so that a round takes at most M slots.  64 bits hold the
	 * product (< 2^54) and the quotient is below M.
	 */
	for (i = 0; i < n; i++) {
		u64 t;

		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		if (!b[i].turns)
			continue;
		t = div64_u64((u64)b[i].turns * (size - min(size, pos)),
			      total);
		b[i].turns = t ? (u32)t : 1;
	}
}

/**
 * maglev_prepare() - validate backends, derive offset, skip and turns
 * @b: backends in name order (maglev_backend_cmp())
 * @n: number of backends
 * @size: table size M
 * @why: if not NULL, set to a reason on error
 *
 * Turns are those of the primary fill: a draining backend counts with its
 * drain_weight.
 *
 * Return: 0, or -EINVAL (bad size, name or weight, names out of order or
 * duplicate), -E2BIG (more backends than slots or than
 * %MAGLEV_MAX_BACKENDS; maglev_fit_size() gives a size that fits).
 */
VISIBLE_IF_KUNIT int maglev_prepare(struct maglev_backend *b, u32 n,
				    u32 size, const char **why)
{
	u32 i;
	int err, r;

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
		u32 h;

		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
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
		r = i ? maglev_backend_cmp(&b[i - 1], &b[i]) : -1;
		if (r >= 0) {
			maglev_set_why(why, r ? "backends not in name order" :
					    "duplicate backend name");
			return -EINVAL;
		}
		h = maglev_fnv1a32(FNV32_BASIS, b[i].name, b[i].name_len);
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

/* skip^-1 mod size, for a prime size and 0 < skip < size: skip^(size-2). */
static u32 maglev_inverse_mod(u32 skip, u32 size)
{
	u32 e = size - 2, r = 1, x = skip;

	for (; e; e >>= 1) {
		if (e & 1)
			div_u64_rem((u64)r * x, size, &r);
		div_u64_rem((u64)x * x, size, &x);
	}
	return r;
}

/*
 * The tail of the fill: the slot the walk would reach is the empty slot e
 * with the smallest (e - pos) * skip^-1 mod M.  It leaves the list of
 * @nr_emptyp empty slots.
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
		u32 d;

		div_u64_rem((u64)delta * c->inv, size, &d);
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

	for (s = 0; s < size; s++) {
		maglev_resched(s, MAGLEV_RESCHED_STEPS);
		if (!maglev_test_bit(bm, s))
			empty[k++] = s;
	}
	return k;
}

/*
 * Walk a backend's preference sequence to its first empty slot, with a
 * reschedule point every MAGLEV_RESCHED_STEPS probes of the fill.
 */
static inline u32 maglev_walk(const u64 *bm, const struct maglev_cursor *c,
			      u32 size, u64 *probes)
{
	u32 pos = c->pos;

	for (;;) {
		if (unlikely(!(++*probes % MAGLEV_RESCHED_STEPS)))
			cond_resched();
		if (!maglev_test_bit(bm, pos))
			return pos;
		pos += c->skip;
		if (pos >= size)
			pos -= size;
	}
}

/**
 * maglev_fill() - the Maglev round-robin fill
 * @slot: @size entries to fill, each a backend index or %MAGLEV_NONE
 * @size: table size M, a prime
 * @b: backends in name order, with offset, skip and turns set
 * @n: number of backends
 * @work: scratch area of maglev_work_bytes(@size, @n) bytes; @slot may be
 *	its start (maglev_build() does so): the fill uses only what follows
 *	the room for @size u16s
 * @st: if not NULL, the number of probes is added to it
 *
 * The fill of docs/specification.md, with an occupancy bitmap and an exact
 * shortcut for the last empty slots; the result is identical to the plain
 * fill.  With no turns at all the table is empty.
 *
 * Context: in the kernel, may sleep (cond_resched()).
 * Return: the number of slots filled: @size, or 0 for an empty table.
 */
VISIBLE_IF_KUNIT u32 maglev_fill(u16 *slot, u32 size,
				 const struct maglev_backend *b, u32 n,
				 void *work, struct maglev_stats *st)
{
	u64 *bm = (u64 *)((u8 *)work + maglev_slots_bytes(size));
	struct maglev_cursor *cur = (void *)((u8 *)bm + maglev_bitmap_bytes(size));
	u32 *empty = (u32 *)(cur + n);
	u32 left = size, nr_empty = 0, i, k;
	bool any = false, tail = false;
	u64 probes = 0;

	cond_resched();
	memset(bm, 0, maglev_bitmap_bytes(size));
	for (i = 0; i < n; i++) {
		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		cur[i].pos = b[i].offset;
		cur[i].skip = b[i].skip;
		cur[i].inv = 0;
		cur[i].turns = b[i].turns;
		any |= !!b[i].turns;
	}
	if (!any) {
		memset(slot, 0xff, (size_t)size * sizeof(u16));
		goto out;
	}

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
				slot[pos] = (u16)i;
				/* Branch-free: the wrap is a coin toss. */
				pos += c->skip;
				c->pos = pos - (size & -(u32)(pos >= size));
				if (!--left)
					goto done;
				if (unlikely(left == MAGLEV_TAIL_SLOTS)) {
					tail = true;
					nr_empty = maglev_collect_empty(bm, size,
									empty);
				}
			}
		}
	}
done:
	if (st) {
		st->probes += probes;
		st->fills++;
	}
out:
	cond_resched();
	return size - left;
}

/*
 * Set @t's fields for @size owners of @n backends, @filled of them owned
 * (@size or 0): the width, and for a table without slots its one word.
 */
static u32 maglev_pack_header(struct maglev_table *t, u32 size, u32 n,
			      u32 filled)
{
	u32 width = filled ? order_base_2(n) : 0;

	t->size = size;
	t->nr_backends = n;
	t->nr_filled = filled;
	t->width = (u16)width;
	t->mul = width ? size : 0;
	t->mask = (u16)((1U << width) - 1);
	if (!width) {
		/* One backend (index 0) or none: no slots, one word. */
		t->mask = 0xffff;
		put_unaligned_le32(filled ? 0 : MAGLEV_NONE, t->byte);
	}
	return width;
}

/* Appends W-bit values to a table's packed slots, 32 bits at a time. */
struct maglev_packer {
	u8 *p;
	u64 acc;
	u32 bits;
};

static inline void maglev_pack_put(struct maglev_packer *pk, u32 v, u32 width)
{
	pk->acc |= (u64)v << pk->bits;
	pk->bits += width;
	if (pk->bits >= 32) {
		put_unaligned_le32((u32)pk->acc, pk->p);
		pk->p += 4;
		pk->acc >>= 32;
		pk->bits -= 32;
	}
}

/* The bits left, then zeros to the end of the slot bytes. */
static void maglev_pack_end(struct maglev_packer *pk,
			    const struct maglev_table *t)
{
	const u8 *end = t->byte + maglev_slot_bytes(t->size, t->nr_backends);

	while (pk->p < end) {
		*pk->p++ = (u8)pk->acc;
		pk->acc >>= 8;
	}
}

/*
 * The last pass of a build over the @size owners in @slot: the digest, each
 * backend's slot count and the packed slots.  Four slots at a time, a
 * digest group, and the last, partial group one slot at a time.
 */
static void maglev_finish(struct maglev_table *t, const u16 *slot, u32 size,
			  struct maglev_backend *b, u32 n, u32 filled)
{
	u32 width = maglev_pack_header(t, size, n, filled);
	struct maglev_packer pk = { .p = t->byte };
	u32 i, s, j;
	u64 d = maglev_mix64(DIGEST_TAG ^ size);

	d = maglev_mix64(d ^ n);
	for (i = 0; i < n; i++) {
		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		d = maglev_hash(b[i].name, b[i].name_len, d);
	}
	for (s = 0; s + 4 <= size; s += 4) {
		u32 v0 = slot[s], v1 = slot[s + 1], v2 = slot[s + 2];
		u32 v3 = slot[s + 3];

		maglev_resched(s, MAGLEV_RESCHED_STEPS);
		d = maglev_mix64(d ^ ((u64)v0 | (u64)v1 << 16 | (u64)v2 << 32 |
				      (u64)v3 << 48));
		if (!filled)
			continue;
		b[v0].slots++;
		b[v1].slots++;
		b[v2].slots++;
		b[v3].slots++;
		/* Two slots a put: 2 W <= 32 bits join at most 31 pending. */
		if (width) {
			maglev_pack_put(&pk, v0 | v1 << width, 2 * width);
			maglev_pack_put(&pk, v2 | v3 << width, 2 * width);
		}
	}
	if (s < size) {
		u64 g = 0;

		for (j = 0; j < 4; j++) {
			u32 v = s + j < size ? slot[s + j] : MAGLEV_NONE;

			g |= (u64)v << (16 * j);
			if (!filled || s + j >= size)
				continue;
			b[v].slots++;
			if (width)
				maglev_pack_put(&pk, v, width);
		}
		d = maglev_mix64(d ^ g);
	}
	if (width)
		maglev_pack_end(&pk, t);
	t->digest = d;
}

static bool maglev_is_draining(const struct maglev_backend *b)
{
	return !b->weight && b->drain_weight;
}

/**
 * maglev_build() - build a complete table from a set of backends
 * @t: table to build, maglev_table_bytes(@size, @n) bytes
 * @size: table size M
 * @b: backends in name order (maglev_backend_cmp()); their offset, skip,
 *	turns and slots are set
 * @n: number of backends, 0 for an empty table
 * @work: scratch area of maglev_work_bytes(@size, @n) bytes
 * @st: if not NULL, fill statistics are added to it
 * @why: if not NULL, set to a reason on error
 *
 * The fill runs into the scratch area, 16 bits a slot, and the result is
 * packed into @t.  When a backend is draining, a second fill without the
 * draining backends decides who takes over each of their slots.
 *
 * Context: in the kernel, may sleep (cond_resched()).
 * Return: 0 on success; on error a negative errno from maglev_prepare(),
 * and @t is left untouched.
 */
int maglev_build(struct maglev_table *t, u32 size, struct maglev_backend *b,
		 u32 n, void *work, struct maglev_stats *st, const char **why)
{
	u32 filled, i, s;
	u16 *slot = work;
	bool drain = false;
	int err;

	err = maglev_prepare(b, n, size, why);
	if (err)
		return err;

	filled = maglev_fill(slot, size, b, n, work, st);
	for (i = 0; i < n; i++)
		if (maglev_is_draining(&b[i]))
			drain = true;
	if (drain && filled) {
		/*
		 * Park the primary fill in @t, run the secondary fill in the
		 * scratch area, and keep its owner only where the primary's
		 * is draining.  An empty secondary fill leaves every slot
		 * MAGLEV_NONE: then all of them were draining ones.  The
		 * last pass counts the slots again.
		 */
		maglev_finish(t, slot, size, b, n, filled);
		for (i = 0; i < n; i++)
			b[i].slots = 0;
		maglev_compute_turns(b, n, size, false);
		filled = maglev_fill(slot, size, b, n, work, st);
		for (s = 0; s < size; s++) {
			u32 o = maglev_table_get(t, s);

			maglev_resched(s, MAGLEV_RESCHED_STEPS);
			if (!maglev_is_draining(&b[o]))
				slot[s] = (u16)o;
		}
		maglev_compute_turns(b, n, size, true);
	}

	maglev_finish(t, slot, size, b, n, filled);
	cond_resched();
	return 0;
}

/**
 * maglev_churn_bytes() - scratch memory needed by maglev_churn()
 * @on: number of backends of the previous table
 *
 * maglev_churn() maps each backend of the previous table to its index in
 * the new one: a u16 each, whatever the table size.
 *
 * Return: bytes of scratch memory, at least one u16.
 */
size_t maglev_churn_bytes(u32 on)
{
	return (size_t)(on ? on : 1) * sizeof(u16);
}

/**
 * maglev_churn() - slots whose owner changed between two builds
 * @old: previous table, or NULL
 * @ob: its backends in name order
 * @on: number of @ob
 * @new: new table
 * @nb: its backends in name order
 * @nn: number of @nb
 * @work: scratch area of at least maglev_churn_bytes(@on) bytes
 *
 * Owners are compared by name, and "none" is an owner of its own: a
 * change to an empty table counts all M slots.  Without a previous table
 * every owned slot of @new counts; with another table size every slot of
 * @new counts, unless both tables are empty.
 *
 * Context: in the kernel, may sleep (cond_resched()).
 * Return: number of slots whose owner changed.
 */
u32 maglev_churn(const struct maglev_table *old,
		 const struct maglev_backend *ob, u32 on,
		 const struct maglev_table *new,
		 const struct maglev_backend *nb, u32 nn, void *work)
{
	u32 i, j = 0, s, churn = 0;
	u16 *map = work;

	if (!old)
		return new->nr_filled;
	/* Another size or an empty table: all slots, unless both are empty. */
	if (old->size != new->size || !old->nr_filled || !new->nr_filled)
		return old->nr_filled || new->nr_filled ? new->size : 0;

	/* Both lists are sorted: map old indices to new ones in one pass. */
	for (i = 0; i < on; i++) {
		int r = 1;

		maglev_resched(i, MAGLEV_RESCHED_BACKENDS);
		while (j < nn && (r = maglev_backend_cmp(&nb[j], &ob[i])) < 0)
			j++;
		map[i] = (j < nn && !r) ? (u16)j : MAGLEV_NONE;
	}
	for (s = 0; s < new->size; s++) {
		maglev_resched(s, MAGLEV_RESCHED_STEPS);
		/* An owner that is gone differs from any new owner. */
		churn += map[maglev_table_get(old, s)] !=
			 maglev_table_get(new, s);
	}
	cond_resched();
	return churn;
}
