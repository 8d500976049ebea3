#!/bin/bash
# doc-figures.sh [--update] [--results FILE] [--kdir KDIR] [DIR]: the figures
# of README.md and docs/*.md that describe the code are generated from the
# tree; this checks them (default) or rewrites them (--update), like
# scripts/doc-examples.sh for the examples.
#
# A page quotes one inline as <!-- code: KEY -->VALUE<!-- /code --> (the
# comments do not show on the rendered page), or, for a table, as a
# marker line "<!-- code: KEY -->", the lines, and "<!-- /code -->". KEY:
#   test NAME        the number NN of tests/guest/NN-NAME.sh
#   bytes N [M]      bytes of a table of N servers and M slots (default
#                    65537): header and packed slots (maglev-sim's STATS,
#                    the module's own maglev_table.c)
#   width N [M]      bits a slot takes for N servers
#   scratch N [M]    bytes of scratch memory a build of that table needs
#   sizeof STRUCT    sizeof(struct STRUCT) of the module, from a throwaway
#                    build of scripts/figures/maglev_sizes.c against KDIR
#                    (the default test kernel, as static-check.sh passes
#                    it; without --kdir or DOC_KDIR these are SKIPped)
#   proc FIELD N     FIELD (table_mem, mem; own: mem - table_mem, the
#                    service's own part) of /proc/net/ip_vs_maglev for a
#                    service of N real servers on the default test kernel:
#                    tests/guest/26-figures.txt, which guest test 26
#                    compares with the module's /proc and --update
#                    --results writes from that test's "# figure" lines
#   metrics          (a table) every metric of maglev-fleet prom, from
#                    "maglev-fleet prom --metrics"
# and a test named with its number ("test 24-takeover") in the pages or the
# Makefile must be tests/guest/NN-name.sh.
# Any KEY may end in "/ K" (the value divided by K, rounded down) or
# "pages" (the value in 4096-byte pages, rounded up); "calc EXPR" is
# arithmetic (+ - * / and parentheses, / rounding down) on numbers and
# other figures written {KEY}.
#
#   scripts/doc-figures.sh --update              # rewrite the pages
#   scripts/doc-figures.sh --update --results build/check/vm-default/guest-26-operating.results
#                                                # and 26-figures.txt first
# Prints PASS:/FAIL:/SKIP: lines and ends with "N passed, N failed".
set -eu
. "$(dirname "$0")/lib.sh"

update=0
results=
kdir=${DOC_KDIR:-}
while [ $# -gt 0 ]; do
	case $1 in
	--update) update=1; shift ;;
	--results) results=$2; shift 2 ;;
	--kdir) kdir=$2; shift 2 ;;
	-*) die "usage: doc-figures.sh [--update] [--results FILE] [--kdir KDIR] [DIR]" ;;
	*) break ;;
	esac
done
dir=$(cd "${1:-$TOP}" && pwd)
need_pkgs python3 make

