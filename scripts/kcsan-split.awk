# Split KCSAN's reports on a guest console into ours and the kernel's own.
#
# A report ("BUG: KCSAN: data-race in A / B" up to its closing line of
# "=") that names a function of IPVS or the module in either stack (ip_vs*,
# __ip_vs*, maglev*, or a frame of an ip_vs module) passes through with the
# rest of the console, where vm_judge's pattern fails the boot. A report
# with no such frame is a race between two paths of the kernel's own (seen
# on 7.3.4: __synchronize_hardirq / handle_irq_event, from the serial
# console's interrupt): it is left out and its title written to the file
# named by "foreign". A report the console cut off passes through.
function flush(keep) {
	if (keep)
		printf "%s", buf
	else if (foreign != "")
		print title >>foreign
	buf = ""
	inrep = 0
}
{ sub(/\r$/, "") }
/BUG: KCSAN: / {
	if (inrep)
		flush(1)
	inrep = 1
	ours = 0
	title = $0
	sub(/^.*BUG: KCSAN: /, "", title)
}
inrep {
	buf = buf $0 "\n"
	if ($0 ~ /[[:space:](](__)?(ip_vs|maglev)[[:alnum:]_.]*\+0x/ ||
	    $0 ~ /\[(ip_vs|ip_vs_[[:alnum:]_]+)\]/)
		ours = 1
	if ($0 ~ /^(\[[ 0-9.]+\] )?=+$/)
		flush(ours)
	next
}
{ print }
END {
	if (inrep)
		flush(1)
}
