#!/bin/bash
# doc-check.sh [DIR]: check the documentation of the tree at DIR (default:
# this repository): README.md, docs/*.md and scripts/README.
#   links    every relative Markdown link [x](path) and [x](path#anchor)
#            points to an existing file and, for an anchor, to a heading of
#            that file (GitHub's slugs: lower case, punctuation other than
#            - and _ dropped, spaces to -, -1, -2, ... for repeats)
#   make     every "make TARGET" in backticks or in a code block names a
#            target of DIR/Makefile
#   paths    every repository path in backticks (first component a
#            top-level directory of DIR, or a top-level file name such as
#            maglev_main.c) exists; NN, VER, ... and * match like a glob
#   help     every .PHONY target of DIR/Makefile appears in "make help"
#   length   README.md has at most README_MAX_LINES (320) lines
#   bad-input every test that docs/bad-input.md's table names exists (its
#            own section below: guest NN, host `test_x`, `fuzz_x`, sim),
#            each but a fuzz target quotes a check of it, and every check
#            quoted is a check of that test's file
# and the operator's documentation (scripts/doc-check-ops.py):
#   refs     a heading named in prose, FILE's "Title", FILE, "Title" or
#            FILE ("Title", "Other") with FILE a page (README, README.md,
#            docs/x.md, x.md) or a source file: the page has that heading,
#            the source file that text
#   jargon   no project-history words in README.md and docs/*.md ("seed
#            002", "issue 22", "third session", "since this branch", ...)
#   figures  a figure quoted as <!-- figure: NAME -->VALUE<!-- /figure -->
#            equals the row NAME of the table under "## Current figures"
#            in docs/testing.md, the one place such a figure is measured
#   version  MODULE_VERSION in maglev_main.c, dkms.conf's and
#            debian/*.dkms's PACKAGE_VERSION, debian/changelog's and
#            NEWS's first entries agree, and so do the versions the docs
#            name (ip_vs_maglev/V, *_V_all.deb)
#   operating  every command line of a ```sh block of docs/operating.md
#            is in tests/guest/26-operating.sh, which runs them
#   examples scripts/doc-examples.sh --host: every generated example the
#            host can make equals what its command prints now (the make
#            demo ones are checked by the fresh step, against its run);
#            its SKIP lines and exit status count
#   figures (code) scripts/doc-figures.sh: every figure that describes
#            the code (<!-- code: KEY -->VALUE<!-- /code -->: test numbers,
#            packed table sizes, struct sizes, /proc figures, the metric
#            list) equals what the tree gives now; struct sizes need a
#            kernel tree (DOC_KDIR, which static-check.sh sets; SKIP without)
# Prints PASS:/FAIL: lines and ends with "N passed, N failed".
set -eu
. "$(dirname "$0")/lib.sh"

dir=$(cd "${1:-$TOP}" && pwd)
need_pkgs python3 make

help_out=$(make -s --no-print-directory -C "$dir" help 2>&1) ||
	fail "docs: make help failed: $help_out"

