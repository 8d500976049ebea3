// SPDX-License-Identifier: GPL-2.0
/*
 * siphash_test.c - host tests of tools/siphash.c (the userspace siphash()
 * behind the key fingerprint and the client hash hsiphash(), in
 * both its forms) and of the key helpers of maglev_table.h: the reference
 * and the kernel's test vectors, the scheduler's client keys, the key
 * fingerprint and the fallback rehash.
 */
#include <stdlib.h>

#include "maglev_table.h"
#include "unit.h"
#include "hsiphash_vectors.h"

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

/*
 * hsiphash of the same messages under the same key bytes, as Linux 6.12's
 * lib/siphash_kunit.c lists them for BITS_PER_LONG == 64 (SipHash-1-3,
 * key { 0x0706050403020100, 0x0f0e0d0c0b0a0908 }) and for 32-bit
 * (HalfSipHash-1-3, key { 0x03020100, 0x07060504 }); the 64-bit ones are
 * in hsiphash_vectors.h.
 */

static const u32 hsip32_vectors[64] = {
	0x5814c896U, 0xe7e864caU, 0xbc4b0e30U, 0x01539939U, 0x7e059ea6U,
	0x88e3d89bU, 0xa0080b65U, 0x9d38d9d6U, 0x577999b1U, 0xc839caedU,
	0xe4fa32cfU, 0x959246eeU, 0x6b28096cU, 0x66dd9cd6U, 0x16658a7cU,
	0xd0257b04U, 0x8b31d501U, 0x2b1cd04bU, 0x06712339U, 0x522aca67U,
	0x911bb605U, 0x90a65f0eU, 0xf826ef7bU, 0x62512debU, 0x57150ad7U,
	0x5d473507U, 0x1ec47442U, 0xab64afd3U, 0x0a4100d0U, 0x6d2ce652U,
	0x2331b6a3U, 0x08d8791aU, 0xbc6dda8dU, 0xe0f6c934U, 0xb0652033U,
	0x9b9851ccU, 0x7c46fb7fU, 0x732ba8cbU, 0xf142997aU, 0xfcc9aa1bU,
	0x05327eb2U, 0xe110131cU, 0xf9e5e7c0U, 0xa7d708a6U, 0x11795ab1U,
	0x65671619U, 0x9f5fff91U, 0xd89c5267U, 0x007783ebU, 0x95766243U,
	0xab639262U, 0x9c7e1390U, 0xc368dda6U, 0x38ddc455U, 0xfa13d379U,
	0x979ea4e8U, 0x53ecd77eU, 0x2ee80657U, 0x33dbb66aU, 0xae3f0577U,
	0x88b4c4ccU, 0x3e7f480bU, 0x74c1ebf8U, 0x87178304U,
};

/* The vectors' key, as 32 hex digits: 000102030405060708090a0b0c0d0e0f. */
static void vector_key(siphash_key_t *key)
{
	key->key[0] = 0x0706050403020100ULL;
	key->key[1] = 0x0f0e0d0c0b0a0908ULL;
}

/*
 * The hsiphash key of the kernel's vectors in form @half: from the bytes
 * 00 01 .. 0f for the 64-bit form; for the 32-bit one the bytes whose
 * K[0..3] and K[8..11] are 00 01 02 03 and 04 05 06 07.
 */
static void vector_hkey(hsiphash_key_t *key, bool half)
{
	u8 b[MAGLEV_KEY_BYTES];
	u32 i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (u8)i;
	if (half) {
		memset(b, 0, sizeof(b));
		for (i = 0; i < 4; i++) {
			b[i] = (u8)i;
			b[8 + i] = (u8)(4 + i);
		}
	}
	maglev_hkey_from_bytes(key, b);
}

static void test_hkey_from_bytes(void)
{
	hsiphash_key_t key;

	vector_hkey(&key, false);
	check(key.key[0] == 0x0706050403020100ULL &&
	      key.key[1] == 0x0f0e0d0c0b0a0908ULL,
	      "k0 %016llx k1 %016llx", key.key[0], key.key[1]);
	vector_hkey(&key, true);
	check((u32)key.key[0] == 0x03020100U && (u32)key.key[1] == 0x07060504U,
	      "32-bit form: k0 %08x k1 %08x", (u32)key.key[0],
	      (u32)key.key[1]);
}

