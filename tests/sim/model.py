#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent model of maglev-sim, written from the specification.

It follows the normative text of docs/specification.md (h32, offset, skip,
turns with big weights scaled, the size fit, fill, draining, digest, churn,
client key hash (hsiphash: SipHash-1-3, or HalfSipHash-1-3 with -32,
written here from the paper and the spec), key fingerprint (SipHash-2-4), slot of a hash, backend names of addresses), and speaks the
subset of maglev-sim's protocol used by the golden files: it reads
commands on stdin and prints what maglev-sim must print on stdout.  It shares no code with the C side,
so golden outputs made with it check the C code against the spec.

    tests/sim/model.py [-32] < tests/sim/golden/NAME.in > tests/sim/golden/NAME.out

Only well-formed input is supported; there is no error handling.
"""
import ipaddress
import math
import sys

M64 = (1 << 64) - 1
NONE = 0xFFFF


def h32(data, h=2166136261):
    for c in data:
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def fmix64(x):
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M64
    x ^= x >> 33
    return x


def khash(data, seed):
    h = seed ^ ((len(data) * 0x9E3779B97F4A7C15) & M64)
    i = 0
    while True:
        h = fmix64(h ^ int.from_bytes(data[i:i + 8], "little"))
        i += 8
        if i >= len(data):
            return h


def siphash24(data, key):
    """SipHash-2-4 (Aumasson and Bernstein) of bytes under a 16-byte key,
    straight from the paper: k0, k1 little-endian halves of the key, the
    message as little-endian words, the last one padded with zero bytes
    and the length mod 256 in its top byte."""
    k0 = int.from_bytes(key[:8], "little")
    k1 = int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & M64

    def sip_round():
        v[0] = (v[0] + v[1]) & M64
        v[1] = rotl(v[1], 13) ^ v[0]
        v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M64
        v[3] = rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & M64
        v[3] = rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & M64
        v[1] = rotl(v[1], 17) ^ v[2]
        v[2] = rotl(v[2], 32)

    tail = len(data) % 8
    padded = data + bytes(7 - tail) + bytes([len(data) & 0xFF])
    for i in range(0, len(padded), 8):
        m = int.from_bytes(padded[i:i + 8], "little")
        v[3] ^= m
        sip_round()
        sip_round()
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        sip_round()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def sip_rounds(v, n, bits):
    """n SipRounds on the state v: SipHash's (64-bit words, rotations 13,
    16, 32, 17, 21, 32) or HalfSipHash's (32-bit, 5, 8, 16, 13, 7, 16)."""
    mask = (1 << bits) - 1
    r = (13, 16, 32, 17, 21, 32) if bits == 64 else (5, 8, 16, 13, 7, 16)

    def rotl(x, b):
        return ((x << b) | (x >> (bits - b))) & mask

    for _ in range(n):
        v[0] = (v[0] + v[1]) & mask
        v[1] = rotl(v[1], r[0]) ^ v[0]
        v[0] = rotl(v[0], r[2])
        v[2] = (v[2] + v[3]) & mask
        v[3] = rotl(v[3], r[1]) ^ v[2]
        v[0] = (v[0] + v[3]) & mask
        v[3] = rotl(v[3], r[4]) ^ v[0]
        v[2] = (v[2] + v[1]) & mask
        v[1] = rotl(v[1], r[3]) ^ v[2]
        v[2] = rotl(v[2], r[5])


