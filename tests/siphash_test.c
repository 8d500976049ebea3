// SPDX-License-Identifier: GPL-2.0
/*
 * siphash_test.c - host tests of tools/siphash.c (the userspace SipHash-2-4
 * behind maglev_key_hash()) and of the key helpers of maglev_table.h: the
 * reference test vectors, the key fingerprint and the fallback rehash.
 */
#include <stdlib.h>

#include "maglev_table.h"
#include "unit.h"

/*
 * SipHash-2-4 of the messages 00 01 .. (len - 1), len = 0..63, under the
 * key 00 01 .. 0f: the test vectors of the reference implementation
 * (https://github.com/veorq/SipHash, vectors.h), as Linux's
 * lib/siphash_kunit.c lists them.
 */
static const u64 sip_vectors[64] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
	0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
	0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
	0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
	0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL,
	0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL, 0xbed65cf21aa2ee98ULL,
	0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
	0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL,
	0x2f2e6163076bcfadULL, 0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL,
	0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL, 0x7127512f72f27cceULL,
	0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
	0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL,
	0x9abfd8766a33735cULL, 0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL,
	0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL, 0xf935451de4f21df2ULL,
	0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
	0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL,
	0xa192d576b245165aULL, 0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL,
	0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL, 0xb78dbfaf3a8d83bdULL,
	0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
	0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL,
	0x958a324ceb064572ULL,
};

/* The vectors' key, as 32 hex digits: 000102030405060708090a0b0c0d0e0f. */
static void vector_key(siphash_key_t *key)
{
	u8 b[MAGLEV_KEY_BYTES];
	u32 i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (u8)i;
	maglev_key_from_bytes(key, b);
}

static void test_key_from_bytes(void)
{
	siphash_key_t key;

	vector_key(&key);
	check(key.key[0] == 0x0706050403020100ULL &&
	      key.key[1] == 0x0f0e0d0c0b0a0908ULL,
	      "k0 %016llx k1 %016llx", key.key[0], key.key[1]);
}

/* Each length from its own heap allocation, so ASan sees any overread. */
static void test_vectors(void)
{
	siphash_key_t key;
	u32 len, i;

	vector_key(&key);
	for (len = 0; len < ARRAY_SIZE(sip_vectors); len++) {
		u8 *msg = malloc(len ? len : 1);
		u64 h;

		if (!msg) {
			check(false, "out of memory");
			return;
		}
		for (i = 0; i < len; i++)
			msg[i] = (u8)i;
		h = siphash(msg, len, &key);
		check(h == sip_vectors[len],
		      "len %u: %016llx, want %016llx", len, h,
		      sip_vectors[len]);
		check(maglev_key_hash(msg, len, &key) == h,
		      "len %u: maglev_key_hash is not siphash", len);
		free(msg);
	}
}

/* Unaligned messages hash as aligned ones. */
static void test_unaligned(void)
{
	u8 buf[64 + 8];
	siphash_key_t key;
	u32 off, len, i;

	vector_key(&key);
	for (off = 1; off < 8; off++) {
		for (i = 0; i < 64; i++)
			buf[off + i] = (u8)i;
		for (len = 0; len < 64; len++)
			check(siphash(buf + off, len, &key) ==
			      sip_vectors[len], "offset %u len %u", off, len);
	}
}

/*
 * Both halves of the key count, and every bit of a message matters: a
 * flipped bit changes the hash (a sample, not a proof).
 */
static void test_key_and_bits(void)
{
	siphash_key_t k = { { 0, 0 } }, k0 = k, k1 = k;
	u8 msg[18] = { 10, 0, 0, 1, 0, 80 };
	u64 h = siphash(msg, sizeof(msg), &k);
	u32 bit;

	k0.key[0] = 1;
	k1.key[1] = 1ULL << 63;
	check(siphash(msg, sizeof(msg), &k0) != h, "k0 ignored");
	check(siphash(msg, sizeof(msg), &k1) != h, "k1 ignored");
	for (bit = 0; bit < 8 * sizeof(msg); bit++) {
		msg[bit / 8] ^= (u8)(1 << (bit % 8));
		check(siphash(msg, sizeof(msg), &k) != h, "bit %u ignored",
		      bit);
		msg[bit / 8] ^= (u8)(1 << (bit % 8));
	}
	/* the length is hashed: trailing zero bytes change the hash */
	check(siphash(msg, 4, &k) != siphash(msg, 5, &k) &&
	      siphash(msg, 0, &k) != siphash(msg, 8, &k), "length ignored");
}

/*
 * Fingerprints, computed independently with tests/sim/model.py:
 *   fingerprint(bytes(16)) = 0x714c8345
 *   fingerprint(bytes(range(16))) = 0x5bd3642f
 */
static void test_fingerprint(void)
{
	siphash_key_t zero = { { 0, 0 } }, key;
	static const char msg[] = MAGLEV_KEY_FP_MSG;

	vector_key(&key);
	check(sizeof(msg) - 1 == 24, "message of %zu bytes", sizeof(msg) - 1);
	check(maglev_key_fingerprint(&zero) == 0x714c8345,
	      "default key: %08x", maglev_key_fingerprint(&zero));
	check(maglev_key_fingerprint(&key) == 0x5bd3642f,
	      "vectors' key: %08x", maglev_key_fingerprint(&key));
	check(maglev_key_fingerprint(&key) ==
	      siphash(msg, 24, &key) >> 32, "not the upper 32 bits");
}

/*
 * maglev_rehash(h, i) = fmix64(h ^ i * 0x9e3779b97f4a7c15), values from
 * tests/sim/model.py's rehash(), which follows the spec:
 *   python3 -c 'import model; print(hex(model.rehash(h, i)))'
 */
static void test_rehash(void)
{
	static const struct {
		u64 h;
		u32 i;
		u64 want;
	} v[] = {
		{ 0, 1, 0x9ca066f1a4ab2eeaULL },
		{ 0, 2, 0xd30b054265133dd7ULL },
		{ 0x0123456789abcdefULL, 1, 0x0a3f19cbbc4eb73dULL },
		{ 0xffffffffffffffffULL, 3, 0xbe926d03150a5fa7ULL },
		{ 0x726fdb47dd0e0e31ULL, 7, 0xaca5cf286f1e914eULL },
		{ 0xfedcba9876543210ULL, 0xffffffffU, 0x9db31ef024dbaf44ULL },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		check(maglev_rehash(v[i].h, v[i].i) == v[i].want,
		      "rehash(%016llx, %u) = %016llx, want %016llx",
		      v[i].h, v[i].i, maglev_rehash(v[i].h, v[i].i),
		      v[i].want);
	check(maglev_rehash(0, 1) != maglev_rehash(0, 2) &&
	      maglev_rehash(1, 1) != maglev_rehash(0, 1), "not distinct");
}

int main(void)
{
	run("maglev_key_from_bytes: k0, k1 little-endian", test_key_from_bytes);
	run("siphash: 64 reference SipHash-2-4 vectors", test_vectors);
	run("siphash: unaligned messages", test_unaligned);
	run("siphash: key halves, message bits, length", test_key_and_bits);
	run("maglev_key_fingerprint: default and vectors' keys",
	    test_fingerprint);
	run("maglev_rehash: independently computed values", test_rehash);
	return unit_summary();
}
