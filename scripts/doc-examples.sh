#!/bin/bash
# doc-examples.sh [--update] [--demo TRANSCRIPT | --host] [DIR]: the examples in the
# docs that show what a run prints are generated from real runs; this
# checks them (default) or rewrites them (--update).
#
# A generated example is a fenced code block between two markers in a page
# of DIR (default: this repository; README.md and docs/*.md):
#
#   <!-- generated: SOURCE -->
#   ```text
#   ...
#   ```
#   <!-- end -->
#
# SOURCE is one of
#   demo act A     act A (Setup, 1, 2, 3, 4, Summary) of a make demo
#                  transcript, from its "== A..." line to the next act
#   demo proc      act 1's "# cat /proc/net/ip_vs_maglev" and its lines
#   output of the block above
#                  what the fenced sh block just above the marker prints,
#                  run with bash in DIR after "make tools" (so
#                  build/maglev-sim and build/maglev-fleet exist); these
#                  run on the host, from the tree itself and the captures
#                  in tests/data/, and are always checked
#
# make demo writes its transcript to build/demo/transcript.txt (the guest's
# output, as shown); --demo names another (the fresh step's). Without a
# transcript the demo examples are skipped ("SKIP:"), not failed. --host
# checks the host examples alone and says how many demo examples it left
# out: scripts/doc-check.sh's mode, whose demo examples the fresh step
# checks against its own run.
#
# Figures that differ from one run to the next are compared masked ("#"):
# build_ns, builds, churn, fills, found and table (the table's number) on
# /proc lines, which depend on how changes were batched, "took N s", and every number
# of the fleet act (act 4: which LB and real server a connection gets
# depends on the client's random source ports). The page keeps the run's
# own figures.
#
# Regenerate after the demo's output changed (then commit the pages):
#   make demo && scripts/doc-examples.sh --update
# Prints PASS:/FAIL:/SKIP: lines and ends with "N passed, N failed".
set -eu
. "$(dirname "$0")/lib.sh"

update=0
demo=
host=0
while [ $# -gt 0 ]; do
	case $1 in
	--update) update=1; shift ;;
	--demo) demo=$2; shift 2 ;;
	--host) host=1; shift ;;
	-*) die "usage: doc-examples.sh [--update] [--demo TRANSCRIPT | --host] [DIR]" ;;
	*) break ;;
	esac
done
dir=$(cd "${1:-$TOP}" && pwd)
[ -n "$demo" ] || demo=$dir/build/demo/transcript.txt
need_pkgs python3 make

