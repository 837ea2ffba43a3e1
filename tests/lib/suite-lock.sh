# SPDX-License-Identifier: GPL-2.0-or-later
# suite-lock.sh: one whole test suite at a time on a machine. Sourced by
# tests/run-all.sh before it installs or builds anything: two runs side by
# side would share /tmp/rdzv-cluster*, the rdzvL-nK network namespaces and
# the version roots' clusters, and fail each other silently.
#
#   suite_lock OWNER_PID
#     0: the lock is this run's until OWNER_PID ends;
#     1: another run holds it: one line on stderr names its pid, start time
#        and directory, and how to wait for it.
#
# The lock is an flock(2) on $RDZV_SUITE_LOCK (default /run/rdzv-run-all.lock
# as root, where no user can plant a file, else $TMPDIR or /tmp with the
# uid in the name). It is held by a small keeper process, not by the
# suite's shell: a shell's descriptor would be inherited by every daemon the
# suite starts (slurmd, slurmctld), and one left behind would hold the lock
# after the run died. The keeper (flock -o: the command does not inherit
# the descriptor) lives exactly as long as OWNER_PID (tail --pid), so a dead
# run's lock goes with it: a stale file never blocks.
suite_lock_path() {
	if [ -n "${RDZV_SUITE_LOCK:-}" ]; then
		printf '%s\n' "$RDZV_SUITE_LOCK"
	elif [ "$(id -u)" = 0 ] && [ -d /run ] && [ -w /run ]; then
		printf '%s\n' /run/rdzv-run-all.lock
	else
		printf '%s/rdzv-run-all.%s.lock\n' "${TMPDIR:-/tmp}" "$(id -u)"
	fi
}

# suite_lock_take LOCK OWNER WAIT: start the keeper; 0 when it holds the
# lock (it says "locked" once it wrote the owner's line), 1 when not within
# WAIT seconds (0: at once).
suite_lock_take() {
	local lock=$1 owner=$2 wait=$3 started line opt=(-n)
	[ "$wait" = 0 ] || opt=(-w "$wait")
	started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	# The keeper's stdout is the pipe read here: "locked" once held; end of
	# file (flock gave up) otherwise. tail's own output goes to /dev/null so
	# that nothing holds the pipe after that line.
	read -r line < <(flock -o "${opt[@]}" "$lock" \
		sh -c 'printf "%s|%s|%s\n" "$1" "$2" "$3" >"$4" && echo locked && exec tail --pid="$1" -f /dev/null >/dev/null 2>&1' \
		suite-lock "$owner" "$started" "$PWD" "$lock" 2>/dev/null)
	[ "$line" = locked ]
}

suite_lock() {
	local owner=${1:-$$} lock holder pid started dir
	lock=$(suite_lock_path)
	suite_lock_take "$lock" "$owner" 0 && return 0
	IFS='|' read -r pid started dir <"$lock" 2>/dev/null || pid=
	# A holder whose pid is gone: its keeper notices within a second; wait
	# for that release rather than refuse.
	if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
		suite_lock_take "$lock" "$owner" 5 && return 0
	fi
	holder="pid ${pid:-unknown}, started ${started:-at an unknown time}${dir:+, in $dir}"
	echo "run-all.sh: another run of the test suite holds $lock ($holder): it uses this machine's test clusters (/tmp/rdzv-cluster*) and network namespaces (rdzvL-nK); wait for it to end (flock $lock true) or stop it, then run again" >&2
	return 1
}