/*
 * hsiphash in form @half against the kernel's vectors, each length from
 * its own heap allocation (ASan sees any overread) and unaligned.
 */
static void hsip_vectors(bool half)
{
	const u32 *want = half ? hsip32_vectors : hsip64_vectors;
	u8 buf[64 + 8];
	hsiphash_key_t key;
	u32 len, i, off;

	maglev_hsiphash_32 = half;
	vector_hkey(&key, half);
	for (len = 0; len < 64; len++) {
		u8 *msg = malloc(len ? len : 1);
		u32 h;

		if (!msg) {
			check(false, "out of memory");
			break;
		}
		for (i = 0; i < len; i++)
			msg[i] = (u8)i;
		h = hsiphash(msg, len, &key);
		check(h == want[len], "len %u: %08x, want %08x", len, h,
		      want[len]);
		free(msg);
	}
	for (off = 1; off < 8; off++) {
		for (i = 0; i < 64; i++)
			buf[off + i] = (u8)i;
		for (len = 0; len < 64; len++)
			check(hsiphash(buf + off, len, &key) == want[len],
			      "offset %u len %u", off, len);
	}
	/* the typed helpers, as lib/siphash_kunit.c checks them */
	check(hsiphash_1u32(0x03020100U, &key) == want[4], "1u32");
	check(hsiphash_2u32(0x03020100U, 0x07060504U, &key) == want[8],
	      "2u32");
	check(hsiphash_4u32(0x03020100U, 0x07060504U, 0x0b0a0908U,
			    0x0f0e0d0cU, &key) == want[16], "4u32");
	maglev_hsiphash_32 = false;
}

static void test_hsip64_vectors(void)
{
	hsip_vectors(false);
}

static void test_hsip32_vectors(void)
{
	hsip_vectors(true);
}

/*
 * The scheduler's client keys: maglev_hash_ip4() and its siblings give
 * hsiphash() of the byte strings of the specification, in both
 * forms, and the values of tests/sim/model.py's hsiphash(), written from
 * the specification (key 00 01 .. 0f and the zero key):
 *   python3 -c 'import model; k = bytes(range(16));
 *     print(hex(model.hsiphash(model.addr_key("10.0.0.1:80"), k, False)))'
 */
