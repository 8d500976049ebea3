/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maglev_table.h - Maglev lookup table (Eisenbud et al., NSDI 2016): the API
 * of maglev_table.c, which compiles unchanged into the kernel module and
 * into userspace programs.  docs/specification.md is the normative
 * specification of the tables, digests and hashes.
 */
#ifndef _MAGLEV_TABLE_H
#define _MAGLEV_TABLE_H

/* Kernel or userspace, by the include path: see maglev_compat.h. */
#include <maglev_compat.h>

#define MAGLEV_NAME_MAX		64
#define MAGLEV_SIZE_MIN		251
#define MAGLEV_SIZE_MAX		5000011
#define MAGLEV_SIZE_DEFAULT	65537
#define MAGLEV_WEIGHT_MAX	2147483647U	/* INT_MAX, as IPVS */
/* Backend indices fit 16 bits; 0xffff means "no backend". */
#define MAGLEV_MAX_BACKENDS	65535
#define MAGLEV_NONE		0xffffU
/*
 * Work between two reschedule points, in probes of a fill or slots of a
 * pass over the table, or in backends (each about 0.2 ms); and the empty
 * slots left when the fill stops walking (docs/specification.md, "How
 * maglev_table.c implements it").
 */
#define MAGLEV_RESCHED_STEPS	16384U
#define MAGLEV_RESCHED_BACKENDS	4096U
#define MAGLEV_TAIL_SLOTS	128U
/* Longest name maglev_format_name() writes, without the NUL. */
#define MAGLEV_ADDR_NAME_MAX	47

/* A reschedule point every @every steps of a loop. */
static inline void maglev_resched(u32 i, u32 every)
{
	if (!(i % every))
		cond_resched();
}

/**
 * struct maglev_backend - one backend (real server) of a table build
 * @name: backend name, not NUL-terminated; "A.B.C.D:port" or "[IPv6]:port"
 *	in the IPVS scheduler
 * @name_len: length of @name in bytes, 1..MAGLEV_NAME_MAX
 * @weight: 0..MAGLEV_WEIGHT_MAX; 0 means no slots (drained, or added
 *	with weight 0)
 * @drain_weight: 0..MAGLEV_WEIGHT_MAX; with @weight 0, the weight whose
 *	slots the backend hands over to the others (draining); 0 for none
 * @priv: caller's cookie
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
 * @byte: the packed slots, W bits each (docs/specification.md, "Packed
 *	slots")
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

int maglev_check_size(u32 size, const char **why);
u32 maglev_fit_size(u32 size, u32 nr_backends);
size_t maglev_table_bytes(u32 size, u32 nr_backends);
size_t maglev_work_bytes(u32 size, u32 nr_backends);
size_t maglev_churn_bytes(u32 on);

u64 maglev_hash(const void *data, size_t len, u64 seed);
u32 maglev_rehash(u32 hash, u32 i);
int maglev_format_name(char *buf, size_t len, const void *addr,
		       u32 addr_len, u16 port);

int maglev_name_cmp(const char *a, u32 alen, const char *b, u32 blen);
int maglev_backend_cmp(const void *a, const void *b);
int maglev_build(struct maglev_table *t, u32 size, struct maglev_backend *b,
		 u32 n, void *work, struct maglev_stats *st, const char **why);
u32 maglev_churn(const struct maglev_table *old,
		 const struct maglev_backend *ob, u32 on,
		 const struct maglev_table *new,
		 const struct maglev_backend *nb, u32 nn, void *work);

/* The steps of maglev_build(), for the tests (VISIBLE_IF_KUNIT). */
#if !defined(__KERNEL__) || defined(CONFIG_KUNIT) || \
	defined(CONFIG_KUNIT_MODULE)
bool maglev_is_prime(u32 n);
int maglev_prepare(struct maglev_backend *b, u32 n, u32 size,
		   const char **why);
u32 maglev_fill(u16 *slot, u32 size, const struct maglev_backend *b, u32 n,
		void *work, struct maglev_stats *st);
#endif

/* Bytes of a hash key, and the message its fingerprint is computed over. */
#define MAGLEV_KEY_BYTES	16
#define MAGLEV_KEY_FP_MSG	"ip_vs_maglev fingerprint"

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
	return hsiphash_1u32(get_unaligned_le32(addr), key);
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
	return hsiphash_2u32(get_unaligned_le32(addr),
			     get_unaligned_le16(&port), key);
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

	return hsiphash_4u32(get_unaligned_le32(a), get_unaligned_le32(a + 4),
			     get_unaligned_le32(a + 8),
			     get_unaligned_le32(a + 12), key);
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
	k.tail = cpu_to_le64(get_unaligned_le16(&port));
	return hsiphash(&k, sizeof(k.addr) + 4, key);
}

/**
 * maglev_key_fingerprint() - a short public fingerprint of a hash key
 * @b: the key's %MAGLEV_KEY_BYTES bytes, as written in hex
 *
 * Return: the upper 32 bits of SipHash-2-4 of %MAGLEV_KEY_FP_MSG under the
 * key whose k0 and k1 are the bytes read little-endian; it tells keys
 * apart without revealing them.
 */
static inline u32 maglev_key_fingerprint(const u8 *b)
{
	static const char msg[] = MAGLEV_KEY_FP_MSG;
	siphash_key_t key = {
		{ get_unaligned_le64(b), get_unaligned_le64(b + 8) }
	};

	return siphash(msg, sizeof(msg) - 1, &key) >> 32;
}

/**
 * maglev_hkey_from_bytes() - the client hash key from its 16 bytes
 * @key: the key to set
 * @b: %MAGLEV_KEY_BYTES bytes, as written in hex
 *
 * k0 and k1 read little-endian; a 32-bit kernel's unsigned long keeps
 * their low 32 bits, K[0..3] and K[8..11].
 */
static inline void maglev_hkey_from_bytes(hsiphash_key_t *key, const u8 *b)
{
	key->key[0] = (unsigned long)get_unaligned_le64(b);
	key->key[1] = (unsigned long)get_unaligned_le64(b + 8);
}

/**
 * maglev_table_get() - owner of a slot
 * @t: table
 * @slot: slot index, below @t->size
 *
 * One unaligned load, a shift and a mask.  A table without slot storage
 * (one backend, or empty) has a width of 0: every slot reads its one word.
 *
 * Return: the owner's index in name order, or %MAGLEV_NONE if the table
 * is empty.
 */
static inline u32 maglev_table_get(const struct maglev_table *t, u32 slot)
{
	u32 bit = slot * t->width;

	return get_unaligned_le32(t->byte + bit / 8) >> (bit % 8) & t->mask;
}

/**
 * maglev_lookup() - backend index for a client hash
 * @t: table
 * @hash: 32-bit client key hash
 *
 * Branch-free: the slot is (@hash * M) >> 32, with a multiplier of 0 for a
 * table without slot storage.
 *
 * Return: the slot's owner, as maglev_table_get().
 */
static inline u32 maglev_lookup(const struct maglev_table *t, u32 hash)
{
	return maglev_table_get(t, (u32)(((u64)hash * t->mul) >> 32));
}

#endif /* _MAGLEV_TABLE_H */
