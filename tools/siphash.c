// SPDX-License-Identifier: GPL-2.0
/*
 * siphash.c - SipHash for userspace builds of maglev_table.h users.
 *
 * It stands in for the kernel's lib/siphash.c, with the same interface
 * (tools/include/maglev_compat.h declares it) and the same functions:
 * - siphash(): SipHash-2-4 (Aumasson and Bernstein), two compression
 *   rounds, four finalization rounds, 64-bit output; k0 and k1 are
 *   key->key[0] and key->key[1].
 * - hsiphash() and hsiphash_1u32(), _2u32(), _4u32(): the kernel's
 *   "hsiphash".  On a 64-bit kernel it is SipHash-1-3 (one compression
 *   round, three finalization rounds) under the 128-bit key, its 32-bit
 *   result the low half of the 64-bit output (lib/siphash.c returns the
 *   u64 (v0 ^ v1) ^ (v2 ^ v3) as a u32).  On a 32-bit kernel it is
 *   HalfSipHash-1-3: 32-bit words, a 64-bit key (the two 32-bit longs of
 *   hsiphash_key_t), its 32-bit output v1 ^ v3.  hsiphash_key_t holds two
 *   u64 here; the 32-bit form uses their low 32 bits, as a 32-bit kernel's
 *   unsigned long keeps them.  maglev_hsiphash_32 picks the form (false:
 *   the 64-bit one).
 * Messages are read as little-endian words, whatever the host's byte
 * order.
 */
#include "maglev_compat.h"

bool maglev_hsiphash_32;

static inline u64 sip_rotl(u64 x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline u32 hsip_rotl(u32 x, unsigned int b)
{
	return (x << b) | (x >> (32 - b));
}

/* One SipRound: add, rotate, xor on the four state words. */
#define SIP_ROUND(v0, v1, v2, v3) do {					\
	(v0) += (v1); (v2) += (v3);					\
	(v1) = sip_rotl((v1), 13) ^ (v0);				\
	(v3) = sip_rotl((v3), 16) ^ (v2);				\
	(v0) = sip_rotl((v0), 32);					\
	(v2) += (v1); (v0) += (v3);					\
	(v1) = sip_rotl((v1), 17) ^ (v2);				\
	(v3) = sip_rotl((v3), 21) ^ (v0);				\
	(v2) = sip_rotl((v2), 32);					\
} while (0)

/* HalfSipHash's round: the same shape on 32-bit words, other rotations. */
#define HSIP_ROUND(v0, v1, v2, v3) do {					\
	(v0) += (v1); (v2) += (v3);					\
	(v1) = hsip_rotl((v1), 5) ^ (v0);				\
	(v3) = hsip_rotl((v3), 8) ^ (v2);				\
	(v0) = hsip_rotl((v0), 16);					\
	(v2) += (v1); (v0) += (v3);					\
	(v1) = hsip_rotl((v1), 13) ^ (v2);				\
	(v3) = hsip_rotl((v3), 7) ^ (v0);				\
	(v2) = hsip_rotl((v2), 16);					\
} while (0)

#define SIP_INIT(k0, k1)						\
	u64 v0 = 0x736f6d6570736575ULL ^ (k0);				\
	u64 v1 = 0x646f72616e646f6dULL ^ (k1);				\
	u64 v2 = 0x6c7967656e657261ULL ^ (k0);				\
	u64 v3 = 0x7465646279746573ULL ^ (k1)

#define HSIP_INIT(k0, k1)						\
	u32 v0 = 0 ^ (u32)(k0);						\
	u32 v1 = 0 ^ (u32)(k1);						\
	u32 v2 = 0x6c796765U ^ (u32)(k0);				\
	u32 v3 = 0x74656462U ^ (u32)(k1)

/* The last 0..7 bytes of a message, little-endian: 4, 2, 1 at a time. */
static inline u64 sip_tail(const u8 *p, size_t left)
{
	size_t at = 0;
	u64 b = 0;

	if (left & 4) {
		b = get_unaligned_le32(p);
		at = 4;
	}
	if (left & 2) {
		b |= (u64)get_unaligned_le16(p + at) << (8 * at);
		at += 2;
	}
	if (left & 1)
		b |= (u64)p[at] << (8 * at);
	return b;
}

u64 siphash(const void *data, size_t len, const siphash_key_t *key)
{
	const u8 *p = data;
	const u8 *end = p + (len & ~(size_t)7);
	u64 m, b = (u64)len << 56;
	SIP_INIT(key->key[0], key->key[1]);

	/* full 8-byte words: one unaligned little-endian load each */
	for (; p != end; p += 8) {
		m = get_unaligned_le64(p);
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	b |= sip_tail(p, len & 7);
	v3 ^= b;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;

	v2 ^= 0xff;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-1-3's last block and finalization; the low 32 bits, as u32. */
#define SIP13_FINISH(b) do {						\
	v3 ^= (b);							\
	SIP_ROUND(v0, v1, v2, v3);					\
	v0 ^= (b);							\
	v2 ^= 0xff;							\
	SIP_ROUND(v0, v1, v2, v3);					\
	SIP_ROUND(v0, v1, v2, v3);					\
	SIP_ROUND(v0, v1, v2, v3);					\
	return (u32)((v0 ^ v1) ^ (v2 ^ v3));				\
} while (0)

/* One compression round of a message word. */
#define SIP13_WORD(m) do {						\
	v3 ^= (m);							\
	SIP_ROUND(v0, v1, v2, v3);					\
	v0 ^= (m);							\
} while (0)