static void test_client_keys(void)
{
	static const u8 a4[4] = { 10, 0, 0, 1 };
	static const u8 a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const u8 p4[8] = { 10, 0, 0, 1, 0, 80, 0, 0 };
	static const u8 p6[20] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1,
				   [17] = 80 };
	static const struct {
		bool half;
		bool zero;
		u32 want[4];	/* IPv4, IPv4+port, IPv6, IPv6+port */
	} v[] = {
		{ false, false, { 0x35ba05afU, 0x4448c505U, 0x1f661474U,
				  0x9e2d92ccU } },
		{ false, true, { 0xa835a61eU, 0xbd64f5dcU, 0xf2b8bc94U,
				 0xc79a97e9U } },
		{ true, false, { 0x836adeddU, 0x2cad2a07U, 0x87ee734fU,
				 0x939cf161U } },
		{ true, true, { 0xaf4bd032U, 0x4d6dd81dU, 0x3475ef70U,
				0xe2f6aabbU } },
	};
	__be16 port = htobe16(80);
	u8 kb[MAGLEV_KEY_BYTES];
	hsiphash_key_t key;
	u32 i, j, h[4];

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		for (j = 0; j < sizeof(kb); j++)
			kb[j] = v[i].zero ? 0 : (u8)j;
		maglev_hkey_from_bytes(&key, kb);
		maglev_hsiphash_32 = v[i].half;
		h[0] = maglev_hash_ip4(a4, &key);
		h[1] = maglev_hash_ip4_port(a4, port, &key);
		h[2] = maglev_hash_ip6(a6, &key);
		h[3] = maglev_hash_ip6_port(a6, port, &key);
		check(h[0] == hsiphash(a4, 4, &key), "IPv4 %u", i);
		check(h[1] == hsiphash(p4, 8, &key), "IPv4+port %u", i);
		check(h[2] == hsiphash(a6, 16, &key), "IPv6 %u", i);
		check(h[3] == hsiphash(p6, 20, &key), "IPv6+port %u", i);
		for (j = 0; j < 4; j++)
			check(h[j] == v[i].want[j],
			      "case %u key kind %u: %08x, want %08x", i, j,
			      h[j], v[i].want[j]);
	}
	maglev_hsiphash_32 = false;
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
	static const char msg[] = MAGLEV_KEY_FP_MSG;
	u8 zero[MAGLEV_KEY_BYTES] = { 0 }, b[MAGLEV_KEY_BYTES];
	siphash_key_t key;
	u32 i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (u8)i;
	vector_key(&key);
	check(sizeof(msg) - 1 == 24, "message of %zu bytes", sizeof(msg) - 1);
	check(maglev_key_fingerprint(zero) == 0x714c8345,
	      "default key: %08x", maglev_key_fingerprint(zero));
	check(maglev_key_fingerprint(b) == 0x5bd3642f,
	      "vectors' key: %08x", maglev_key_fingerprint(b));
	check(maglev_key_fingerprint(b) == siphash(msg, 24, &key) >> 32,
	      "not the upper 32 bits of SipHash-2-4 with k0, k1 little-endian");
}

/*
 * maglev_rehash(h, i) = fmix32(h ^ i * 0x9e3779b9), values from
 * tests/sim/model.py's rehash(), which follows the spec:
 *   python3 -c 'import model; print(hex(model.rehash(h, i)))'
 */
static void test_rehash(void)
{
	static const struct {
		u32 h;
		u32 i;
		u32 want;
	} v[] = {
		{ 0x00000000, 1, 0x92ca2f0eU },
		{ 0x00000000, 2, 0x3cd6e3f3U },
		{ 0x01234567, 1, 0x3d9fb56fU },
		{ 0xffffffff, 3, 0xe48ac83aU },
		{ 0x726fdb47, 7, 0x5e543615U },
		{ 0xfedcba98, 0xffffffffU, 0x6b7c95c8U },
	};
	u32 i, h, seen = 0;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		check(maglev_rehash(v[i].h, v[i].i) == v[i].want,
		      "rehash(%08x, %u) = %08x, want %08x",
		      v[i].h, v[i].i, maglev_rehash(v[i].h, v[i].i),
		      v[i].want);
	check(maglev_rehash(0, 1) != maglev_rehash(0, 2) &&
	      maglev_rehash(1, 1) != maglev_rehash(0, 1), "not distinct");
	/* a bijection: 2^16 inputs that differ give 2^16 outputs that do */
	for (h = 0; h < 65536; h++)
		seen += maglev_rehash(h << 16 | h, 3) ==
			maglev_rehash((h + 1) << 16 | (h + 1), 3);
	check(!seen, "%u neighbouring inputs collide", seen);
}

int main(void)
{
	run("maglev_hkey_from_bytes: both forms' k0, k1", test_hkey_from_bytes);
	run("hsiphash 64-bit form: the kernel's 64 SipHash-1-3 vectors",
	    test_hsip64_vectors);
	run("hsiphash 32-bit form: the kernel's 64 HalfSipHash-1-3 vectors",
	    test_hsip32_vectors);
	run("client keys: typed helpers, byte strings, model values",
	    test_client_keys);
	run("siphash: 64 reference SipHash-2-4 vectors", test_vectors);
	run("siphash: unaligned messages", test_unaligned);
	run("siphash: key halves, message bits, length", test_key_and_bits);
	run("maglev_key_fingerprint: default and vectors' keys",
	    test_fingerprint);
	run("maglev_rehash: independently computed values", test_rehash);
	return unit_summary();
}
