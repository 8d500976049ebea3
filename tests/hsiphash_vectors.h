/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hsiphash_vectors.h - the kernel's own hsiphash test vectors for
 * BITS_PER_LONG == 64 (SipHash-1-3), as Linux 6.12's lib/siphash_kunit.c
 * lists them: key 00 01 .. 0f ({ 0x0706050403020100, 0x0f0e0d0c0b0a0908 }),
 * message i the bytes 00 01 .. i-1.  Shared by tests/siphash_test.c and
 * tests/mh_port_test.c.
 */
#ifndef _HSIPHASH_VECTORS_H
#define _HSIPHASH_VECTORS_H

static const u32 hsip64_vectors[64] = {
	0x050fc4dcU, 0x7d57ca93U, 0x4dc7d44dU, 0xe7ddf7fbU, 0x88d38328U,
	0x49533b67U, 0xc59f22a7U, 0x9bb11140U, 0x8d299a8eU, 0x6c063de4U,
	0x92ff097fU, 0xf94dc352U, 0x57b4d9a2U, 0x1229ffa7U, 0xc0f95d34U,
	0x2a519956U, 0x7d908b66U, 0x63dbd80cU, 0xb473e63eU, 0x8d297d1cU,
	0xa6cce040U, 0x2b45f844U, 0xa320872eU, 0xdae6c123U, 0x67349c8cU,
	0x705b0979U, 0xca9913a5U, 0x4ade3b35U, 0xef6cd00dU, 0x4ab1e1f4U,
	0x43c5e663U, 0x8c21d1bcU, 0x16a7b60dU, 0x7a8ff9bfU, 0x1f2a753eU,
	0xbf186b91U, 0xada26206U, 0xa3c33057U, 0xae3a36a1U, 0x7b108392U,
	0x99e41531U, 0x3f1ad944U, 0xc8138825U, 0xc28949a6U, 0xfaf8876bU,
	0x9f042196U, 0x68b1d623U, 0x8b5114fdU, 0xdf074c46U, 0x12cc86b3U,
	0x0a52098fU, 0x9d292f9aU, 0xa2f41f12U, 0x43a71ed0U, 0x73f0bce6U,
	0x70a7e980U, 0x243c6d75U, 0xfdb71513U, 0xa67d8a08U, 0xb7e8f148U,
	0xf7a644eeU, 0x0f1837f2U, 0x4b6694e0U, 0xb7bbb3a8U,
};

#endif /* _HSIPHASH_VECTORS_H */
