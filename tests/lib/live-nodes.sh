# SPDX-License-Identifier: GPL-2.0-or-later
# live-nodes.sh: source after e2e.sh (tests/0120, tests/0124): the ranks of
# tests/e2e/live_rank.py and the processes of their nodes.
#
#   wait_for SECS TEST...   until TEST holds (events, polled), SECS scaled
#                           by E2E_TIMEOUT_SCALE; 1 when it never did
#   started DIR N           N ranks wrote DIR/started.RANK
#   node_procs DIR RANK     the node of rank RANK, then its slurmd, the
#                           step's slurmstepd there (the rank's parent) and
#                           the rank, as pids (all the test's own)
#   ms_since T              milliseconds since $EPOCHREALTIME was T
#   live_cleanup            the tests' EXIT trap: the processes the test
#                           stopped ($stopped) continued, the cluster
#                           stopped, $work removed
#   hang_until_srun_ends PID...  PIDs (a node's, the test's own) stopped
#                           (SIGSTOP) until srun ($srun_pid) ends, then
#                           continued: srun's status in $rc, the time from
#                           the stop to its end in $t (ms); $stopped holds
#                           the PIDs meanwhile, for the test's cleanup
wait_for() {
	local end=$((SECONDS + $1 * ${E2E_TIMEOUT_SCALE:-2})); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done
}
started() { [ "$(ls "$1"/started.* 2>/dev/null | wc -l)" -ge "$2" ]; }
node_procs() {
	local node pid stepd
	read -r node pid < "$1/started.$2"
	stepd=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	grep -q slurmstepd "/proc/$stepd/cmdline" 2>/dev/null || stepd=
	echo "$node $(cat "$RDZV_CLUSTER_DIR/run/slurmd-$node.pid" 2>/dev/null) $stepd $pid"
}
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }'; }
hang_until_srun_ends() {
	local t0
	stopped="$*"
	kill -STOP $stopped
	t0=$EPOCHREALTIME
	wait "$srun_pid"; rc=$?
	t=$(ms_since "$t0")
	kill -CONT $stopped; stopped=
}
live_cleanup() {
	[ -n "$stopped" ] && kill -CONT $stopped 2>/dev/null
	e2e_stop
	rm -rf "$work"
}