# Only a tree with code figures needs the tools and the build.
if ! grep -q '<!-- code: ' "$dir"/README.md "$dir"/docs/*.md 2>/dev/null; then
	summary
	exit
fi
make -s --no-print-directory -C "$dir" tools >/dev/null 2>&1 ||
	fail "figures: make tools failed in $dir"

# The guest's figures: "# figure KEY... VALUE" lines of a test 26 run.
ff=$dir/tests/guest/26-figures.txt
if [ -n "$results" ]; then
	[ -f "$results" ] || die "no $results"
	new=$(tr -d '\r' <"$results" | sed -n 's/^# figure //p')
	if [ -z "$new" ]; then
		fail "figures: $results has no '# figure' lines (guest test 26's)"
	elif [ "$update" = 1 ]; then
		{
			echo "# The /proc figures of guest test 26 (tests/guest/26-operating.sh,"
			echo "# section 6) on the kernel named below, written by"
			echo "# scripts/doc-figures.sh --update --results RESULTS from its"
			echo "# '# figure' lines; the test compares the module's /proc with"
			echo "# them, and the doc check the pages' <!-- code: proc ... --> figures."
			echo "$new"
		} >"$ff"
		pass "figures: tests/guest/26-figures.txt rewritten from $results"
	elif [ "$(grep -v '^#' "$ff")" = "$new" ]; then
		pass "figures: tests/guest/26-figures.txt equals $results's figures"
	else
		fail "figures: tests/guest/26-figures.txt differs from $results's figures"
	fi
fi

# sizeof: nm -S of the throwaway object.
sizes=$(mktemp)
trap 'rm -f "$sizes"; rm -rf "${src:-}"' EXIT
if [ -n "$kdir" ]; then
	src=$(mktemp -d)
	cp -r "$dir/include" "$dir/maglev_main.c" "$dir/maglev_table.c" \
		"$dir/scripts/figures/." "$src/"
	if make -C "$kdir" M="$src" modules >"$src/build.log" 2>&1 &&
		nm -S "$src/maglev_sizes.o" >"$src/nm"; then
		cp "$src/nm" "$sizes"
	else
		fail "figures: the sizes build against $kdir failed:"
		tail -n 20 "$src/build.log"
	fi
fi

out=$(DOC_DIR=$dir UPDATE=$update SIZES=$sizes KDIR=$kdir python3 - <<'EOF'
import glob, os, re, subprocess

root = os.environ['DOC_DIR']
update = os.environ['UPDATE'] == '1'
kdir = os.environ['KDIR']
sizes = {}
for line in open(os.environ['SIZES']):
    w = line.split()   # address size type name
    if len(w) == 4 and w[3].startswith('maglev_sizeof_'):
        sizes[w[3][len('maglev_sizeof_'):]] = int(w[1], 16)

pages = [p for p in [os.path.join(root, 'README.md')] +
         sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
         if os.path.isfile(p)]


def run(args, stdin=''):
    r = subprocess.run(args, cwd=root, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode:
        raise RuntimeError('%s exits %d: %s' % (' '.join(args), r.returncode,
                                                r.stdout.strip()[-200:]))
    return r.stdout


stats_cache = {}


def stats(n, m):
    if (n, m) not in stats_cache:
        cmds = 'SIZE %d\n' % m + ''.join('ADD_NODE s%d\n' % i
                                         for i in range(n)) + 'STATS\n'
        out = run(['build/maglev-sim'], cmds).split()
        stats_cache[(n, m)] = dict(w.split('=', 1) for w in out if '=' in w)
    return stats_cache[(n, m)]


proc = {}
pf = os.path.join(root, 'tests/guest/26-figures.txt')
if os.path.isfile(pf):
    for line in open(pf):
        w = line.split()
        if len(w) == 4 and w[0] == 'proc':
            proc[(w[1], int(w[2]))] = w[3]


def metrics_table():
    rows = ['| metric | type | from | meaning |', '|---|---|---|---|']
    for line in run(['build/maglev-fleet', 'prom', '--metrics']).splitlines():
        name, typ, frm, hlp = line.split('\t')
        rows.append('| `%s` | %s | %s | %s |' % (name, typ, frm, hlp))
    return rows


# (kind, value) of KEY; value None: cannot be made here (a SKIP).
def value(key):
    if key.startswith('calc '):
        # arithmetic on other figures: "calc {proc own 3} * 240 + ..."
        kinds = []

        def one(mm):
            k, v = value(mm.group(1))
            kinds.append(k)
            if v is None:
                raise LookupError(k)
            return v
        try:
            expr = re.sub(r'\{([^{}]+)\}', one, key[5:])
        except LookupError as e:
            return str(e), None
        if not kinds or not re.fullmatch(r'[\d\s+*/()-]+', expr):
            raise RuntimeError('calc takes {KEY}s, numbers and + - * / ( )')
        return kinds[0], str(eval(expr.replace('/', '//')))
    m = re.fullmatch(r'(.*?)\s*(?:/\s*(\d+)|\s(pages))?', key)
    base, div, pages_ = m.group(1), m.group(2), m.group(3)
    w = base.split()
    if w[0] == 'test' and len(w) == 2:
        f = glob.glob(os.path.join(root, 'tests/guest/[0-9][0-9]-%s.sh' % w[1]))
        if len(f) != 1:
            raise RuntimeError('%d files tests/guest/NN-%s.sh' % (len(f), w[1]))
        kind, v = 'test numbers', int(os.path.basename(f[0])[:2])
    elif w[0] in ('bytes', 'width', 'scratch') and len(w) in (2, 3):
        st = stats(int(w[1]), int(w[2]) if len(w) == 3 else 65537)
        kind, v = 'packed sizes', int(st[w[0]])
    elif w[0] == 'sizeof' and len(w) == 2:
        if not kdir:
            return 'struct sizes', None
        if w[1] not in sizes:
            raise RuntimeError('no struct %s in scripts/figures/maglev_sizes.c' % w[1])
        kind, v = 'struct sizes', sizes[w[1]]
    elif w[0] == 'proc' and len(w) == 3:
        n = int(w[2])
        need = [('mem', n), ('table_mem', n)] if w[1] == 'own' else [(w[1], n)]
        if any(k not in proc for k in need):
            raise RuntimeError('not in tests/guest/26-figures.txt')
        if w[1] == 'own':
            v = int(proc[('mem', n)]) - int(proc[('table_mem', n)])
        else:
            v = int(proc[(w[1], n)])
        kind = '/proc figures'
    else:
        raise RuntimeError('unknown figure')
    if div:
        v //= int(div)
    if pages_:
        v = (v + 4095) // 4096
    return kind, str(v)


