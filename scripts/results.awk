# Turn the results port of one guest boot (see guest-init.sh) into
# "PASS: ...", "FAIL: ..." and "SKIP: ..." lines, one per test.
#
#   awk -v label=NAME -v want="suite ..." -f results.awk RESULTS
#
# Guest tests: every "PASS: x"/"FAIL: x"/"SKIP: x" line a test prints is
# one result (a SKIP is counted as skipped, not passed or failed).
# A test exiting non-zero without a FAIL line is one FAIL, and so is a test
# that prints neither. KUnit: every leaf "ok"/"not ok" line of the KTAP is
# one result; a parameterised case counts its parameters, not itself.
# Suites named in want must be present and not empty.

function out(kind, text) { print kind ": " text }

function ktap(line,   ind, rest, ok, skip, name, k, parent, cfailed, path) {
	match(line, /^ */)
	ind = RLENGTH
	rest = substr(line, ind + 1)
	if (rest ~ /^# Subtest: /) {
		subtest[ind] = substr(rest, 12)
		return
	}
	if (rest !~ /^(not )?ok [0-9]+/)
		return
	ok = rest !~ /^not /
	name = rest
	sub(/^(not )?ok [0-9]+ */, "", name)
	skip = name ~ /# *[Ss][Kk][Ii][Pp]/
	sub(/ *#.*$/, "", name)

	parent = haschild[ind]
	cfailed = childfail[ind]
	path = ""
	for (k = 0; k <= ind; k++)
		if (k in subtest)
			path = path subtest[k] "/"
	for (k = 0; k < ind; k++) {
		haschild[k] = 1
		if (!ok)
			childfail[k] = 1
	}
	for (k in haschild)
		if (k + 0 >= ind) {
			delete haschild[k]
			delete childfail[k]
		}
	for (k in subtest)
		if (k + 0 > ind)
			delete subtest[k]

	if (parent) {
		if (!ok && !cfailed)
			out("FAIL", "kunit/" path name ": failed")
		return
	}
	cases++
	if (skip)
		out("SKIP", "kunit/" path name)
	else
		out(ok ? "PASS" : "FAIL", "kunit/" path name)
}

{ sub(/\r$/, "") }

/^@@ KTAP-END/ {
	if (!cases)
		out("FAIL", "kunit/" suite ": suite has no test cases")
	inktap = 0
	next
}
/^@@ KTAP / {
	suite = $3
	seen[suite] = 1
	inktap = 1
	cases = 0
	split("", haschild); split("", childfail); split("", subtest)
	next
}
inktap { ktap($0); next }

/^@@ BEGIN / { test = $3; intest = 1; npass = nfail = 0; next }
/^@@ END / {
	if ($4 != 0 && !nfail)
		out("FAIL", label ": exited with status " $4 " and no FAIL line")
	else if (!npass && !nfail)
		out("FAIL", label ": printed no PASS or FAIL line")
	intest = 0
	next
}
/^@@ DONE/ { done = 1; next }
/^@@ / { next }

intest && /^PASS: / { npass++; out("PASS", label ": " substr($0, 7)); next }
intest && /^FAIL: / { nfail++; out("FAIL", label ": " substr($0, 7)); next }
intest && /^SKIP: / { out("SKIP", label ": " substr($0, 7)); next }
!intest && /^(PASS|FAIL|SKIP): / { out(substr($0, 1, 4), label ": " substr($0, 7)) }

END {
	if (intest)
		out("FAIL", label ": did not finish")
	if (!done)
		out("FAIL", label ": guest did not finish (timeout or crash)")
	n = split(want, w, " ")
	for (k = 1; k <= n; k++)
		if (!(w[k] in seen))
			out("FAIL", "kunit/" w[k] ": suite missing")
}
