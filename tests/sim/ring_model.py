#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent model of maglev-sim's rings (ALGO ring64 / ring32).

Written from the source documents (seeds 002 and 004), not from the C code:
the hashes are computed with Python integers, and a lookup scans a sorted
list of (position, name) pairs with bisect instead of the C merge and
binary search.  It reads maglev-sim commands on stdin and prints what
maglev-sim must print on stdout for the ring commands:

    ALGO maglev | ALGO ring64 <V> | ALGO ring32
    ADD_NODE <name> [weight]   REMOVE_NODE <name>   LOOKUP <key>
    POSITION <text>

A duplicate ADD_NODE or an unknown REMOVE_NODE changes nothing; like
maglev-sim, the model then prints "error: line N: ..." on stderr.  Under ALGO maglev only the set is tracked; LOOKUP
and POSITION are not modelled there.

    tests/sim/ring_model.py < script > expected
    tests/sim/ring_model.py --check     the seeds' check values
"""
import bisect
import sys

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def fnv1a64(data):
    h = 14695981039346656037
    for c in data:
        h = ((h ^ c) * 1099511628211) & M64
    return h


def finalize(z):
    z = ((z ^ (z >> 30)) * 13787848793156543929) & M64
    z = ((z ^ (z >> 27)) * 10723151780598845931) & M64
    return z ^ (z >> 31)


def fnv1a32(data):
    h = 2166136261
    for c in data:
        h = ((h ^ c) * 16777619) & M32
    return h


def position(kind, text):
    if kind == "ring32":
        return fnv1a32(text)
    return finalize(fnv1a64(text))


class Ring:
    def __init__(self, kind, v, names):
        self.kind = kind
        self.v = v if kind == "ring64" else 1
        self.names = set(names)
        self.sorted = None

    cache = {}

    def points(self, name):
        k = (self.kind, self.v, name)
        if k not in Ring.cache:
            if self.kind == "ring32":
                p = [(fnv1a32(name), name)]
            else:
                p = [(position("ring64", name + b"#" + str(i).encode()),
                      name) for i in range(self.v)]
            Ring.cache[k] = p
        return Ring.cache[k]

    def locate(self, key):
        if not self.names:
            return None
        if self.sorted is None:
            # (position, name) tuples sort by position, then by name bytes
            self.sorted = sorted(p for n in self.names for p in self.points(n))
        pos = position(self.kind, key)
        i = bisect.bisect_left(self.sorted, (pos, b""))
        return self.sorted[i % len(self.sorted)][1]

    def add(self, name):
        self.names.add(name)
        self.sorted = None

    def remove(self, name):
        self.names.discard(name)
        self.sorted = None


def check():
    ok = True

    def want(desc, got, exp):
        nonlocal ok
        if got != exp:
            print("FAIL: %s: %r, expected %r" % (desc, got, exp))
            ok = False

    want("fnv1a64(a)", fnv1a64(b"a"), 12638187200555641996)
    want("finalized a", finalize(fnv1a64(b"a")), 198367012849983736)
    r = Ring("ring64", 1, [b"n1", b"n2", b"n3"])
    r.locate(b"x")
    want("n1..n3 order", [n for _, n in r.sorted], [b"n2", b"n3", b"n1"])
    for name, pos in ((b"ember", 438014020), (b"iron", 1269809787),
                      (b"onyx", 2591078921), (b"opal", 3512059719),
                      (b"gob", 1109104011), (b"ogre", 1758641738),
                      (b"hag", 3787390207), (b"amber", 1876213440),
                      (b"imp", 2481405089)):
        want("fnv1a32(%s)" % name.decode(), fnv1a32(name), pos)
    return ok


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    ring = None
    names = set()
    for lineno, line in enumerate(sys.stdin, 1):
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        cmd = w[0].upper()
        have = ring.names if ring else names
        if cmd == "ADD_NODE" and w[1].encode() in have or \
           cmd == "REMOVE_NODE" and w[1].encode() not in have:
            sys.stdout.flush()
            print("error: line %d: %s %s" % (lineno, cmd, w[1]),
                  file=sys.stderr)
            continue
        if cmd == "ALGO":
            if ring:
                names = set(ring.names)
            algo = w[1].lower()
            ring = None
            if algo == "ring64":
                ring = Ring("ring64", int(w[2]), names)
            elif algo == "ring32":
                ring = Ring("ring32", 1, names)
        elif cmd == "ADD_NODE":
            (ring.add if ring else names.add)(w[1].encode())
        elif cmd == "REMOVE_NODE":
            (ring.remove if ring else names.discard)(w[1].encode())
        elif cmd == "LOOKUP" and ring:
            owner = ring.locate(w[1].encode())
            print(owner.decode() if owner else "-")
        elif cmd == "POSITION" and ring:
            print(position(ring.kind, w[1].encode()))
        else:
            sys.exit("ring_model.py: unsupported command " + line.strip())


if __name__ == "__main__":
    main()
