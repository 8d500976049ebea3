#!/bin/bash
# fresh-test.sh: the README's quick start on a clean Debian 12 machine.
# Builds (once, cached) a minimal bookworm root with mmdebstrap holding
# only what the quick start assumes (git, make), unpacks a fresh copy of it
# for every run, clones HEAD into it and runs "make demo" there as root, in
# a chroot inside a private mount namespace. Then builds the module there
# with "make KDIR=..." against the headers the demo unpacked, as the README
# tells an installing user. Checks on the host that no linux-image package
# was installed, /boot is unchanged and nothing is left mounted.
#
# The same runs in a minimal Debian 13 (trixie) root, its packages from
# the private trixie configuration (papt_setup in lib.sh: the lists and the
# .deb archive in the cache, never this machine's): "make demo" there runs
# against trixie's own stock cloud kernel, and the two .deb packages
# ("make deb", built on the host) are installed in that root with apt-get
# and DKMS-build their modules against the headers the demo unpacked.
# Results are named "fresh: ..." (Debian 12) and "fresh-trixie: ...".
#
# Only the committed tree (HEAD) is tested, not uncommitted changes.
# Environment: FRESH_KEEP=1 keeps the unpacked root after a passing run;
# FRESH_SUITES (default "bookworm trixie") the suites to test.
# Logs: build/check/fresh/. See docs/fresh.md.
set -eu
. "$(dirname "$0")/lib.sh"

# Bump when the way the root is built changes, to rebuild it.
FRESH_RECIPE=1
SUITE=${FRESH_SUITE:-bookworm}
# minbase: the Essential packages and those of Priority: required, which
# every Debian 12 installation has. The "apt" variant leaves out some of
# those, a machine that does not exist; bigger variants (important,
# standard) would hide a missing install step behind packages that a
# minimal cloud or container image lacks.
VARIANT=minbase
INCLUDE=git,make
# No docs, man pages or translations: a smaller tarball. The setting
# stays in the root's dpkg.cfg.d, so it applies to what the demo installs.
DPKGOPTS=(path-exclude=/usr/share/doc/* path-exclude=/usr/share/man/*
	  path-exclude=/usr/share/locale/* path-exclude=/usr/share/info/*)

# inside ROOT WORKDIR ARCHIVES: run in a private mount namespace (unshare
# -m, see below): the bind mounts, "make demo" and the module build in the
# chroot, and with WORKDIR/debs/ the packages' install and DKMS builds.
# ARCHIVES is the .deb cache apt in the root shares. Writes
# WORKDIR/demo.rc, WORKDIR/module.rc, WORKDIR/dkms.rc and their logs.
inside() {
	local root=$1 w=$2 archives=$3 kdir rc
	# Unmount even on failure (the trap runs after this function has
	# returned, hence a global). The namespace's mounts also vanish with
	# its last process, so none can outlive this run on the host.
	IN_ROOT=$root
	trap 'for m in var/cache/apt/archives dev sys proc; do
		umount -R "$IN_ROOT/$m" 2>/dev/null || true; done' EXIT
	mount --rbind /proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	# The host's .debs (or the private configuration's): nothing is
	# downloaded twice.
	mount --bind "$archives" "$root/var/cache/apt/archives"
	run_root() {
		nice -n 10 chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			/bin/bash -c "$1"
	}
	rc=0
	run_root 'cd /root/ip_vs_maglev && make demo' >"$w/demo.log" 2>&1 ||
		rc=$?
	echo "$rc" >"$w/demo.rc"
	date +%s >"$w/demo.end"
	kdir=$(cd "$root" && find var/cache/ip_vs_maglev -maxdepth 5 \
		-path '*/usr/src/linux-headers-*-cloud-amd64' -type d | head -n 1)
	echo "/$kdir" >"$w/kdir"
	rc=0
	if [ -n "$kdir" ]; then
		run_root "cd /root/ip_vs_maglev && make KDIR=/$kdir &&
			modinfo -F vermagic ip_vs_maglev.ko" \
			>"$w/module.log" 2>&1 || rc=$?
	else
		echo "no unpacked headers in $root/var/cache/ip_vs_maglev" \
			>"$w/module.log"
		rc=1
	fi
	echo "$rc" >"$w/module.rc"
	[ -d "$w/debs" ] || return 0
	rc=0
	if [ -n "$kdir" ]; then
		mkdir -p "$root/root/debs"
		cp "$w"/debs/*.deb "$root/root/debs/"
		run_root "$(inside_dkms "/$kdir")" >"$w/dkms.log" 2>&1 || rc=$?
	else
		echo "no unpacked headers" >"$w/dkms.log"
		rc=1
	fi
	echo "$rc" >"$w/dkms.rc"
}

# inside_dkms KDIR: the root's shell commands that install each package in
# /root/debs with apt-get in turn (the two conflict), build its DKMS
# module for the kernel whose headers are KDIR, printing "built NAME VER
# FILE", and remove it with apt-get again.
inside_dkms() {
	local kdir=$1
	cat <<EOC
set -e
export DEBIAN_FRONTEND=noninteractive
ver=\$(make -s -C '$kdir' kernelrelease)
for deb in /root/debs/*.deb; do
	pkg=\$(dpkg-deb -f "\$deb" Package)
	apt-get -q -y install --no-install-recommends "\$deb"
	d=\$(dpkg -L "\$pkg" | grep -E '^/usr/src/[^/]+\$' | head -n 1)
	n=\${d#/usr/src/}
	name=\${n%-*}
	v=\${n##*-}
	dkms status -m "\$name" -v "\$v" | grep -q . || dkms add -m "\$name" -v "\$v"
	dkms build -m "\$name" -v "\$v" -k "\$ver" --kernelsourcedir '$kdir'
	ko=\$(find /var/lib/dkms/"\$name"/"\$v"/"\$ver" -name '*.ko*' | head -n 1)
	[ -n "\$ko" ]
	echo "built \$name \$ver \${ko##*/}"
	apt-get -q -y purge "\$pkg"