rc=0
out=$(DOC_DIR=$dir HELP_OUT=$help_out \
	README_MAX_LINES=${README_MAX_LINES:-320} python3 - <<'EOF'

import glob, os, re

root = os.environ['DOC_DIR']
help_out = os.environ['HELP_OUT']
max_lines = int(os.environ['README_MAX_LINES'])

# Targets of the kernel's own build system, named in the docs as
# "make -C $KDIR ..." or "make ARCH=i386 modules_prepare"; not ours.
KERNEL_TARGETS = {'modules_prepare', 'olddefconfig', 'tinyconfig',
                  'modules_install'}

docs = [f for f in ['README.md'] +
        sorted(os.path.relpath(p, root)
               for p in glob.glob(os.path.join(root, 'docs', '*.md'))) +
        ['scripts/README'] if os.path.isfile(os.path.join(root, f))]


def read(rel):
    with open(os.path.join(root, rel), encoding='utf-8') as f:
        return f.read().split('\n')


def split(lines):
    """(text lines outside code blocks, code block lines), with numbers."""
    text, code, fence = [], [], None
    for n, line in enumerate(lines, 1):
        m = re.match(r'\s*(```|~~~)', line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            continue
        if fence or line.startswith('    ') or line.startswith('\t'):
            code.append((n, line))
        else:
            text.append((n, line))
    return text, code


def slug(heading):
    s = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # links: text
    s = s.replace('`', '').strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


anchor_cache = {}


def anchors(rel):
    if rel not in anchor_cache:
        seen, out = {}, set()
        text, _ = split(read(rel))
        for _, line in text:
            m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
            if not m:
                continue
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else '%s-%d' % (s, k))
        anchor_cache[rel] = out
    return anchor_cache[rel]


def makefile_targets():
    path = os.path.join(root, 'Makefile')
    if not os.path.isfile(path):
        return set(), set()
    src = open(path, encoding='utf-8').read().replace('\\\n', ' ')
    var = {}
    for m in re.finditer(r'^(\w+)\s*[:?]?=\s*(.*)$', src, re.M):
        var.setdefault(m.group(1), m.group(2).strip())
    targets, phony = set(), set()
    for m in re.finditer(r'^([^\s#=:][^=:]*?)\s*:(?!=)(.*)$', src, re.M):
        names = re.sub(r'\$\((\w+)\)', lambda v: var.get(v.group(1), ''),
                       m.group(1)).split()
        if m.group(1) == '.PHONY':
            phony.update(m.group(2).split())
        targets.update(n for n in names if not n.startswith('.'))
    return targets | phony, phony


def code_spans(lines):
    for n, line in lines:
        for m in re.finditer(r'(`+)(.+?)\1', line):
            yield n, m.group(2).strip()


def make_targets_in(s):
    """The targets of each make command in the string s: "make" first in a
    command (after a prompt and VAR=value words), not "apt-get install
    make". Commands with -C run another tree's Makefile."""
    for cmd in re.split(r'[;&|()]+', s):
        # A placeholder such as <stock 6.12 headers> is one word.
        cmd = re.sub(r'<[^<>]*>', 'PLACEHOLDER', cmd)
        words = re.findall(r'(?:[^\s"\']|"[^"]*"|\'[^\']*\')+', cmd)
        while words and (words[0] in ('$', '#', 'sudo') or
                         re.match(r'^\w+=', words[0])):
            words = words[1:]
        if not words or words[0] != 'make' or '-C' in words:
            continue
        for w in words[1:]:
            if w.startswith('-') or '=' in w:
                continue
            if not re.match(r'^[\w./-]+$', w):
                break
            yield w


def help_targets(out):
    """Targets "make help" lists: the words of its "make ..." column."""
    listed = set()
    for line in out.split('\n'):
        m = re.match(r'^\s*make\s+(.*?)(?:\s{2,}|$)', line)
        if m:
            listed.update(w for w in re.split(r'[\s\[\]|,]+', m.group(1))
                          if re.match(r'^[\w.-]+$', w))
    return listed


top = set(os.listdir(root))
top_dirs = {e for e in top if os.path.isdir(os.path.join(root, e))
            and e not in ('.git', 'build')}
tree = set()
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x not in ('.git', 'build')]
    tree.update(files)
# Bare file names of this project (not the kernel's ip_vs_mh.c, say).
FILE_RE = re.compile(r'^(maglev|ring)[\w-]*\.[ch]$|'
                     r'^(Makefile|Kbuild|dkms\.conf|README\.md)$')


def path_ok(p):
    if os.path.exists(os.path.join(root, p)):
        return True
    # Placeholders such as NN or VER match like *.
    pat = re.sub(r'(?<![a-z])[A-Z]{2,}(?![a-z])', '*', p)
    return bool(glob.glob(os.path.join(root, pat)))


def looks_like_path(tok):
    if tok.startswith('/') or tok.startswith('./') or '://' in tok:
        return False
    if not re.match(r'^[\w.*/-]+$', tok):
        return False
    if '/' in tok:
        return tok.split('/', 1)[0] in top_dirs
    return bool(FILE_RE.match(tok))


targets, phony = makefile_targets()