counts, skips, nfail = {}, {}, 0
for page in pages:
    rel = os.path.relpath(page, root)
    lines = open(page, encoding='utf-8').read().split('\n')
    new, changed, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        m = re.fullmatch(r'<!-- code: (.+?) -->', line.strip())
        if m:
            # a table: up to "<!-- /code -->"
            e = i + 1
            while e < len(lines) and lines[e].strip() != '<!-- /code -->':
                e += 1
            if e == len(lines):
                print('FAIL: figures: %s:%d: no "<!-- /code -->" after the '
                      'marker' % (rel, i + 1))
                nfail += 1
                new.extend(lines[i:])
                break
            shown = lines[i + 1:e]
            try:
                if m.group(1) != 'metrics':
                    raise RuntimeError('unknown table')
                want = metrics_table()
            except RuntimeError as err:
                print('FAIL: figures: %s:%d: "%s": %s' % (rel, i + 1, m.group(1), err))
                nfail += 1
                want = shown
            kind = 'metric lists'
            if shown == want:
                counts[kind] = counts.get(kind, 0) + 1
            elif update:
                print('PASS: figures: %s:%d: "%s" rewritten' % (rel, i + 1, m.group(1)))
                shown, changed = want, True
            else:
                k = next((k for k in range(min(len(shown), len(want)))
                          if shown[k] != want[k]), min(len(shown), len(want)))
                print('FAIL: figures: %s:%d: "%s" differs from what the tree '
                      'gives at its line %d: page "%s", tree "%s" '
                      '(scripts/doc-figures.sh --update)'
                      % (rel, i + 1, m.group(1), k + 1,
                         shown[k] if k < len(shown) else '(end)',
                         want[k] if k < len(want) else '(end)'))
                nfail += 1
            new.append(line)
            new.extend(shown)
            new.append(lines[e])
            i = e + 1
            continue

        def sub(mm):
            global nfail, changed
            key, shown = mm.group(1), mm.group(2)
            try:
                kind, want = value(key)
            except RuntimeError as err:
                print('FAIL: figures: %s:%d: "%s": %s' % (rel, i + 1, key, err))
                nfail += 1
                return mm.group(0)
            if want is None:
                skips[kind] = skips.get(kind, 0) + 1
                return mm.group(0)
            if shown == want:
                counts[kind] = counts.get(kind, 0) + 1
                return mm.group(0)
            if update:
                print('PASS: figures: %s:%d: "%s" rewritten: %s, was %s'
                      % (rel, i + 1, key, want, shown))
                changed = True
                return '<!-- code: %s -->%s<!-- /code -->' % (key, want)
            print('FAIL: figures: %s:%d: "%s" is %s here, the tree gives %s '
                  '(scripts/doc-figures.sh --update)' % (rel, i + 1, key, shown, want))
            nfail += 1
            return mm.group(0)
        new.append(re.sub(r'<!-- code: (.+?) -->(.*?)<!-- /code -->', sub, line))
        i += 1
    if changed:
        with open(page, 'w', encoding='utf-8') as f:
            f.write('\n'.join(new))
# Tests named by number and name ("test 24-takeover", "guest tests
# 12-fleet and ...") in the pages and the Makefile: the file must exist.
named = 0
for rel in [os.path.relpath(p, root) for p in pages] + ['Makefile']:
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        continue
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        for mm in re.finditer(r'\btests? (?:\d\d-[a-z][a-z0-9-]*(?:,? (?:and )?)?)+',
                              line):
            for t in re.findall(r'\d\d-[a-z][a-z0-9-]*[a-z0-9]', mm.group(0)):
                named += 1
                if not os.path.isfile(os.path.join(root, 'tests/guest',
                                                   t + '.sh')):
                    print('FAIL: figures: %s:%d: test %s: no tests/guest/%s.sh'
                          % (rel, n, t, t))
                    nfail += 1
                else:
                    counts['test numbers'] = counts.get('test numbers', 0) + 1
for kind in sorted(counts):
    print('PASS: figures: %d %s in the pages equal what the tree gives'
          % (counts[kind], kind))
for kind in sorted(skips):
    print('SKIP: figures: %d %s not checked: no kernel tree (--kdir, DOC_KDIR)'
          % (skips[kind], kind))
EOF
) || fail "figures: the checker failed"
tally <<<"$out"
summary