def hsiphash(data, key, half=False):
    """The kernel's hsiphash of bytes under a 16-byte key K, from the spec:
    SipHash-1-3 with k0 = K[0..7], k1 = K[8..15] and the low 32 bits of its
    output (64-bit kernels), or with half HalfSipHash-1-3 with k0 = K[0..3],
    k1 = K[8..11] and the output v1 ^ v3 (32-bit kernels).  The message is
    padded as SipHash pads it: zero bytes, the length mod 256 on top."""
    bits = 32 if half else 64
    w = bits // 8
    k0 = int.from_bytes(key[:w], "little")
    k1 = int.from_bytes(key[8:8 + w], "little")
    if half:
        c = (0, 0, 0x6C796765, 0x74656462)
    else:
        c = (0x736F6D6570736575, 0x646F72616E646F6D,
             0x6C7967656E657261, 0x7465646279746573)
    v = [k0 ^ c[0], k1 ^ c[1], k0 ^ c[2], k1 ^ c[3]]
    tail = len(data) % w
    padded = data + bytes(w - 1 - tail) + bytes([len(data) & 0xFF])
    for i in range(0, len(padded), w):
        m = int.from_bytes(padded[i:i + w], "little")
        v[3] ^= m
        sip_rounds(v, 1, bits)
        v[0] ^= m
    v[2] ^= 0xFF
    sip_rounds(v, 3, bits)
    if half:
        return v[1] ^ v[3]
    return (v[0] ^ v[1] ^ v[2] ^ v[3]) & 0xFFFFFFFF


def fmix32(x):
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def fingerprint(key):
    return siphash24(b"ip_vs_maglev fingerprint", key) >> 32


def rehash(h, i):
    return fmix32(h ^ ((i * 0x9E3779B9) & 0xFFFFFFFF))