for rel in docs:
    lines = read(rel)
    text, code = split(lines)
    base = os.path.dirname(rel)
    bad = {'links': 0, 'make': 0, 'paths': 0}
    count = {'links': 0, 'make': 0, 'paths': 0}

    # Links, outside code blocks and code spans.
    for n, line in text:
        plain = re.sub(r'(`+).+?\1', '', line)
        for m in re.finditer(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)',
                             plain):
            target = m.group(1)
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue   # http:, https:, mailto:
            count['links'] += 1
            path, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(base, path)) if path else rel
            if dest.startswith('..') or \
               not os.path.exists(os.path.join(root, dest)):
                print('FAIL: docs: %s:%d: link %s: no such file'
                      % (rel, n, target))
                bad['links'] += 1
            elif anchor and dest.endswith('.md') and \
                    anchor not in anchors(dest):
                print('FAIL: docs: %s:%d: link %s: no heading #%s in %s'
                      % (rel, n, target, anchor, dest))
                bad['links'] += 1

    # make TARGET, in code spans and code blocks.
    if os.path.isfile(os.path.join(root, 'Makefile')):
        found = [(n, s) for n, s in code_spans(text)] + code
        for n, s in found:
            for t in make_targets_in(s):
                count['make'] += 1
                if t not in targets and t not in KERNEL_TARGETS:
                    print('FAIL: docs: %s:%d: make %s: no such target in '
                          'Makefile' % (rel, n, t))
                    bad['make'] += 1

    # Repository paths in code spans.
    for n, s in code_spans(text):
        for tok in s.split():
            tok = tok.strip('(),;:"\'')
            tok = re.sub(r'[.,;:]+$', '', tok) if not tok.endswith('/') \
                else tok
            if not looks_like_path(tok):
                continue
            count['paths'] += 1
            if not (path_ok(tok) or '/' not in tok and tok in tree):
                print('FAIL: docs: %s:%d: %s: no such file or directory'
                      % (rel, n, tok))
                bad['paths'] += 1

    for k in ('links', 'make', 'paths'):
        if not bad[k]:
            print('PASS: docs: %s: %s (%d)' % (rel, k, count[k]))

if os.path.isfile(os.path.join(root, 'Makefile')):
    listed = help_targets(help_out)
    missing = [t for t in sorted(phony) if t not in listed]
    if missing:
        print('FAIL: docs: make help does not list: %s' % ' '.join(missing))
    else:
        print('PASS: docs: make help lists every .PHONY target (%d)'
              % len(phony))

if os.path.isfile(os.path.join(root, 'README.md')):
    n = open(os.path.join(root, 'README.md'), encoding='utf-8').read().count('\n')
    if n > max_lines:
        print('FAIL: docs: README.md has %d lines, more than %d'
              % (n, max_lines))
    else:
        print('PASS: docs: README.md has %d lines (at most %d)'
              % (n, max_lines))
EOF
) || rc=$?
tally <<<"$out"
[ "$rc" -eq 0 ] || fail "docs: the checker failed (status $rc)"

