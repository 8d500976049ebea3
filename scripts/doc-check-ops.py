#!/usr/bin/env python3
# doc-check-ops.py DIR: the operator's documentation checks of
# scripts/doc-check.sh (refs, jargon, figures, version, operating; its
# header says what each checks). Each part is skipped in a tree without
# its files. Prints PASS:/FAIL: lines.
import glob, os, re, sys

root = sys.argv[1]
pages = [f for f in ['README.md'] + sorted(
    os.path.relpath(p, root) for p in glob.glob(os.path.join(root, 'docs', '*.md')))
    if os.path.isfile(os.path.join(root, f))]


def read(rel):
    with open(os.path.join(root, rel), encoding='utf-8') as f:
        return f.read()


def prose(rel):
    """(first line number, text) per paragraph outside code blocks."""
    out, cur, start, fence = [], [], 0, False
    for n, line in enumerate(read(rel).split('\n'), 1):
        if re.match(r'\s*(```|~~~)', line):
            fence = not fence
            continue
        if fence or line.startswith('    ') or not line.strip():
            if cur:
                out.append((start, ' '.join(cur)))
            cur = []
            continue
        if not cur:
            start = n
        cur.append(line.strip())
    if cur:
        out.append((start, ' '.join(cur)))
    return out


def headings(rel):
    hs = set()
    for line in read(rel).split('\n'):
        m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
        if m:
            hs.add(re.sub(r'[`*]', '', m.group(1)).strip().lower())
    return hs


# --- refs: FILE's "Title", FILE, "Title", FILE ("Title", "Other")
FILE = (r'(?<![\w/.-])((?:scripts/)?README(?:\.md)?|(?:docs/)?[\w-]+\.md|'
        r'(?:include|tools|scripts|tests)/[\w./-]+\.(?:h|c|sh))')
QUOTES = r'((?:"[^"]+"(?:,\s*|\s+and\s+|\s+or\s+)?)+)'
# After a page: 's "T", , "T", ("T", (sections "T"; after a source file
# only the last two (a list of files with a comma is no reference).
AFTER_PAGE = re.compile(r'`?\)?(?:\'s\s+|,\s*|:\s*|\s*\((?:sections?\s+)?)' + QUOTES)
AFTER_SRC = re.compile(r'`?(?:\'s\s+|\s*\((?:sections?\s+)?)' + QUOTES)
nref = bad = 0
for rel in pages:
    for n, para in prose(rel):
        plain = re.sub(r'\]\([^)]*\)', ']', para)
        for m in re.finditer(FILE, plain):
            f = m.group(1)
            after = AFTER_PAGE if f.endswith(('.md', 'README')) else AFTER_SRC
            q = after.match(plain[m.end():m.end() + 200])
            if not q:
                continue
            if f == 'README':
                f = 'README.md'
            if f.endswith('.md') and '/' not in f and f != 'README.md':
                f = 'docs/' + f
            if not os.path.isfile(os.path.join(root, f)):
                continue   # the links and paths checks report missing files
            for title in re.findall(r'"([^"]+)"', q.group(1)):
                nref += 1
                t = re.sub(r'[`*]', '', title).strip().lower()
                ok = t in headings(f) if f.endswith('.md') \
                    else t in read(f).lower()
                if not ok:
                    print('FAIL: docs: %s:%d: reference %s, "%s": no such '
                          '%s' % (rel, n, f, title,
                                  'heading' if f.endswith('.md') else 'text'))
                    bad += 1
if not bad:
    print('PASS: docs: prose references to headings (%d)' % nref)

# --- jargon
JARGON = [r'\bseeds? 0\d\d\b', r'\bissues? \d+\b',
          r'\b(?:first|second|third|fourth|another) session\b',
          r'\bthis session\b', r'\b(?:since|on) this branch\b',
          r'\ban earlier version of this (?:README|page)\b']
nj = 0
for rel in pages:
    for n, line in enumerate(read(rel).split('\n'), 1):
        for j in JARGON:
            m = re.search(j, line, re.I)
            if m:
                print('FAIL: docs: %s:%d: project-history jargon "%s"'
                      % (rel, n, m.group(0)))
                nj += 1
if not nj:
    print('PASS: docs: no project-history jargon in %d pages' % len(pages))

# --- figures
FIG = 'docs/testing.md'
quoted = [(rel, n, m.group(1).strip(), m.group(2).strip())
          for rel in pages
          for n, line in enumerate(read(rel).split('\n'), 1)
          for m in re.finditer(r'<!-- figure: (.+?) -->(.*?)<!-- /figure -->',
                               re.sub(r'`[^`]*`', '', line))]