# The host examples run maglev-sim and maglev-fleet: build them if the tree
# has them (the doc checker's self-test tree has no tools).
if grep -q '<!-- generated: output of the block above -->' \
	"$dir"/README.md "$dir"/docs/*.md 2>/dev/null; then
	make -s --no-print-directory -C "$dir" tools >/dev/null 2>&1 ||
		fail "examples: make tools failed in $dir"
fi

out=$(DOC_DIR=$dir DEMO=$demo UPDATE=$update HOST_ONLY=$host python3 - <<'EOF'
import glob, os, re, subprocess

root = os.environ['DOC_DIR']
demo_path = os.environ['DEMO']
update = os.environ['UPDATE'] == '1'
host_only = os.environ['HOST_ONLY'] == '1'
left_out = 0

pages = [p for p in [os.path.join(root, 'README.md')] +
         sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
         if os.path.isfile(p)]

demo = None
if os.path.isfile(demo_path):
    demo = open(demo_path, encoding='utf-8').read().split('\n')


def act(name):
    """Lines of act NAME of the transcript, None if it has none."""
    out, on = [], False
    for line in demo:
        m = re.match(r'^== (.*) ==$', line)
        if m:
            if on:
                break
            t = m.group(1)
            on = t == name or t.startswith(name + '. ')
        if on:
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out or None


def demo_source(what):
    if demo is None:
        return None
    if what == 'proc':
        a = act('1') or []
        out, on = [], False
        for line in a:
            if line == '# cat /proc/net/ip_vs_maglev':
                on = True
            elif on and not (line.startswith('service ') or
                             line.startswith('  dest ') or
                             line.startswith('namespace ')):
                break
            if on:
                out.append(line)
        return out or None
    m = re.match(r'^act (\S+)$', what)
    return act(m.group(1)) if m else None


def mask(lines, source):
    out = []
    for line in lines:
        line = re.sub(r'\b(build_ns|builds|churn|fills|found|table) \d+',
                      r'\1 #', line)
        line = re.sub(r'took \d+ s', 'took # s', line)
        if source == 'demo act 4':
            # the columns widen with their numbers
            line = re.sub(r' +', ' ', re.sub(r'\b\d+\b', '#', line))
        out.append(line)
    return out


def run_block(code):
    r = subprocess.run(['bash', '-c', 'set -o pipefail\n' + code], cwd=root,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120)
    lines = r.stdout.rstrip('\n').split('\n')
    if r.returncode != 0:
        return None, 'the block exits %d: %s' % (r.returncode,
                                                 ' | '.join(lines[-3:]))
    return lines, None


npass = nfail = 0
for page in pages:
    rel = os.path.relpath(page, root)
    lines = open(page, encoding='utf-8').read().split('\n')
    new, i, changed = [], 0, False
    last_sh = None      # the last fenced sh block before a marker
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^```sh\s*$', line)
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith('```'):
                j += 1
            last_sh = '\n'.join(lines[i + 1:j])
            new.extend(lines[i:j + 1])
            i = j + 1
            continue
        m = re.match(r'^<!-- generated: (.*?) -->\s*$', line)
        if not m:
            new.append(line)
            i += 1
            continue
        source, n = m.group(1), i + 1
        # The block: ```text ... ``` then <!-- end -->.
        if n >= len(lines) or not lines[n].startswith('```'):
            print('FAIL: examples: %s:%d: no code block after the marker'
                  % (rel, i + 1))
            nfail += 1
            new.append(line)
            i += 1
            continue
        e = n + 1
        while e < len(lines) and not lines[e].startswith('```'):
            e += 1
        if e + 1 >= len(lines) or lines[e + 1].strip() != '<!-- end -->':
            print('FAIL: examples: %s:%d: no "<!-- end -->" after the block'
                  % (rel, i + 1))
            nfail += 1
            new.extend(lines[i:e + 1])
            i = e + 1
            continue
        shown = lines[n + 1:e]
        where = '%s:%d (%s)' % (rel, i + 1, source)
        err = None
        if source.startswith('demo ') and host_only:
            want = None
            left_out += 1
        elif source.startswith('demo '):
            want = demo_source(source[5:])
            if want is None:
                if demo is None:
                    print('SKIP: examples: %s: no make demo transcript' % where)
                else:
                    err = 'the transcript has no such part'
        elif source == 'output of the block above':
            if last_sh is None:
                want, err = None, 'no sh block above'
            else:
                want, err = run_block(last_sh)
        else:
            want, err = None, 'unknown source'
        if err:
            print('FAIL: examples: %s: %s' % (where, err))
            nfail += 1
        elif want is not None:
            if mask(shown, source) == mask(want, source):
                print('PASS: examples: %s' % where)
                npass += 1
            elif update:
                print('PASS: examples: %s: rewritten' % where)
                npass += 1
                shown, changed = want, True
            else:
                a, b = mask(shown, source), mask(want, source)
                k = next((k for k in range(min(len(a), len(b)))
                          if a[k] != b[k]), min(len(a), len(b)))
                print('FAIL: examples: %s: the page differs from the run at '
                      'its line %d: page "%s", run "%s"'
                      % (where, k + 1, a[k] if k < len(a) else '(end)',
                         b[k] if k < len(b) else '(end)'))
                nfail += 1
        new.extend(lines[i:n + 1])
        new.extend(shown)
        new.extend(lines[e:e + 2])
        i = e + 2
        last_sh = None
    if changed:
        with open(page, 'w', encoding='utf-8') as f:
            f.write('\n'.join(new))
if host_only:
    print('# examples: %d make demo examples left to the fresh step, '
          'which checks them against its run' % left_out)
EOF
) || fail "examples: the checker failed"
tally <<<"$out"
summary