# --- bad-input: the tests docs/bad-input.md names exist ----------------------
# Each row of its table ends with the tests that check it, separated by
# commas, each optionally followed by a part of it in parentheses:
#   guest NN      tests/guest/NN-*.sh (exactly one file)
#   host `test_x` a function test_x() in tests/maglev_test.c
#   `fuzz_x`      tests/fuzz/fuzz_x.c
#   sim           tests/sim/run.sh
# In the parentheses, every `name` in backticks (a path if it has a /) must
# be found in that test's file (or exist), and every "quoted text" (the
# check's text, as its PASS line prints it) on a line of a check in that
# file: a line, not a comment, whose command is pass, check*, expect*,
# compare_choices, *refused, logged or run, or a function of the test or
# of tests/guest/lib.sh whose body makes such a call (guest 29's same),
# with a quoted first argument (C: check(...), run("name", test_x)), or
# one of the three lines after such a call (its continued arguments). A guest, host or sim
# test must quote at least one check; a fuzz target checks by failing on
# a crash and needs none. Any other entry, and a row naming no test,
# fails. Self-contained: the other sections of this file do not depend on
# it, nor it on them.
bad_input_check() {
	local out2 rc2=0
	[ -f "$dir/docs/bad-input.md" ] || return 0
	out2=$(DOC_DIR=$dir python3 - <<'EOF'
import glob, os, re

root = os.environ['DOC_DIR']
rel = 'docs/bad-input.md'
lines = open(os.path.join(root, rel), encoding='utf-8').read().split('\n')


def split_top(col):
    """Split at commas outside parentheses and backticks."""
    items, cur, depth, tick = [], '', 0, False
    for ch in col:
        if ch == '`':
            tick = not tick
        elif not tick and ch == '(':
            depth += 1
        elif not tick and ch == ')':
            depth -= 1
        if ch == ',' and depth == 0 and not tick:
            items.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def test_file(name):
    """(the file of the test named, or None and why)."""
    m = re.fullmatch(r'guest (\d\d)', name)
    if m:
        found = glob.glob(os.path.join(root, 'tests/guest',
                                       m.group(1) + '-*.sh'))
        if len(found) != 1:
            return None, 'guest %s: %d files tests/guest/%s-*.sh' % (
                m.group(1), len(found), m.group(1))
        return found[0], None
    m = re.fullmatch(r'host `(test_\w+)`', name)
    if m:
        f = os.path.join(root, 'tests/maglev_test.c')
        src = open(f, encoding='utf-8').read() if os.path.isfile(f) else ''
        if not re.search(r'^static \w+ %s\(' % m.group(1), src, re.M):
            return None, 'host %s: no such function in tests/maglev_test.c' \
                % m.group(1)
        return f, None
    m = re.fullmatch(r'`(fuzz_\w+)`', name)
    if m:
        f = os.path.join(root, 'tests/fuzz', m.group(1) + '.c')
        if not os.path.isfile(f):
            return None, '%s: no tests/fuzz/%s.c' % (m.group(1), m.group(1))
        return f, None
    if name == 'sim':
        f = os.path.join(root, 'tests/sim/run.sh')
        if not os.path.isfile(f):
            return None, 'sim: no tests/sim/run.sh'
        return f, None
    return None, "'%s' names no test (guest NN, host `test_x`, `fuzz_x`, sim)" \
        % name


# A line that makes a check (see above).
CHECK_RE = re.compile(r'(^|[;&|{(]|\bthen|\belse|\bdo)\s*(pass|check\w*|'
                      r'expect\w*|compare_choices|\w*refused|logged|run)'
                      r'(\s+"|\()')


def helpers(src):
    """The shell functions of src whose body makes a check (pass, or a
    call of another check), e.g. guest 29's same(): their calls are checks
    too."""
    out, name, body = set(), None, []
    for line in src.split('\n'):
        m = re.match(r'^(\w+)\(\)\s*\{', line)
        if m:
            name, body = m.group(1), []
            continue
        if name and line.startswith('}'):
            if CHECK_RE.search('\n'.join(body)):
                out.add(name)
            name = None
            continue
        if name:
            body.append(line)
    return out


def check_calls(f, src):
    """CHECK_RE, and the calls of the check helpers of f and, for a guest
    test, of tests/guest/lib.sh."""
    names = helpers(src)
    lib = os.path.join(root, 'tests/guest/lib.sh')
    if '/tests/guest/' in f and os.path.isfile(lib):
        names |= helpers(open(lib, encoding='utf-8').read())
    if not names:
        return CHECK_RE
    return re.compile(CHECK_RE.pattern + '|' +
                      r'(^|[;&|{(]|\bthen|\belse|\bdo)\s*(%s)\s+"' %
                      '|'.join(sorted(names)))


# A comment line (shell or C) is never a check.
COMMENT_RE = re.compile(r'^\s*(#|/?\*|//)')
rows = bad = named = checks = 0
for n, line in enumerate(lines, 1):
    if not line.startswith('|') or re.match(r'^\|[-| ]+\|$', line) or \
            line.startswith('| input |'):
        continue
    rows += 1
    cols = [c.strip() for c in line.strip().strip('|').split(' | ')]
    items = split_top(cols[-1]) if len(cols) > 1 else []
    if not items:
        print('FAIL: docs: %s:%d: the row names no test' % (rel, n))
        bad += 1
        continue
    for item in items:
        m = re.fullmatch(r'(.*?)(?:\s*\((.*)\))?', item)
        name, part = m.group(1).strip(), m.group(2)
        f, err = test_file(name)
        named += 1
        if err:
            print('FAIL: docs: %s:%d: %s' % (rel, n, err))
            bad += 1
            continue
        quoted = re.findall(r'"([^"]+)"', part or '')
        if not quoted and not name.startswith('`fuzz_'):
            print('FAIL: docs: %s:%d: %s: names no check of it (a "quoted" '
                  'PASS text)' % (rel, n, name))
            bad += 1
        if not part:
            continue
        src = open(f, encoding='utf-8').read()
        src_lines = src.split('\n')
        check_re = check_calls(f, src)
        call = [bool(check_re.search(l)) and not COMMENT_RE.match(l)
                for l in src_lines]
        for tok in re.findall(r'`([^`]+)`', part):
            if '/' in tok:
                ok = os.path.exists(os.path.join(root, tok))
            else:
                ok = re.search(r'(?<!\w)%s(?!\w)' % re.escape(tok), src)
            if not ok:
                print('FAIL: docs: %s:%d: %s: %s not in %s' % (
                    rel, n, name, tok, os.path.relpath(f, root)))
                bad += 1
        for txt in quoted:
            at = [k for k, l in enumerate(src_lines)
                  if txt in l and not COMMENT_RE.match(l)]
            if not at:
                print('FAIL: docs: %s:%d: %s: "%s" not in %s' % (
                    rel, n, name, txt, os.path.relpath(f, root)))
                bad += 1
            elif not any(any(call[max(0, k - 3):k + 1]) for k in at):
                print('FAIL: docs: %s:%d: %s: "%s" is in %s, but not in '
                      'a check' % (rel, n, name, txt,
                                   os.path.relpath(f, root)))
                bad += 1
                checks += 1
            else:
                checks += 1
if not rows:
    print('FAIL: docs: %s: no table rows found' % rel)
elif not bad:
    print('PASS: docs: %s: every test named exists and every check '
          'quoted is one of its checks (%d rows, %d tests named, %d checks)'
          % (rel, rows, named, checks))
EOF
) || rc2=$?
	tally <<<"$out2"
	[ "$rc2" -eq 0 ] || fail "docs: the bad-input checker failed (status $rc2)"
}
bad_input_check

