# SPDX-License-Identifier: GPL-2.0
#
# Charts of "make compare": gnuplot -e "data='DIR/compare.tsv'; out='DIR'"
# tools/bench/compare.gp writes DIR/compare.png and DIR/compare.svg.  The data
# has one block per algorithm, in the order of "names" below (tools/bench/compare.c).

names = "maglev-251 maglev-4093 maglev-65537 ring64-1 ring64-128 ring64-1024"
set datafile separator "\t"
set datafile missing "nan"
set logscale x
set xrange [1.8:1200]
set xlabel "backends N"
set grid
set key top left font ",9"
set style line 1 lc rgb "#9ecae1" lw 2 pt 7 ps 0.6
set style line 2 lc rgb "#3182bd" lw 2 pt 7 ps 0.6
set style line 3 lc rgb "#08306b" lw 2 pt 7 ps 0.6
set style line 4 lc rgb "#fdae6b" lw 2 pt 5 ps 0.6 dt 2
set style line 5 lc rgb "#e6550d" lw 2 pt 5 ps 0.6 dt 2
set style line 6 lc rgb "#7f2704" lw 2 pt 5 ps 0.6 dt 2
set style line 7 lc rgb "#31a354" lw 2 pt 9 ps 0.8

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1500,950 font "sans,10"
	} else {
		set terminal svg size 1500,950 font "sans,10" dynamic
	}
	set output out . "/compare." . fmt
	set multiplot layout 2,3 title "Maglev (table of M slots) or ring64 (seed 002, V points per backend)?" font ",13"

	set title "Balance: busiest backend's share / ideal 1/N\n(exact: Maglev slots, ring arc lengths)"
	set logscale y
	set yrange [0.9:20]
	set ylabel "busiest / ideal"
	set label 1 "seed 002 ch2 limit\n(27% of 4000 keys, N=8)" at 9,2.16 left font ",8"
	plot for [i=0:6] data index i using 2:4 with linespoints ls (i + 1) title word(names, i + 1), \
		"+" using (8):(2.16) every ::0::0 with points pt 2 ps 2 lc rgb "red" notitle
	unset label 1

	unset key
	set title "Adding backend N+1: keys moved / ideal 1/(N+1)"
	set yrange [0.1:20]
	set ylabel "moved / ideal"
	set label 1 "seed 002 ch4 limit (28%, N=8)" at 9,2.52 left font ",8"
	plot for [i=0:6] data index i using 2:($5 / $7) with linespoints ls (i + 1) title word(names, i + 1), \
		"+" using (8):(2.52) every ::0::0 with points pt 2 ps 2 lc rgb "red" notitle
	unset label 1

	set title "Removing one of N: keys moved / ideal 1/N"
	set label 1 "seed 002 ch5 limit (28%, N=8)" at 9,2.24 left font ",8"
	plot for [i=0:6] data index i using 2:($8 / $10) with linespoints ls (i + 1) title word(names, i + 1), \
		"+" using (8):(2.24) every ::0::0 with points pt 2 ps 2 lc rgb "red" notitle
	unset label 1

	set title "Keys moved between backends that stayed\n(adding one backend; a ring never moves them)"
	unset logscale y
	set yrange [0:*]
	set ylabel "% of keys"
	plot for [i=0:6] data index i using 2:6 with linespoints ls (i + 1) title word(names, i + 1)

	set title "Memory a lookup needs"
	set logscale y
	set yrange [*:*]
	set ylabel "bytes"
	plot for [i=0:6] data index i using 2:11 with linespoints ls (i + 1) title word(names, i + 1)

	set title "Lookup of a hashed key (median ns, random keys)"
	set ylabel "ns"
	plot for [i=0:6] data index i using 2:12 with linespoints ls (i + 1) title word(names, i + 1)

	unset multiplot
	unset output
	set key top left font ",9"
}