done
EOC
}

if [ "${1:-}" = --inside ]; then
	inside "$2" "$3" "$4"
	exit
fi

# Without FRESH_SUITE: one run per suite of FRESH_SUITES, results counted;
# a run that exits non-zero without a FAIL line (it died) is one FAIL.
if [ -z "${FRESH_SUITE:-}" ]; then
	for s in ${FRESH_SUITES:-bookworm trixie}; do
		src=0
		sout=$(FRESH_SUITE=$s "$0" </dev/null 2>&1) || src=$?
		tally < <(grep -vE "$SUMMARY_RE" <<<"$sout")
		[ "$src" -eq 0 ] || grep -q '^FAIL: ' <<<"$sout" ||
			fail "fresh ($s): exited with status $src and no FAIL line"
	done
	summary
	exit
fi

# The suite's label, work directory, apt sources, package lists and .deb
# archive: Debian 12 is this machine's own; trixie comes from its private
# configuration, without backports (a plain Debian 13 machine).
case $SUITE in
bookworm)
	L=fresh
	# This machine's own sources: Debian 12's cloud images have
	# debian.sources, an installed system sources.list, an mmdebstrap
	# root 0000debian.sources.
	SOURCES=
	for f in /etc/apt/sources.list.d/debian.sources \
		 /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
		if [ -s "$f" ] && grep -q '^[^#[:space:]]' "$f"; then
			SOURCES=$f
			break
		fi
	done
	[ -n "$SOURCES" ] ||
		die "no apt sources on this machine (/etc/apt/sources.list, /etc/apt/sources.list.d/*.sources)"
	LISTS=/var/lib/apt/lists
	ARCHIVES=/var/cache/apt/archives ;;