if os.path.isfile(os.path.join(root, FIG)) or quoted:
    table, on = {}, False
    if os.path.isfile(os.path.join(root, FIG)):
        for line in read(FIG).split('\n'):
            if line.startswith('## '):
                on = line.strip() == '## Current figures'
                continue
            m = re.match(r'^\|\s*([a-z][\w -]*?)\s*\|\s*([^|]+?)\s*\|', line)
            if on and m and m.group(1) != 'figure':
                table[m.group(1)] = m.group(2)
    badf = 0
    for rel, n, name, val in quoted:
        if name not in table:
            print('FAIL: docs: %s:%d: figure "%s" is not in %s, '
                  '"Current figures"' % (rel, n, name, FIG))
            badf += 1
        elif val != table[name]:
            print('FAIL: docs: %s:%d: figure "%s" is "%s" here, "%s" in %s'
                  % (rel, n, name, val, table[name], FIG))
            badf += 1
    if not badf:
        print('PASS: docs: %d quoted figures equal %s\'s table (%d named)'
              % (len(quoted), FIG, len(table)))


# --- version
def first(path, rx, missing=''):
    p = os.path.join(root, path)
    if not os.path.isfile(p):
        return None
    m = re.search(rx, open(p, encoding='utf-8').read(), re.M)
    return m.group(1) if m else missing


vers = {
    'maglev_main.c MODULE_VERSION':
        first('maglev_main.c', r'^MODULE_VERSION\("([^"]*)"\)'),
    'dkms.conf': first('dkms.conf', r'^PACKAGE_VERSION="?([^"\s]*)"?'),
    'debian/changelog': first('debian/changelog', r'^\S+ \(([^)]*)\)'),
    'NEWS': first('NEWS', r'^(\d[\w.~+-]*)(?: |$)'),
}
for f in sorted(glob.glob(os.path.join(root, 'debian', '*.dkms'))):
    v = first(os.path.relpath(f, root), r'^PACKAGE_VERSION="?([^"\s]*)"?',
              None)
    if v is not None and v != '#MODULE_VERSION#':
        vers[os.path.relpath(f, root)] = v
vers = {k: v for k, v in vers.items() if v is not None}
if vers:
    for rel in pages:
        for n, line in enumerate(read(rel).split('\n'), 1):
            for m in re.finditer(r'ip_vs_maglev/(\d[\w.]*)|_(\d[\w.]*)_all\.deb',
                                 line):
                vers['%s:%d' % (rel, n)] = m.group(1) or m.group(2)
    vals = set(vers.values())
    if len(vals) == 1 and '' not in vals:
        print('PASS: docs: version %s in %s' % (
            vals.pop(), ', '.join(k for k in vers if ':' not in k) +
            ' and %d places in the docs' % sum(':' in k for k in vers)))
    else:
        print('FAIL: docs: the versions differ: %s' % '; '.join(
            '%s %s' % (k, v or '(none)') for k, v in sorted(vers.items())))

# --- operating: every command line of docs/operating.md's sh blocks is run
# by guest test 26 (commands run in an LB's namespace there, "nsx LB CMD",
# count as CMD; "ssh LB CMD" on the page likewise).
OPS, TEST = 'docs/operating.md', 'tests/guest/26-operating.sh'
if os.path.isfile(os.path.join(root, OPS)):
    def norm(l):
        l = re.sub(r'(?:nsx|ssh) (?:"\$lb"|\$lb|lb\d) ', '', l)
        return re.sub(r'\s+', ' ', l).strip()
    tl = [norm(l) for l in read(TEST).split('\n')] \
        if os.path.isfile(os.path.join(root, TEST)) else []
    no = bado = 0
    fence = False
    for n, line in enumerate(read(OPS).split('\n'), 1):
        if not fence and re.match(r'^```sh\s*$', line):
            fence = True
            continue
        if fence and line.startswith('```'):
            fence = False
            continue
        if fence and line.strip() and not line.lstrip().startswith('#'):
            no += 1
            if not any(norm(line) in t for t in tl):
                print('FAIL: docs: %s:%d: not run by %s: %s'
                      % (OPS, n, TEST, line.strip()))
                bado += 1
    if not bado:
        print('PASS: docs: %s: its %d command lines are run by %s'
              % (OPS, no, TEST))
