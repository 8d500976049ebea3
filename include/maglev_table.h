/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_table.h - Maglev lookup table (Eisenbud et al., NSDI 2016).
 *
 * The algorithm lives in maglev_table.c and compiles unchanged into the
 * kernel module and into userspace programs (maglev-sim, the host tests, the
 * benchmark).  It never allocates: the caller supplies the table and a
 * scratch area sized by maglev_table_bytes() and maglev_work_bytes(), so the
 * kernel can build a new table off to the side and publish it with one
 * pointer swap.
 *
 * Specification (normative; another implementation following it produces
 * bit-identical tables and digests):
 *
 * h32(s) is 32-bit FNV-1a: h = 2166136261; for each byte c: h ^= c,
 * h *= 16777619 (mod 2^32).  mix(x) is murmur3's fmix64 (mod 2^64):
 * x ^= x >> 33; x *= 0xff51afd7ed558ccd; x ^= x >> 33;
 * x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33.
 *
 * Backend names: a backend is a name of 1..MAGLEV_NAME_MAX bytes and a
 * weight 0..2147483647 (INT_MAX, the range IPVS accepts).  The IPVS
 * scheduler names a destination "A.B.C.D:port" or "[IPv6]:port", port in
 * decimal without leading zeros, the address exactly as glibc's inet_ntop()
 * prints it (see maglev_format_name()): IPv6 in lower-case hex without
 * leading zeros, the longest run of two or more zero groups replaced by
 * "::" (the first of equally long runs), and the last 32 bits in dotted
 * decimal only for ::a.b.c.d (IPv4-compatible: the first 96 bits zero and
 * the 16 bits after them not) and ::ffff:a.b.c.d (IPv4-mapped: the first
 * 80 bits zero, the next 16 bits all ones).  ISATAP and other embedded
 * IPv4 addresses are printed in hex like any other address.
 *
 * Table size: M is a prime from MAGLEV_SIZE_MIN to MAGLEV_SIZE_MAX, and
 * at least the number N of backends (all of them, weight 0 included, so
 * that draining never changes M).  The default is MAGLEV_SIZE_DEFAULT =
 * 65537, the paper's.  M never changes with N: a configured prime below N
 * is replaced by the smallest prime >= N (maglev_fit_size(); the callers
 * apply it, and maglev_build() refuses N > M), which is the only way N
 * changes M.  N <= MAGLEV_MAX_BACKENDS = 65535, and the smallest prime
 * >= 65535 is 65537, so the fitted size is always valid.
 * For a table size M:
 *   offset = h32(name "|offset") % M
 *   skip   = h32(name "|skip") % (M - 1) + 1
 * and its preference sequence is offset + j * skip (mod M), j = 0, 1, ...
 *
 * Effective weight: in the primary fill a backend's effective weight is
 * its weight, or its drain_weight when it is draining (weight 0 and
 * drain_weight > 0, see "Draining"); in the secondary fill of a draining
 * build it is its weight (0 for the draining backends).  A backend whose
 * effective weight is 0 takes no turns in that fill.
 *
 * Turns (the weight scaling rule, exact integer arithmetic): let w_i be the
 * effective weights, P the number of positive ones, g their gcd and
 * q_i = w_i / g.  If T = sum(q_i) <= M, backend i takes q_i turns per
 * round: weights whose reduced sum fits in the table are used exactly.
 * Otherwise backend i takes max(floor(q_i * (M - P) / T), 1) turns (0 for
 * q_i = 0; the product is below 2^54 and T below 2^47, so 64 bits hold
 * both; with P >= M every positive backend takes one turn).  Then a round
 * never exceeds M slots (sum <= M - P + P), it leaves at most 2P slots to
 * the next round, and every positive weight gets at least one slot:
 * weights of any size up to INT_MAX are scaled into the table's range with
 * their ratios kept as exactly as M slots allow.
 *
 * Fill: backends take their turns in plain byte order of their names
 * (memcmp, a shorter name first when it is a prefix), round after round; a
 * backend with t turns claims t slots in a row.  On each turn the backend
 * walks its preference sequence from where it stopped and claims the first
 * empty slot.  The fill stops when every slot is owned.  If no backend has
 * a turn, the table is empty: every slot is owned by none.  A table is
 * thus either fully owned or entirely empty; draining keeps this (below).
 *
 * Draining: a backend with weight 0 and a non-zero drain_weight keeps the
 * slots it would own with weight drain_weight (the primary fill), except
 * that each of them is handed to the owner of the same slot in the table
 * built without the draining backends (the secondary fill: the same
 * backends, offsets and skips, the draining ones with no turns).  So only
 * keys that mapped to a draining backend move, and restoring drain_weight
 * gives back the previous table exactly.  A primary fill that is empty is
 * the table (no secondary fill).  The secondary fill is empty only when
 * every backend with a turn in the primary fill is draining; then every
 * slot was a draining backend's and the table is empty, never partly
 * owned.
 *
 * Digest (64 bits):
 *   d = mix(0x6d61676c65760001 ^ M); d = mix(d ^ N);
 *   for each backend in name order: d = maglev_hash(name, name_len, d);
 *   for each group of four slots (the last one padded with 0xffff):
 *     d = mix(d ^ (s0 | s1 << 16 | s2 << 32 | s3 << 48))
 * where s is the owner's index in name order, 0xffff for none.
 *
 * maglev_hash(data, len, seed), used by the digest, for len bytes:
 *   h = seed ^ (len * 0x9e3779b97f4a7c15 mod 2^64);
 *   for i = 0, 8, 16, ... while i < len (once, with i = 0, for len 0):
 *     c = the bytes i..i+7 as a little-endian number, the bytes past
 *         the end taken as 0;
 *     h = mix(h ^ c)
 * and the result is h.
 *
 * Client key hash (lookups; keyed so that clients cannot aim at a
 * server): hash = hsiphash(key bytes), a 32-bit number: the kernel's
 * hsiphash (lib/siphash.c, the PRF it keeps for hash tables, which ip_vs_mh
 * uses too) under the 128-bit hash key K: 16 bytes, written as 32 hex
 * digits K[0] first.  The default K is 16 zero bytes: a fleet agrees out of
 * the box, and anyone can compute the choices; a fleet sets its own secret
 * K.  Tables do not depend on K.  hsiphash has two forms:
 *   64-bit kernels: SipHash-1-3 (Aumasson and Bernstein's SipHash with one
 *     compression and three finalization rounds) with k0 = K[0..7] and
 *     k1 = K[8..15], each read as a little-endian number; the hash is the
 *     low 32 bits of its 64-bit output (v0 ^ v1 ^ v2 ^ v3).
 *   32-bit kernels: HalfSipHash-1-3 (the same on 32-bit words, 64-bit key,
 *     32-bit output v1 ^ v3) with k0 = K[0..3] and k1 = K[8..11], each
 *     read as a little-endian number: the low halves of the 64-bit form's
 *     k0 and k1, which is what hsiphash_key_t's unsigned longs keep.
 * The two forms give different hashes: load balancers agree on the tables
 * whatever their word size, on client choices only with the same one.
 * maglev-sim computes the 64-bit form, with -32 the 32-bit one.
 *
 * The IPVS scheduler's client key is a string of whole 32-bit words, the
 * address and the port as they travel (network byte order), the port
 * padded with two zero bytes; an IPv6 address is never folded:
 *   IPv4                 address                        4 bytes
 *   IPv4 with flag-2     address, port, 00 00           8 bytes
 *   IPv6                 address                       16 bytes
 *   IPv6 with flag-2     address, port, 00 00          20 bytes
 * It calls the kernel's typed helpers on the words w0, w1, ... (bytes
 * 4i..4i+3 read as a little-endian number, on any CPU):
 * hsiphash_1u32(w0), hsiphash_2u32(w0, w1), hsiphash_4u32(w0, .., w3), and
 * for the 20 bytes (there is no 5-word helper) hsiphash() of them; each
 * equals hsiphash() of the key's bytes.
 *
 * Fallback rehash i (i = 1, 2, ...) of a client hash h (maglev_rehash()):
 *   fmix32(h ^ (i * 0x9e3779b9 mod 2^32)), with murmur3's fmix32 (mod
 *   2^32): x ^= x >> 16; x *= 0x85ebca6b; x ^= x >> 13; x *= 0xc2b2ae35;
 *   x ^= x >> 16.  A bijection of h for each i.
 *
 * Key fingerprint (shown instead of K): the upper 32 bits of SipHash-2-4
 * (the reference algorithm, 64-bit output, the kernel's siphash()) of the
 * 24 ASCII bytes "ip_vs_maglev fingerprint" under the whole key K, k0 =
 * K[0..7] and k1 = K[8..15] little-endian, as 8 lower-case hex digits, on
 * every word size.  The default key's fingerprint is printed by maglev-sim.
 *
 * Churn between a previous and a new table: the number of slots whose
 * owner, compared by name with "none" an owner of its own, differs.  A slot
 * that gains or loses its owner counts, so going from a non-empty table to
 * an empty one (the last backend removed, or the last weight set to 0 with
 * no draining weight left) counts every slot: M.  With no previous table
 * every owned slot of the new one counts; when the size changed, every slot
 * of the new table counts (M), unless both tables are empty (0).
 *
 * Lookup: slot = (h * M) >> 32 (64-bit product) for the 32-bit client
 * key hash h, and the slot's owner.
 *
 * Packed slots (the in-memory layout; not part of the digest, which is
 * over the owners): a table of N >= 2 backends stores each slot's owner
 * index in exactly W = ceil(log2 N) bits, 1 to 16, as one little-endian bit
 * string: slot s is bits s * W .. s * W + W - 1, bit k being bit k % 8 of
 * byte k / 8.  A lookup loads the 4 bytes from byte s * W / 8 on (one
 * unaligned little-endian load: s * W % 8 + W <= 23 bits fit), shifts by
 * s * W % 8 and masks; so the slot bytes are floor((M - 1) * W / 8) + 4,
 * the bytes past the last slot's zero.  A table of one backend (W = 0) and
 * an empty table store no slots: 4 bytes that every lookup reads, 0 (the
 * only backend) or 0xffff (MAGLEV_NONE) with a mask of 0xffff and a
 * multiplier of 0, so the lookup stays the same branch-free
 * le32(byte + ((h * mul) >> 32) * W / 8) >> (bit % 8) & mask.
 */
#ifndef _MAGLEV_TABLE_H
#define _MAGLEV_TABLE_H

#include "maglev_compat.h"

#define MAGLEV_NAME_MAX		64
#define MAGLEV_SIZE_MIN		251
#define MAGLEV_SIZE_MAX		5000011
/* The paper's size; every node of a fleet agrees on it unconfigured. */
#define MAGLEV_SIZE_DEFAULT	65537
/* IPVS weights, 0..INT_MAX; "Turns" above scales them into the table. */
#define MAGLEV_WEIGHT_MAX	2147483647U
/* Backend indices fit 16 bits; 0xffff means "no backend". */
#define MAGLEV_MAX_BACKENDS	65535
#define MAGLEV_NONE		0xffffU
/*
 * The build gives the CPU up (maglev_cond_resched()) at least every
 * MAGLEV_RESCHED_STEPS steps of work, a step being one probe of a fill or
 * one slot of a loop over the table; one claim of the fill's tail counts
 * its up to MAGLEV_TAIL_SLOTS steps at once, so no stretch exceeds
 * MAGLEV_RESCHED_STEPS + MAGLEV_TAIL_SLOTS steps.  About 0.2 ms.  The
 * functions that loop over a table (maglev_fill(), maglev_build(),
 * maglev_digest(), maglev_churn()) also end at a reschedule point, so that
 * the stretches of two calls in a row do not add up.
 */
#define MAGLEV_RESCHED_STEPS	65536U
#define MAGLEV_TAIL_SLOTS	128U

/*
 * Longest name maglev_format_name() writes, without the terminating NUL:
 * "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535" (the dotted forms
 * start with "::" and are shorter).
 */
#define MAGLEV_ADDR_NAME_MAX	47

/**
 * struct maglev_backend - one backend (real server) of a table build
 * @name: backend name, not NUL-terminated; "A.B.C.D:port" or "[IPv6]:port"
 *	in the IPVS scheduler
 * @name_len: length of @name in bytes, 1..MAGLEV_NAME_MAX
 * @weight: 0..MAGLEV_WEIGHT_MAX; 0 means no slots (drained, or added
 *	with weight 0)
 * @drain_weight: 0..MAGLEV_WEIGHT_MAX; with @weight 0, the weight whose
 *	slots the backend hands over to the others (see "Draining" above);
 *	0 for none
 * @priv: caller's cookie, carried along when maglev_build() sorts backends
 * @offset: start of the preference sequence (output of maglev_build(),
 *	input of maglev_fill())
 * @skip: stride of the preference sequence, 1..M-1 (as @offset)
 * @turns: slots claimed per round (as @offset); 0 for no slots
 * @slots: number of slots the backend owns in the built table (output)
 */
struct maglev_backend {
	char name[MAGLEV_NAME_MAX];
	u32 name_len;
	u32 weight;
	u32 drain_weight;
	void *priv;
	u32 offset;
	u32 skip;
	u32 turns;
	u32 slots;
};

/**
 * struct maglev_table - a built lookup table
 * @digest: 64-bit digest of M, the backend names and the slot owners
 * @size: number of slots M (a prime)
 * @nr_backends: number of backends the slot entries index (in name order)
 * @nr_filled: slots that have an owner: @size, or 0 for an empty table
 * @mul: the lookup's multiplier: @size, or 0 when @width is 0
 * @width: bits per slot W, ceil(log2 N) from 1 to 16; 0 for a table of one
 *	backend or an empty one, which store no slots
 * @mask: (1 << @width) - 1; 0xffff when @width is 0
 * @byte: the packed slots ("Packed slots" above), maglev_slot_bytes()
 *	bytes
 *
 * Build it with maglev_build() into maglev_table_bytes(M, N) bytes; read
 * it with maglev_lookup() and maglev_table_get().
 */
struct maglev_table {
	u64 digest;
	u32 size;
	u32 nr_backends;
	u32 nr_filled;
	u32 mul;
	u16 width;
	u16 mask;
	u8 byte[];
};

/**
 * struct maglev_stats - optional figures from a build
 * @probes: preference-sequence positions examined by the fill(s)
 * @fills: number of fills run (2 when a backend is draining)
 */
struct maglev_stats {
	u64 probes;
	u32 fills;
};

bool maglev_is_prime(u32 n);
int maglev_check_size(u32 size, const char **why);
u32 maglev_fit_size(u32 size, u32 nr_backends);
u32 maglev_slot_width(u32 nr_backends);
size_t maglev_slot_bytes(u32 size, u32 nr_backends);
size_t maglev_table_bytes(u32 size, u32 nr_backends);
size_t maglev_work_bytes(u32 size, u32 nr_backends);
size_t maglev_churn_bytes(u32 on);

u64 maglev_hash(const void *data, size_t len, u64 seed);
u32 maglev_rehash(u32 hash, u32 i);
int maglev_format_name(char *buf, size_t len, const void *addr,
		       u32 addr_len, u16 port);

int maglev_prepare(struct maglev_backend *b, u32 n, u32 size,
		   const char **why);
u32 maglev_fill(u16 *slot, u32 size, const struct maglev_backend *b, u32 n,
		void *work, struct maglev_stats *st);
int maglev_build(struct maglev_table *t, u32 size, struct maglev_backend *b,
		 u32 n, void *work, struct maglev_stats *st, const char **why);
u64 maglev_digest(const struct maglev_table *t,
		  const struct maglev_backend *b, u32 n);
u32 maglev_churn(const struct maglev_table *old,
		 const struct maglev_backend *ob, u32 on,
		 const struct maglev_table *new,
		 const struct maglev_backend *nb, u32 nn, void *work);

/* Bytes of a hash key, and the message its fingerprint is computed over. */
#define MAGLEV_KEY_BYTES	16
#define MAGLEV_KEY_FP_MSG	"ip_vs_maglev fingerprint"

/**
 * maglev_key_hash() - the client key hash of a byte string
 * @data: key bytes
 * @len: number of bytes
 * @key: the hash key (maglev_hkey_from_bytes())
 *
 * The scheduler's own keys go through maglev_hash_ip4() and its siblings,
 * which give the same hash for their byte strings without a buffer.
 *
 * Return: hsiphash() of @data under @key.
 */
static inline u32 maglev_key_hash(const void *data, size_t len,
				  const hsiphash_key_t *key)
{
	return hsiphash(data, len, key);
}

/**
 * maglev_hash_ip4() - client hash of an IPv4 address
 * @addr: the 4-byte address, network byte order
 * @key: the hash key
 *
 * Return: hsiphash_1u32() of the address's little-endian load: the hash of
 * its 4 bytes.
 */
static inline u32 maglev_hash_ip4(const void *addr, const hsiphash_key_t *key)
{
	return hsiphash_1u32(maglev_le32(addr), key);
}

/**
 * maglev_hash_ip4_port() - client hash of an IPv4 address and port
 * @addr: the 4-byte address, network byte order
 * @port: the port, network byte order
 * @key: the hash key
 *
 * Return: hsiphash_2u32() of the address and the port padded with zero
 * bytes: the hash of address, port, 00 00.
 */
static inline u32 maglev_hash_ip4_port(const void *addr, __be16 port,
				       const hsiphash_key_t *key)
{
	return hsiphash_2u32(maglev_le32(addr), maglev_le16((const u8 *)&port),
			     key);
}

/**
 * maglev_hash_ip6() - client hash of an IPv6 address
 * @addr: the 16-byte address, network byte order
 * @key: the hash key
 *
 * Return: hsiphash_4u32() of the address's four words: the hash of its 16
 * bytes, not folded.
 */
static inline u32 maglev_hash_ip6(const void *addr, const hsiphash_key_t *key)
{
	const u8 *a = addr;

	return hsiphash_4u32(maglev_le32(a), maglev_le32(a + 4),
			     maglev_le32(a + 8), maglev_le32(a + 12), key);
}

/**
 * maglev_hash_ip6_port() - client hash of an IPv6 address and port
 * @addr: the 16-byte address, network byte order
 * @port: the port, network byte order
 * @key: the hash key
 *
 * The kernel has no 5-word helper: hsiphash() of the 20 bytes.  They are
 * stored as hsiphash loads them, in 8-byte words (the last one's 4 bytes
 * past the key are not hashed), so that every load is forwarded from one
 * store.
 *
 * Return: the hash of address, port, 00 00.
 */
static inline u32 maglev_hash_ip6_port(const void *addr, __be16 port,
				       const hsiphash_key_t *key)
{
	struct {
		u8 addr[16];
		__le64 tail;
	} k;

	memcpy(k.addr, addr, sizeof(k.addr));
	k.tail = cpu_to_le64(maglev_le16((const u8 *)&port));
	return hsiphash(&k, sizeof(k.addr) + 4, key);
}

/**
 * maglev_key_fingerprint() - a short public fingerprint of a hash key
 * @key: the whole 128-bit hash key (maglev_key_from_bytes())
 *
 * Return: the upper 32 bits of SipHash-2-4 of %MAGLEV_KEY_FP_MSG under
 * @key; it tells keys apart without revealing them.
 */
static inline u32 maglev_key_fingerprint(const siphash_key_t *key)
{
	static const char msg[] = MAGLEV_KEY_FP_MSG;

	return siphash(msg, sizeof(msg) - 1, key) >> 32;
}

/**
 * maglev_key_from_bytes() - the whole hash key from its 16 bytes
 * @key: the key to set
 * @b: %MAGLEV_KEY_BYTES bytes, as written in hex
 */
static inline void maglev_key_from_bytes(siphash_key_t *key, const u8 *b)
{
	key->key[0] = maglev_le64(b);
	key->key[1] = maglev_le64(b + 8);
}

/**
 * maglev_hkey_from_bytes() - the client hash key from its 16 bytes
 * @key: the key to set
 * @b: %MAGLEV_KEY_BYTES bytes, as written in hex
 *
 * k0 and k1 as maglev_key_from_bytes() reads them; a 32-bit kernel's
 * unsigned long keeps their low 32 bits, K[0..3] and K[8..11].
 */
static inline void maglev_hkey_from_bytes(hsiphash_key_t *key, const u8 *b)
{
	key->key[0] = (unsigned long)maglev_le64(b);
	key->key[1] = (unsigned long)maglev_le64(b + 8);
}

/**
 * maglev_slot_of() - slot a key hash falls in
 * @t: table
 * @hash: 32-bit client key hash (maglev_key_hash())
 *
 * Return: (@hash * M) >> 32, a slot index below M.
 */
static inline u32 maglev_slot_of(const struct maglev_table *t, u32 hash)
{
	return (u32)(((u64)hash * t->size) >> 32);
}

/**
 * maglev_lookup() - backend index for a client hash
 * @t: table
 * @hash: 32-bit client key hash (maglev_key_hash())
 *
 * Branch-free: a multiply for the slot and one for its bit, one unaligned
 * load, a shift and a mask.  A table without slot storage (one backend, or
 * empty) has a multiplier and a width of 0, so every hash reads its one
 * word.
 *
 * Return: the owner of slot maglev_slot_of(@t, @hash), its index in name
 * order, or %MAGLEV_NONE if the table is empty (@t->nr_filled == 0).
 */
static inline u32 maglev_lookup(const struct maglev_table *t, u32 hash)
{
	u32 bit = (u32)(((u64)hash * t->mul) >> 32) * t->width;

	return maglev_le32(t->byte + bit / 8) >> (bit % 8) & t->mask;
}

/**
 * maglev_table_get() - owner of a slot
 * @t: table
 * @slot: slot index, below @t->size
 *
 * Return: the owner's index in name order, or %MAGLEV_NONE if the table
 * is empty.
 */
static inline u32 maglev_table_get(const struct maglev_table *t, u32 slot)
{
	u32 bit = slot * t->width;

	return maglev_le32(t->byte + bit / 8) >> (bit % 8) & t->mask;
}

#endif /* _MAGLEV_TABLE_H */