trixie)
	L=fresh-trixie
	papt_setup trixie || die "no package lists for trixie"
	SOURCES=$(papt_dir trixie)/sources-fresh.list
	grep -v -- '-backports ' "$(papt_dir trixie)/sources.list" >"$SOURCES.new"
	cmp -s "$SOURCES.new" "$SOURCES" || mv -f "$SOURCES.new" "$SOURCES"
	rm -f "$SOURCES.new"
	LISTS=$(papt_dir trixie)/lists
	ARCHIVES=$(papt_dir trixie)/archives ;;
*)	die "FRESH_SUITE must be bookworm or trixie" ;;
esac

need_pkgs mmdebstrap git zstd util-linux
w=$(work_dir "$L")
rm -f "$w"/*.log "$w"/*.rc "$w"/*.end "$w"/kdir "$w"/root-built
rm -rf "$w/debs"
boot_before=$(boot_state)
now() { date +%s; }

# The root tarball is named after everything it is built from.
hash=$( { echo "$FRESH_RECIPE $SUITE $VARIANT $INCLUDE ${DPKGOPTS[*]}"
	  dpkg-query -W -f='${Version}\n' mmdebstrap; cat "$SOURCES"; } |
	sha256sum | cut -c1-12)
cache=$(cache_root)
tarball=$cache/fresh-$SUITE-$VARIANT-$hash.tar.zst
mkdir -p "$cache"
(
	flock 9
	[ -f "$tarball" ] && exit 0
	echo "building the clean $SUITE root ($VARIANT + $INCLUDE) with mmdebstrap, once"
	t=$(now)
	args=(--variant="$VARIANT" --include="$INCLUDE")
	for o in "${DPKGOPTS[@]}"; do args+=(--dpkgopt="$o"); done
	# mmdebstrap takes the format from the name: keep .tar.zst last.
	tmp=${tarball%.tar.zst}.tmp.tar.zst
	nice -n 10 mmdebstrap "${args[@]}" "$SUITE" "$tmp" "$SOURCES" \
		>"$w/mmdebstrap.log" 2>&1 || {
		tail -n 20 "$w/mmdebstrap.log"
		rm -rf "$tmp"
		exit 1
	}
	mv -f "$tmp" "$tarball"
	echo "$(( $(now) - t ))" >"$tarball.seconds"
	touch "$w/root-built"
) 9>"$tarball.lock" || die "mmdebstrap failed (log: $w/mmdebstrap.log)"
built=cached
[ -f "$w/root-built" ] && built="built by this run"
echo "time: root build $(cat "$tarball.seconds" 2>/dev/null || echo '?') s" \
	"($built: ${tarball##*/}, $(du -m "$tarball" | cut -f1) MB)"

# A failed run keeps its root for a look; the next run of this worktree
# deletes it (other worktrees' runs are theirs).
last=$(cat "$w/last-run" 2>/dev/null || true)
if [ -n "$last" ] && [ -d "$last" ] &&
   ! grep -qF " $last/" /proc/self/mountinfo; then
	rm -rf "$last"
fi
rm -f "$w/last-run"

# A fresh copy for every run; several worktrees may run at once.
run=$(mktemp -d "$cache/fresh-run.XXXXXX")
root=$run/root
# Should something be left mounted, unmount it before deleting anything.
cleanup() {
	if grep -qF " $run/" /proc/self/mountinfo; then
		umount -R -l "$root/proc" "$root/sys" "$root/dev" \
			"$root/var/cache/apt/archives" 2>/dev/null || true
	fi
	if [ "${keep:-1}" = 0 ] && ! grep -qF " $run/" /proc/self/mountinfo; then
		rm -rf "$run"
		rm -f "$w/last-run"
	fi
}
trap cleanup EXIT
echo "$run" >"$w/last-run"
t=$(now)
mkdir "$root"
tar -C "$root" --zstd -xpf "$tarball" --numeric-owner
echo "time: root unpack $(( $(now) - t )) s ($root)"

