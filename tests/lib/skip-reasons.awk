# SPDX-License-Identifier: GPL-2.0-or-later
# skip-reasons.awk: the skips of a make check log or test-suite.log, one
# line each: "LEG: TEST: REASON" (awk -v leg=NAME -f skip-reasons.awk LOG).
# automake's result lines are "SKIP: TEST - REASON" (a skipped file, plan
# 1..0) or "SKIP: TEST N - NAME # SKIP REASON" (one skipped test). make -j
# interleaves the lines of tests running at once in its own output, so a
# result line is taken wherever it starts in a line. test-suite.log titles
# each copied log "SKIP: TEST" over a line of '=': a title, not a result.
function flush() {
	if (pending != "")
		print pending
	pending = ""
	title = 0
}
/^=+$/ {
	if (title)
		pending = ""
	flush()
	next
}
{
	flush()
	i = index($0, "SKIP: ")
	if (!i || /^# /)
		next
	r = substr($0, i + 6)
	t = r
	sub(/ .*/, "", t)
	if (t == "")
		next
	title = (r == t)
	if ((j = index(r, "# SKIP")))
		r = substr(r, j + 7)
	else if ((j = index(r, " - ")))
		r = substr(r, j + 3)
	else
		r = "(no reason given)"
	pending = sprintf("%s: %s: %s", leg, t, r)
}
END {
	flush()
}
