// SPDX-License-Identifier: GPL-2.0
/*
 * siphash.c - SipHash-2-4 for userspace builds of maglev_table.h users.
 *
 * It stands in for the kernel's lib/siphash.c: the same siphash() interface
 * (include/maglev_compat.h declares it) and the same function, the
 * reference algorithm of Aumasson and Bernstein with two compression
 * rounds, four finalization rounds and a 64-bit output.  k0 and k1 are
 * key->key[0] and key->key[1]; the message is read as little-endian 64-bit
 * words, whatever the host's byte order.
 */
#include "maglev_compat.h"

static inline u64 sip_rotl(u64 x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

/* One SipRound: add, rotate, xor on the four state words. */
static inline void sip_round(u64 *v0, u64 *v1, u64 *v2, u64 *v3)
{
	*v0 += *v1;
	*v2 += *v3;
	*v1 = sip_rotl(*v1, 13) ^ *v0;
	*v3 = sip_rotl(*v3, 16) ^ *v2;
	*v0 = sip_rotl(*v0, 32);
	*v2 += *v1;
	*v0 += *v3;
	*v1 = sip_rotl(*v1, 17) ^ *v2;
	*v3 = sip_rotl(*v3, 21) ^ *v0;
	*v2 = sip_rotl(*v2, 32);
}

u64 siphash(const void *data, size_t len, const siphash_key_t *key)
{
	const u8 *p = data;
	const u8 *end = p + (len & ~(size_t)7);
	u64 v0 = 0x736f6d6570736575ULL ^ key->key[0];
	u64 v1 = 0x646f72616e646f6dULL ^ key->key[1];
	u64 v2 = 0x6c7967656e657261ULL ^ key->key[0];
	u64 v3 = 0x7465646279746573ULL ^ key->key[1];
	u64 m, b = (u64)len << 56;
	size_t left = len & 7, at = 0;

	/* full 8-byte words: one unaligned little-endian load each */
	for (; p != end; p += 8) {
		m = maglev_le64(p);
		v3 ^= m;
		sip_round(&v0, &v1, &v2, &v3);
		sip_round(&v0, &v1, &v2, &v3);
		v0 ^= m;
	}

	/* the 0..7 bytes left, below the length byte: 4, 2, 1 at a time */
	if (left & 4) {
		b |= maglev_le32(p);
		at = 4;
	}
	if (left & 2) {
		b |= (u64)maglev_le16(p + at) << (8 * at);
		at += 2;
	}
	if (left & 1)
		b |= (u64)p[at] << (8 * at);
	v3 ^= b;
	sip_round(&v0, &v1, &v2, &v3);
	sip_round(&v0, &v1, &v2, &v3);
	v0 ^= b;

	v2 ^= 0xff;
	sip_round(&v0, &v1, &v2, &v3);
	sip_round(&v0, &v1, &v2, &v3);
	sip_round(&v0, &v1, &v2, &v3);
	sip_round(&v0, &v1, &v2, &v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
