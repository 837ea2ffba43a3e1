#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two whole test suites on one machine would share its test clusters
# (/tmp/rdzv-cluster*) and network namespaces and fail each other silently,
# so tests/run-all.sh takes a lock before anything else
# (tests/lib/suite-lock.sh). The real script runs here, in its lock-only
# mode (RDZV_SUITE_LOCK_ONLY=1: take the lock, hold it until standard input
# ends, run nothing), on a lock file of this test's own:
#   - a holder takes it; a second run exits at once, non-zero, naming the
#     holder's pid and start time; the holder goes on and ends normally;
#   - a lock whose run died (the holder gone, or a line naming a dead pid)
#     never blocks the next run.
. "$top_srcdir/tests/lib/tap.sh"
command -v flock >/dev/null || skip_all "no flock (util-linux)"
work=$(mktemp -d "${TMPDIR:-/tmp}/rdzv-0190.XXXXXX") || exit 1
holder=
cleanup() {
	exec 8>&- 9<&- 2>/dev/null
	[ -n "$holder" ] && wait "$holder" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
export RDZV_SUITE_LOCK=$work/run-all.lock
run_all="$top_srcdir/tests/run-all.sh"
mkfifo "$work/stdin" "$work/said" || exit 1
# lock_only: one more run-all.sh in lock-only mode, input at its end: its
# output in $out, status in $rc, time in $ms. It inherits none of this
# test's pipes.
lock_only() {
	local t0
	t0=$(date +%s%N)
	out=$(RDZV_SUITE_LOCK_ONLY=1 timeout 30 bash "$run_all" </dev/null 2>&1 8>&- 9<&-)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
}

# The holder: a real run-all.sh, its standard input a pipe this test holds
# open, its first line read back as the event that it holds the lock.
RDZV_SUITE_LOCK_ONLY=1 bash "$run_all" <"$work/stdin" >"$work/said" 2>&1 &
holder=$!
exec 8>"$work/stdin" 9<"$work/said"
read -r -t 60 said <&9
like "$said" "^run-all.sh: pid $holder holds $RDZV_SUITE_LOCK" "the first run holds the lock: $said"

lock_only
second=$out
is "$rc" 75 "a second run beside it exits with 75 (EX_TEMPFAIL)"
like "$second" "another run of the test suite holds $RDZV_SUITE_LOCK \\(pid $holder, started [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC, in " \
	"... naming the first run's pid and start time"
printf '%s\n' "$second" | sed 's/^/# /'
ok "$([ "$ms" -lt 5000 ] && echo 0 || echo 1)" "... at once ($ms ms)"
unlike "$second" "holds .*nothing else runs" "... without taking the lock"
ok "$([ -d "/proc/$holder" ] && echo 0 || echo 1)" "the first run is still running"
is "$(cut -d'|' -f1 "$RDZV_SUITE_LOCK")" "$holder" "... and the lock still names it"

# The holder ends as it was asked to: its standard input closes.
exec 8>&-
wait "$holder"
is "$?" 0 "the first run ends normally (exit 0) when its input ends"
holder=

# Its lock's line is left behind, naming a dead pid: the next run takes it.
lock_only
is "$rc" 0 "after the first run ended, the next takes the lock (exit 0, $ms ms)"
like "$out" "^run-all.sh: pid [0-9]+ holds " "... and says so"

# A lock file naming a run that died long ago, no one holding it (a file of
# its own: the previous run's lock is let go a second after it ended).
export RDZV_SUITE_LOCK=$work/old.lock
sh -c 'exit 0' &
dead=$!
wait "$dead"
printf '%s|2026-01-01 00:00:00 UTC|/nowhere\n' "$dead" >"$RDZV_SUITE_LOCK"
lock_only
is "$rc" 0 "a stale lock file (pid $dead, dead) does not block the next run ($ms ms)"
unlike "$out" "another run" "... which names no other run"
done_testing