# apt inside sees the package lists the host sees, so it picks the same
# versions and finds their .debs in the host's archive cache.
find "$root/var/lib/apt/lists" -maxdepth 1 -type f -delete
find "$LISTS" -maxdepth 1 -type f ! -name lock \
	-exec cp -t "$root/var/lib/apt/lists" {} +
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# No package's service may start: the chroot shares the host's kernel,
# network and /dev. policy-rc.d only stops invoke-rc.d from starting
# services; every package is still installed and configured in full.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

head=$(git -C "$TOP" rev-parse HEAD)
echo "testing the committed tree at HEAD $(git -C "$TOP" log -1 --format='%h %s')"
[ -z "$(git -C "$TOP" status --porcelain)" ] ||
	echo "  (the worktree has uncommitted changes: they are not tested)"
git clone -q --no-hardlinks "$TOP" "$root/root/ip_vs_maglev"
git -C "$root/root/ip_vs_maglev" checkout -q --detach "$head"

pkgs_of() {
	dpkg-query --admindir="$root/var/lib/dpkg" -W \
		-f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" { print $2 }'
}
pkgs_before=$(pkgs_of)
absent=
for p in gcc qemu-system-x86 dwarves busybox-static ipvsadm; do
	grep -qx "$p" <<<"$pkgs_before" && absent+=" $p"
done
if [ -z "$absent" ]; then
	pass "$L: the clean root has $(wc -l <<<"$pkgs_before") packages, no gcc, qemu-system-x86, dwarves, busybox-static, ipvsadm"
else
	fail "$L: the clean root already has:$absent"
fi

echo "running 'make demo' in the clean root (chroot, as root)"
t=$(now)
# Debian 13: the packages too, built here.
if [ "$SUITE" != bookworm ]; then
	if "$TOP/scripts/mkdeb.sh" "$w/debs" >"$w/mkdeb.log" 2>&1 &&
	   compgen -G "$w/debs/*.deb" >/dev/null; then
		find "$w/debs" -mindepth 1 ! -name '*.deb' -exec rm -rf {} +
	else
		fail "$L: make deb (see $w/mkdeb.log)"
		rm -rf "$w/debs"
	fi
fi
unshare --mount --propagation private "$0" --inside "$root" "$w" "$ARCHIVES" ||
	fail "$L: the chroot run failed"
t_demo=$(( $(cat "$w/demo.end" 2>/dev/null || now) - t ))
t_mod=$(( $(now) - t - t_demo ))
rc=$(cat "$w/demo.rc" 2>/dev/null || echo '?')
echo "time: make demo $t_demo s, module build $t_mod s"

# What the clean root had to install: the demo's own apt-get lines, and
# every package that appeared.
echo "packages the demo asked apt-get for (log: $w/demo.log):"
grep -E ': installing: ' "$w/demo.log" | sed 's/^/  /' || echo "  none"
new=$(comm -13 <(echo "$pkgs_before") <(pkgs_of))
echo "  $(wc -w <<<"$new") packages installed in all:"
echo "$new" | xargs | fold -s -w 72 | sed 's/^/    /'

if [ "$rc" = 0 ]; then
	pass "$L: make demo exited 0 (${t_demo} s)"
else
	fail "$L: make demo exited $rc (log: $w/demo.log)"
	tail -n 30 "$w/demo.log" | sed 's/^/  /'
fi
# Lines that only a demo that ran to its end prints.
if grep -qE '^\[ *[0-9]+s\] done$' "$w/demo.log"; then
	pass "$L: the demo printed its final 'done' step"
else
	fail "$L: no final 'done' step in the demo's output"
fi
checks=$(grep -cE 'check: maglev-sim predicts ([0-9]+) of \1 flows exactly' \
	"$w/demo.log" || true)
digests=$(grep -cE '^ *table digest [0-9a-f]+ matches$' "$w/demo.log" || true)
if [ "$checks" -ge 3 ] && [ "$digests" -ge 3 ]; then
	pass "$L: in the guest, maglev-sim predicted every flow and the table digest in all $checks rounds"