def turns_of(weights, m):
    pos = [w for w in weights if w]
    if not pos:
        return [0] * len(weights)
    g = 0
    for w in pos:
        g = math.gcd(g, w)
    t = [w // g for w in weights]
    total = sum(t)
    if total <= m:
        return t
    p = len(pos)
    # scaled by (M - P) / T, at least one turn each
    return [max(x * max(m - p, 0) // total, 1) if x else 0 for x in t]


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


# "Table size" of the specification: a fixed prime, 65537 by default.
DEFAULT_SIZE = 65537


def fit_size(m, n):
    """A table size below the number of backends: the next prime >= N."""
    if n <= m or n > 65535:
        return m
    while not is_prime(n):
        n += 1
    return n


def v6_text(packed):
    """IPv6 text as glibc's inet_ntop writes it (RFC 5952 plus its
    dotted forms), written from the rule, not from glibc's code."""
    groups = [int.from_bytes(packed[i:i + 2], "big") for i in range(0, 16, 2)]
    # all maximal zero runs as (length, -start); the longest, then the first
    runs = []
    i = 0
    while i < 8:
        if groups[i] == 0:
            j = i
            while j < 8 and groups[j] == 0:
                j += 1
            runs.append((j - i, -i))
            i = j
        else:
            i += 1
    best = max(runs) if runs else (0, 0)
    length, start = best[0], -best[1]
    dotted = ".".join(str(b) for b in packed[12:])
    if start == 0 and (length == 6 or (length == 5 and groups[5] == 0xFFFF)):
        return "::" + ("ffff:" if length == 5 else "") + dotted
    hexes = ["%x" % g for g in groups]
    if length < 2:
        return ":".join(hexes)
    return ":".join(hexes[:start]) + "::" + ":".join(hexes[start + length:])


def canonical_name(text):
    """An address with a port becomes the kernel's backend name."""
    try:
        if text.startswith("["):
            end = text.index("]")
            if text[end + 1:end + 2] != ":":
                return text
            addr = ipaddress.IPv6Address(text[1:end]).packed
            port = text[end + 2:]
        elif text.count(":") == 1:
            a, _, port = text.partition(":")
            addr = ipaddress.IPv4Address(a).packed
        else:
            return text
        if not port.isdigit() or int(port) > 65535:
            return text
    except ValueError:
        return text
    if len(addr) == 4:
        return "%s:%d" % (".".join(str(b) for b in addr), int(port))
    return "[%s]:%d" % (v6_text(addr), int(port))


def fill(m, names, turns):
    slot = [NONE] * m
    if not any(turns):
        return slot
    off = [h32(n + b"|offset") % m for n in names]
    skip = [h32(n + b"|skip") % (m - 1) + 1 for n in names]
    nxt = [0] * len(names)
    left = m
    while left:
        for i in range(len(names)):
            for _ in range(turns[i]):
                if not left:
                    break
                while True:
                    p = (off[i] + nxt[i] * skip[i]) % m
                    nxt[i] += 1
                    if slot[p] == NONE:
                        break
                slot[p] = i
                left -= 1
    return slot


def build(m, nodes):
    names = sorted(nodes)
    w = [nodes[n][0] for n in names]
    dw = [nodes[n][1] for n in names]
    draining = [not w[i] and dw[i] for i in range(len(names))]
    slot = fill(m, names, turns_of([w[i] or dw[i] for i in range(len(w))], m))
    if any(draining) and slot and slot[0] != NONE:
        alt = fill(m, names, turns_of(w, m))
        slot = [alt[s] if draining[o] else o for s, o in enumerate(slot)]
    d = fmix64(0x6D61676C65760001 ^ m)
    d = fmix64(d ^ len(names))
    for n in names:
        d = khash(n, d)
    for s in range(0, m, 4):
        x = 0
        for j in range(4):
            x |= (slot[s + j] if s + j < m else NONE) << (16 * j)
        d = fmix64(d ^ x)
    return names, slot, d


def addr_key(text):
    port = None
    if text.startswith("["):
        end = text.index("]")
        addr = ipaddress.IPv6Address(text[1:end])
        if text[end + 1:]:
            port = int(text[end + 2:])
    elif text.count(":") > 1:
        addr = ipaddress.IPv6Address(text)
    else:
        a, _, p = text.partition(":")
        addr = ipaddress.IPv4Address(a)
        if p:
            port = int(p)
    key = addr.packed
    if port is not None:
        key += port.to_bytes(2, "big") + bytes(2)
    return key


def main():
    half = sys.argv[1:] == ["-32"]
    next_size = DEFAULT_SIZE
    size = fit_size(next_size, 0)
    key = bytes(16)
    nodes = {}
    names, slot, digest = build(size, nodes)
    churn = 0
    out = sys.stdout

    def owner(i):
        return names[i].decode() if i != NONE else "-"

    def rebuild():
        nonlocal size, names, slot, digest, churn
        old_size, old_names, old_slot = size, names, slot
        size = fit_size(next_size, len(nodes))
        names, slot, digest = build(size, nodes)
        if old_size != size:
            # every slot of the new size, unless both tables are empty
            empty = all(o == NONE for o in old_slot + slot)
            churn = 0 if empty else size
            return
        churn = 0
        for s in range(size):
            a = old_names[old_slot[s]] if old_slot[s] != NONE else None
            b = names[slot[s]] if slot[s] != NONE else None
            churn += a != b

    for line in sys.stdin:
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        cmd = w[0].upper()
        if cmd == "SIZE":
            next_size = int(w[1])
        elif cmd == "KEY":
            assert len(w[1]) == 32
            key = bytes.fromhex(w[1])
        elif cmd == "FINGERPRINT":
            print("%08x" % fingerprint(key), file=out)
        elif cmd == "ADD_NODE":
            weight = int(w[2]) if len(w) > 2 else 1
            assert 0 <= weight <= 2147483647
            nodes[canonical_name(w[1]).encode()] = [weight, 0]
            rebuild()
        elif cmd == "REMOVE_NODE":
            del nodes[canonical_name(w[1]).encode()]
            rebuild()
        elif cmd == "WEIGHT":
            n = nodes[canonical_name(w[1]).encode()]
            new = int(w[2])
            assert 0 <= new <= 2147483647
            if new:
                n[1] = 0
            elif n[0]:
                n[1] = n[0]
            n[0] = new
            rebuild()
        elif cmd == "REBUILD":
            rebuild()
        elif cmd == "CHURN":
            print(churn, file=out)
        elif cmd == "OWNER":
            print(owner(slot[int(w[1])]), file=out)
        elif cmd in ("LOOKUP", "LOOKUP_ADDR"):
            data = w[1].encode() if cmd == "LOOKUP" else addr_key(w[1])
            h = hsiphash(data, key, half)
            print(owner(slot[(h * size) >> 32]), file=out)
        elif cmd == "COUNTS":
            for i, n in enumerate(names):
                print(n.decode(), slot.count(i), file=out)
        elif cmd == "DIGEST":
            print("%016x" % digest, file=out)
        else:
            sys.exit("model.py: unsupported command " + cmd)


if __name__ == "__main__":
    main()