# The operator's documentation: refs, jargon, figures, version, operating
# (scripts/doc-check-ops.py) and the generated examples.
rc=0
out=$(python3 "$TOP/scripts/doc-check-ops.py" "$dir") || rc=$?
tally <<<"$out"
[ "$rc" -eq 0 ] || fail "docs: doc-check-ops.py failed (status $rc)"
# The host examples (the make demo ones are the fresh step's): every
# PASS, FAIL and SKIP line counts, and so does its exit status.
if [ -f "$dir/scripts/doc-examples.sh" ]; then
	rc=0
	out=$(bash "$dir/scripts/doc-examples.sh" --host "$dir" 2>&1) || rc=$?
	tally < <(grep -vE "$SUMMARY_RE" <<<"$out")
	[ "$rc" -eq 0 ] || grep -q '^FAIL: ' <<<"$out" ||
		fail "docs: doc-examples.sh exited with status $rc and no FAIL line"
fi

# The figures that describe the code (scripts/doc-figures.sh), in their
# own function: generated from the tree, checked here so that a change of
# the code that changes one fails until the page is regenerated.
code_figures_check() {
	[ -f "$dir/scripts/doc-figures.sh" ] || return 0
	local frc=0 fout
	fout=$(bash "$dir/scripts/doc-figures.sh" "$dir" 2>&1) || frc=$?
	tally < <(grep -E '^(PASS|FAIL|SKIP): ' <<<"$fout")
	[ "$frc" -eq 0 ] || grep -q '^FAIL: ' <<<"$fout" ||
		fail "docs: doc-figures.sh exited with status $frc and no FAIL line"
}
code_figures_check
summary
