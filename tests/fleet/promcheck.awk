# SPDX-License-Identifier: GPL-2.0
#
# Checks Prometheus text exposition format (version 0.0.4) on its input:
#
#   awk -f tests/fleet/promcheck.awk FILE
#
# Metric and label names, label syntax and escapes (only \\, \" and \n),
# values, one HELP and one TYPE per family before its samples, a family's
# samples together, no series twice, counters named *_total.  Prints
# "promcheck: line N: why" per problem and exits 1 if there was any.

function bad(why) {
	printf "promcheck: line %d: %s\n", NR, why
	nbad++
}

function valid_value(v) {
	return v ~ /^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/ ||
		v == "+Inf" || v == "-Inf" || v == "NaN"
}

BEGIN { nbad = 0; cur = "" }

/^#/ {
	if ($2 == "HELP" || $2 == "TYPE") {
		if ($3 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/)
			bad("bad metric name '" $3 "'")
		if ($2 == "HELP") {
			if ($3 in help)
				bad("second HELP for " $3)
			help[$3] = 1
			h = $0
			sub(/^# HELP [^ ]+ ?/, "", h)
			gsub(/\\\\/, "", h)
			gsub(/\\n/, "", h)
			if (h ~ /\\/)
				bad("bad escape in HELP of " $3)
		} else {
			if ($3 in type)
				bad("second TYPE for " $3)
			if (NF != 4 || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/)
				bad("bad TYPE line")
			if ($3 in sampled)
				bad("TYPE for " $3 " after its samples")
			type[$3] = $4
			if ($4 == "counter" && $3 !~ /_total$/)
				bad("counter " $3 " is not named *_total")
		}
	}
	next
}

/^[ \t]*$/ { next }

{
	line = $0
	if (!match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) {
		bad("no metric name")
		next
	}
	name = substr(line, 1, RLENGTH)
	rest = substr(line, RLENGTH + 1)
	labels = ""
	if (substr(rest, 1, 1) == "{") {
		rest = substr(rest, 2)
		delete seenlabel
		ok = 1
		while (ok && substr(rest, 1, 1) != "}") {
			if (!match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*="/)) {
				bad("bad label in '" rest "'")
				ok = 0
				break
			}
			lname = substr(rest, 1, RLENGTH - 2)
			if (lname in seenlabel)
				bad("label " lname " twice")
			seenlabel[lname] = 1
			rest = substr(rest, RLENGTH + 1)
			val = ""
			while (1) {
				c = substr(rest, 1, 1)
				if (c == "") {
					bad("unterminated label value")
					ok = 0
					break
				}
				rest = substr(rest, 2)
				if (c == "\"")
					break
				if (c == "\\") {
					e = substr(rest, 1, 1)
					rest = substr(rest, 2)
					if (e != "\\" && e != "\"" && e != "n") {
						bad("bad escape \\" e " in a label value")
						ok = 0
						break
					}
					c = c e
				}
				val = val c
			}
			if (!ok)
				break
			labels = labels lname "=" val "\001"
			if (substr(rest, 1, 1) == ",")
				rest = substr(rest, 2)
			else if (substr(rest, 1, 1) != "}") {
				bad("expected , or } in the labels")
				ok = 0
			}
		}
		if (!ok)
			next
		rest = substr(rest, 2)
	}
	n = split(rest, f, " ")
	if (substr(rest, 1, 1) != " " || n < 1 || n > 2 || !valid_value(f[1]) ||
	    (n == 2 && f[2] !~ /^-?[0-9]+$/)) {
		bad("bad value or timestamp '" rest "'")
		next
	}
	if (!(name in type))
		bad("sample of " name " without a TYPE line before it")
	if (name != cur) {
		if (name in sampled)
			bad("samples of " name " not together")
		cur = name
	}
	sampled[name] = 1
	if ((name SUBSEP labels) in series)
		bad("series " name "{" labels "} twice")
	series[name SUBSEP labels] = 1
	nsamples++
}

END {
	for (t in type)
		if (!(t in help))
			bad("TYPE without HELP for " t)
	if (nbad)
		exit 1
	printf "promcheck: %d samples, %d families, ok\n", nsamples, length(type)
}
