#!/bin/sh
# Guest test 25: minimal disruption at the module's defaults, through the
# kernel. A UDP service hashing client addresses, with 5 and then 6 real
# servers, and with 10 and then 11, then 10 again with one of the middle
# removed: each round sends one flow from every client address (a new
# source port each round, so every flow is a new connection). The choices
# equal maglev-sim's at every round; a change moves about 1/N of the
# clients, at most 2 % of them between real servers that stay, and
# exactly the clients maglev-sim says. The table size stays the default
# (65537) throughout: a size that followed N would move nearly all of
# them.
. "${0%/*}/lib.sh"

setup_net 11
warm_up
V=$VIP4
S="UDP $V:80"
if have_udpflows; then naddr=800; else naddr=60; fi
addrs=$(client_addrs 4 $naddr)

expect_eq "the default table size" "$(cat $SYSCTL/maglev_table_size)" 65537
run ipvsadm -A -u $V:80 -s maglev
: >"$T/s"

# add_rs I: real server 10.1.I.1:80, NAT, weight 1, here and in maglev-sim.
add_rs() {
	run ipvsadm -a -u $V:80 -r "10.1.$1.1:80" -m -w 1
	echo "ADD_NODE 10.1.$1.1:80 1" >>"$T/s"
}

# round NAME PORT: one flow from every client address from source port
# PORT; "ADDR DEST" per client in $T/r.NAME, checked against maglev-sim.
round() {
	# shellcheck disable=SC2086
	flows $V 80 "$2" 1 $addrs >"$T/f.$1"
	expect_eq "$1: the table size" "$(svc_field "$S" size)" 65537
	predict "$T/f.$1" "$T/s" 0 >"$T/p.$1"
	compare_choices "$1" "$T/f.$1" "$T/p.$1" $V 80
	awk '{ print $1, $3 }' "$T/conns" >"$T/r.$1"
}

# moved A B N ADDED GONE: the clients of rounds A and B whose server
# changed: all of them at most 1/N + 2 %, those between servers in both
# rounds (neither ADDED nor GONE) at most 2 % of the clients; the same
# counts from maglev-sim's predictions.
moved() {
	# shellcheck disable=SC2016 # awk's own variables
	_m=$(awk -v add="$4" -v gone="$5" 'NR == FNR { a[$1] = $2; next }
		$1 in a { n++; if (a[$1] != $2) { all++
			if (a[$1] != gone && $2 != add) between++ } }
		END { print n + 0, all + 0, between + 0 }' "$T/r.$1" "$T/r.$2")
	_p=$(awk 'NR == FNR { a[$1] = $3; next }
		$1 in a && a[$1] != $3 { n++ } END { print n + 0 }' \
		"$T/p.$1" "$T/p.$2")
	# shellcheck disable=SC2086 # three numbers
	set -- "$@" $_m
	info "$1 -> $2: $7 of $6 clients moved ($(awk -v a="$7" -v n="$6" 'BEGIN { printf "%.1f", 100 * a / n }') %, ideal 1/$3), $8 between servers that stay"
	expect_eq "$1 -> $2: every client in both rounds" "$6" "$naddr"
	expect_eq "$1 -> $2: the clients that moved are maglev-sim's" "$7" "$_p"
	check "$1 -> $2: at most 1/$3 + 2 % moved ($7 of $6)" \
		awk -v a="$7" -v n="$6" -v k="$3" 'BEGIN { exit !(a <= n / k + n / 50) }'
	check "$1 -> $2: at least half of 1/$3 moved ($7 of $6)" \
		awk -v a="$7" -v n="$6" -v k="$3" 'BEGIN { exit !(a >= n / k / 2) }'
	check "$1 -> $2: at most 2 % between servers that stay ($8 of $6)" \
		awk -v a="$8" -v n="$6" 'BEGIN { exit !(a * 50 <= n) }'
}

for i in 1 2 3 4 5; do add_rs $i; done
round n5 20000
add_rs 6
round n6 20001
moved n5 n6 6 10.1.6.1:80 -

for i in 7 8 9 10; do add_rs $i; done
round n10 20002
add_rs 11
round n11 20003
moved n10 n11 11 10.1.11.1:80 -

run ipvsadm -d -u $V:80 -r 10.1.6.1:80
echo "REMOVE_NODE 10.1.6.1:80" >>"$T/s"
round n10b 20004
moved n11 n10b 11 - 10.1.6.1:80

run ipvsadm -C
finish