else
	fail "$L: in the guest, $checks rounds with every flow predicted and $digests matching digests (3 expected)"
fi
# The fleet act's line counts what tcpfleet saw: every connection opened
# must be live, none reset, wrong, timed out or failed.
if grep -q 'Every flow in every round went where maglev-sim' "$w/demo.log" &&
   grep -qE '^ *([0-9]+) connections opened and answered: ok live \1 reset 0 wrong 0 timeout 0 failed 0$' \
	"$w/demo.log"; then
	pass "$L: the guest's summary reports success and the fleet act answered every connection it opened"
else
	fail "$L: the guest's summary is missing or the fleet act lost connections: $(grep -E 'connections opened and answered' "$w/demo.log" | head -n 1)"
fi

# The examples of the committed pages that show what make demo prints
# (scripts/doc-examples.sh) against this run's transcript: a page showing
# another run's output fails here.
if [ -s "$root/root/ip_vs_maglev/build/demo/transcript.txt" ]; then
	cp "$root/root/ip_vs_maglev/build/demo/transcript.txt" "$w/transcript.txt"
	erc=0
	eout=$("$TOP/scripts/doc-examples.sh" --demo "$w/transcript.txt" \
		"$root/root/ip_vs_maglev" 2>&1) || erc=$?
	tally < <(grep -E '^(PASS|FAIL|SKIP): ' <<<"$eout" |
		sed "s/^\(PASS\|FAIL\|SKIP\): examples: /\1: $L: docs' demo examples: /")
	[ "$erc" -eq 0 ] || grep -q '^FAIL: ' <<<"$eout" ||
		fail "$L: doc-examples.sh exited with status $erc and no FAIL line"
else
	fail "$L: the demo left no transcript (build/demo/transcript.txt)"
fi

mrc=$(cat "$w/module.rc" 2>/dev/null || echo '?')
kdir=$(cat "$w/kdir" 2>/dev/null || true)
ver=${kdir##*/linux-headers-}
if [ "$mrc" = 0 ] && tail -n 1 "$w/module.log" | grep -q "^$ver SMP"; then
	pass "$L: make KDIR=$kdir builds ip_vs_maglev.ko for $ver in the root (${t_mod} s)"
else
	fail "$L: make KDIR=${kdir:-?} in the root (exit $mrc, log: $w/module.log)"
	tail -n 20 "$w/module.log" | sed 's/^/  /'
fi

if [ "$(boot_state)" = "$boot_before" ]; then
	pass "$L: host: no linux-image package installed or removed, /boot unchanged"
else
	fail "$L: host: linux-image packages or /boot changed"
	diff <(echo "$boot_before") <(boot_state) | sed 's/^/  /'
fi
if grep -F " $run/" /proc/self/mountinfo; then
	fail "$L: host: mounts left under $run (above)"
else
	pass "$L: host: nothing left mounted under $run"
fi

if [ -f "$w/dkms.rc" ]; then
	built=$(grep -c '^built ' "$w/dkms.log" || true)
	if [ "$(cat "$w/dkms.rc")" = 0 ] && [ "$built" -eq 2 ]; then
		pass "$L: apt-get installs $(cd "$w/debs" && echo *.deb) in the root; DKMS builds both for $ver: $(sed -n 's/^built [^ ]* [^ ]* //p' "$w/dkms.log" | xargs)"
	else
		fail "$L: install the .debs and DKMS-build them for $ver in the root (exit $(cat "$w/dkms.rc"), log: $w/dkms.log)"
		tail -n 20 "$w/dkms.log" | sed 's/^/  /'
	fi
fi

keep=1
[ "$FAILED" -eq 0 ] && [ "${FRESH_KEEP:-0}" != 1 ] && keep=0
[ "$keep" = 1 ] && echo "the root is kept in $root"
summary