#define HSIP13_FINISH(b) do {						\
	v3 ^= (b);							\
	HSIP_ROUND(v0, v1, v2, v3);					\
	v0 ^= (b);							\
	v2 ^= 0xff;							\
	HSIP_ROUND(v0, v1, v2, v3);					\
	HSIP_ROUND(v0, v1, v2, v3);					\
	HSIP_ROUND(v0, v1, v2, v3);					\
	return v1 ^ v3;							\
} while (0)

#define HSIP13_WORD(m) do {						\
	v3 ^= (m);							\
	HSIP_ROUND(v0, v1, v2, v3);					\
	v0 ^= (m);							\
} while (0)

/* SipHash-1-3, 32-bit result: hsiphash() of a 64-bit kernel. */
static u32 sip13(const u8 *p, size_t len, const hsiphash_key_t *key)
{
	const u8 *end = p + (len & ~(size_t)7);
	u64 m, b = (u64)len << 56;
	SIP_INIT(key->key[0], key->key[1]);

	for (; p != end; p += 8) {
		m = get_unaligned_le64(p);
		SIP13_WORD(m);
	}
	b |= sip_tail(p, len & 7);
	SIP13_FINISH(b);
}

/* HalfSipHash-1-3: hsiphash() of a 32-bit kernel. */
static u32 hsip13(const u8 *p, size_t len, const hsiphash_key_t *key)
{
	const u8 *end = p + (len & ~(size_t)3);
	u32 m, b = (u32)len << 24;
	HSIP_INIT(key->key[0], key->key[1]);

	for (; p != end; p += 4) {
		m = get_unaligned_le32(p);
		HSIP13_WORD(m);
	}
	b |= (u32)sip_tail(p, len & 3);
	HSIP13_FINISH(b);
}

u32 hsiphash(const void *data, size_t len, const hsiphash_key_t *key)
{
	if (unlikely(maglev_hsiphash_32))
		return hsip13(data, len, key);
	return sip13(data, len, key);
}

/*
 * The typed helpers, each as lib/siphash.c writes it for its word size:
 * hsiphash() of the words' little-endian bytes, without the loop.
 */
static u32 hsip13_1u32(u32 a, const hsiphash_key_t *key)
{
	u32 b = (u32)4 << 24;
	HSIP_INIT(key->key[0], key->key[1]);

	HSIP13_WORD(a);
	HSIP13_FINISH(b);
}

u32 hsiphash_1u32(u32 a, const hsiphash_key_t *key)
{
	if (unlikely(maglev_hsiphash_32))
		return hsip13_1u32(a, key);
	{
		SIP_INIT(key->key[0], key->key[1]);

		SIP13_FINISH((u64)4 << 56 | a);
	}
}

static u32 hsip13_2u32(u32 a, u32 b2, const hsiphash_key_t *key)
{
	u32 b = (u32)8 << 24;
	HSIP_INIT(key->key[0], key->key[1]);

	HSIP13_WORD(a);
	HSIP13_WORD(b2);
	HSIP13_FINISH(b);
}

u32 hsiphash_2u32(u32 a, u32 b, const hsiphash_key_t *key)
{
	if (unlikely(maglev_hsiphash_32))
		return hsip13_2u32(a, b, key);
	{
		u64 m = (u64)b << 32 | a;
		SIP_INIT(key->key[0], key->key[1]);

		SIP13_WORD(m);
		SIP13_FINISH((u64)8 << 56);
	}
}

static u32 hsip13_4u32(u32 a, u32 b2, u32 c, u32 d,
		       const hsiphash_key_t *key)
{
	u32 b = (u32)16 << 24;
	HSIP_INIT(key->key[0], key->key[1]);

	HSIP13_WORD(a);
	HSIP13_WORD(b2);
	HSIP13_WORD(c);
	HSIP13_WORD(d);
	HSIP13_FINISH(b);
}

u32 hsiphash_4u32(u32 a, u32 b, u32 c, u32 d, const hsiphash_key_t *key)
{
	if (unlikely(maglev_hsiphash_32))
		return hsip13_4u32(a, b, c, d, key);
	{
		u64 m0 = (u64)b << 32 | a, m1 = (u64)d << 32 | c;
		SIP_INIT(key->key[0], key->key[1]);

		SIP13_WORD(m0);
		SIP13_WORD(m1);
		SIP13_FINISH((u64)16 << 56);
	}
}
