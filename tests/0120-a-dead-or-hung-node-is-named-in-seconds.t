#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A node that dies or hangs is the failure's first cause, named in seconds,
# and the step ends without waiting for slurmctld (whose SlurmdTimeout, 300 s
# here as by default, is what srun waited for before). Faults go only
# into what this test started: its own slurmd -N (its pid file), the step's
# slurmstepd there (the parent of the node's rank) and the rank (found by
# the node's name in its environment).
#   - a node hangs (its slurmd, slurmstepd and rank stopped, SIGSTOP): the
#     others' collective times out (the script's own 10 s), srun asks every
#     node, the stopped one does not answer: srun names it and exits within
#     15 s of the timeout;
#   - a node hangs under the plugin's own --rdzv-collective-timeout=10s
#     (3 nodes, 2 ranks each: the hang diagnosis armed): srun names the
#     stopped node, rdzv-hang shows where the living ranks are without
#     waiting for the silent node, and srun exits within 15 s of the
#     timeout;
#   - a node dies (the same killed, SIGKILL): the others lose their peer;
#     srun names the dead node, not the healthy one whose rank failed
#     first, and exits within 15 s;
#   - under salloc --no-kill with one spare node, rdzv-retry excludes the
#     node of a rank whose process was killed, and training resumes on the
#     others within 10 s; the dead node, within 30 s.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/live-nodes.sh"
e2e_require torch
app=$top_srcdir/tests/e2e/live_rank.py
retry=$top_srcdir/helpers/rdzv-retry
hang=$top_builddir/helpers/rdzv-hang
work=$(mktemp -d /tmp/rdzv-0120.XXXXXX) || exit 1
chmod 755 "$work"
stopped=
trap live_cleanup EXIT
# The hang diagnosis's helper and Python hook (case 1b; nothing is armed
# without --rdzv-collective-timeout or --rdzv-debug=hang).
e2e_start RDZV_PLUGSTACK_ARGS="hang_python=$top_srcdir/helpers/python hang_helper=$hang"
cd "$work" || exit 1

# 1. A node hangs.
d=$work/hang; mkdir -m 755 "$d"
srun -N3 --ntasks-per-node=1 --rdzv=torch $PY "$app" "$d" 10 >"$d/out" 2>&1 &
srun_pid=$!
wait_for 120 started "$d" 3; ok $? "3 ranks on 3 nodes train"
read -r node sd st rk <<< "$(node_procs "$d" 2)"
ok "$([ -n "$sd" ] && [ -n "$st" ] && [ -n "$rk" ] && echo 0 || echo 1)" "rank 2's node $node: slurmd $sd, slurmstepd $st, rank $rk (the test's own)"
hang_until_srun_ends $sd $st $rk
out=$(cat "$d/out")
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "srun fails (exit $rc)"
like "$out" "rdzv: node $node does not answer \\(dead or hung: last heard [0-9.]+ s before the failure\\); the step was stopped" \
	"the line names the stopped node $node as the first cause"
ok "$([ "$t" -lt 25000 ] && echo 0 || echo 1)" "srun ends $t ms after the stop: within 15 s of the ranks' 10 s timeout"
diag "$(grep '^rdzv:' "$d/out" | head -n 3)"

# 1b. A node hangs under the plugin's own collective timeout, which arms
# the hang diagnosis: 3 nodes, 2 ranks each, node 2's slurmd, slurmstepd
# and both ranks stopped (before case 2, whose dead node stays down).
d=$work/hangdiag; mkdir -m 755 "$d"
srun -N3 --ntasks-per-node=2 --rdzv=torch --rdzv-collective-timeout=10s $PY "$app" "$d" 0 >"$d/out" 2>&1 &
srun_pid=$!
wait_for 120 started "$d" 6; ok $? "6 ranks on 3 nodes train, armed by --rdzv-collective-timeout=10s"
read -r node sd st rk <<< "$(node_procs "$d" 2)"
peers=$(awk -v n="$node" '$1 == n { print $2 }' "$d"/started.*)
ok "$([ -n "$sd" ] && [ -n "$st" ] && [ "$(echo $peers | wc -w)" = 2 ] && echo 0 || echo 1)" "rank 2's node $node: slurmd $sd, slurmstepd $st, ranks $(echo $peers)"
hang_until_srun_ends $sd $st $peers
out=$(cat "$d/out")
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "srun fails (exit $rc)"
like "$out" "rdzv: node $node does not answer \\(dead or hung: last heard [0-9.]+ s before the failure\\); the step was stopped" \
	"the line names the stopped node $node as the first cause"
living=$(printf '%s\n' "$out" | grep -E '^  rank +[0-9]+ +n[0-9]+ ' | grep -v " $node " | grep -vc 'no dump')
ok "$([ "$living" -ge 4 ] && echo 0 || echo 1)" "rdzv-hang shows where the 4 living ranks are ($living shown)"
unlike "$out" "did not end within|srun for the collectors ended" "... without waiting for the silent node's collector"
ok "$([ "$t" -lt 25000 ] && echo 0 || echo 1)" "srun ends $t ms after the stop: within 15 s of the 10 s collective timeout"
diag "$(grep -E '^(rdzv|  rank|step )' "$d/out" | head -n 12)"

# 2. A node dies.
d=$work/death; mkdir -m 755 "$d"
srun -N3 --ntasks-per-node=1 --rdzv=torch $PY "$app" "$d" 60 >"$d/out" 2>&1 &
srun_pid=$!
wait_for 120 started "$d" 3; ok $? "3 ranks on 3 nodes train again"
read -r node sd st rk <<< "$(node_procs "$d" 1)"
ok "$([ -n "$sd" ] && [ -n "$st" ] && [ -n "$rk" ] && echo 0 || echo 1)" "rank 1's node $node: slurmd $sd, slurmstepd $st, rank $rk"
kill -KILL $sd $st $rk
t0=$EPOCHREALTIME
wait "$srun_pid"; rc=$?
t=$(ms_since "$t0")
out=$(cat "$d/out")
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "srun fails (exit $rc)"
like "$out" "rdzv: node $node does not answer \\(dead or hung: last heard [0-9.]+ s before the failure\\); the step was stopped" \
	"the line names the dead node $node"
like "$out" "a consequence\\)" "... and the healthy node's failed rank as its consequence"
ok "$([ "$t" -lt 15000 ] && echo 0 || echo 1)" "srun ends $t ms after the node's death (at most 15 s; slurmctld would take SlurmdTimeout)"
diag "$(grep '^rdzv:' "$d/out" | head -n 3)"

# 3. rdzv-retry under salloc --no-kill, one spare node, a rank's process
# killed (SIGKILL, its node alive): resumes without its node within 10 s.
e2e_stop
e2e_start RDZV_NODES=4
# retry_start NAME: rdzv-retry's line under salloc, until 3 ranks train.
retry_start() {
	d=$work/$1; mkdir -m 755 "$d"
	salloc --no-kill -N4 "$retry" -n 1 -- srun -N3 --ntasks-per-node=1 --rdzv=torch $PY "$app" "$d" 60 >"$d/out" 2>&1 &
	salloc_pid=$!
	wait_for 120 started "$d" 3; ok $? "attempt 1: 3 ranks on 3 of the 4 nodes train"
}
trained() { [ "$(grep -c 'trained sum=6 of 6' "$d/out")" -ge 3 ]; }
# retry_resumed BOUND_MS WHAT: from the fault ($t0) to the rerun's training,
# then rdzv-retry's end; $out its output.
retry_resumed() {
	wait_for 60 trained; ok $? "attempt 2 trains: 3 ranks all-reduce"
	t=$(ms_since "$t0")
	ok "$([ "$t" -lt "$1" ] && echo 0 || echo 1)" "training resumed $t ms after $2 (at most $(($1 / 1000)) s)"
	wait "$salloc_pid"; rc=$?
	out=$(cat "$d/out")
	is "$rc" 0 "rdzv-retry exits 0"
	[ "$rc" = 0 ] || diag "$(grep -E '^(rdzv|srun|salloc)' "$d/out" | tail -n 12)"
}
retry_start process
read -r node pid < "$d/started.1"
kill -KILL "$pid"
t0=$EPOCHREALTIME
retry_resumed 10000 "rank 1's process died on $node"
like "$out" "rdzv-retry: excluding $node \\(a signal it did not raise itself\\): rank 1 \\(node $node\\) was killed by signal 9" \
	"rdzv-retry excluded the node of the killed process, saying why"
diag "$(grep -E '^rdzv' "$d/out" | head -n 6)"

# 4. The same, the node dead (its slurmd, slurmstepd and rank killed):
# resumes without it within 30 s.
retry_start retry
read -r node sd st rk <<< "$(node_procs "$d" 1)"
kill -KILL $sd $st $rk
t0=$EPOCHREALTIME
retry_resumed 30000 "$node died"
like "$out" "rdzv-retry: excluding $node \\(it does not answer: dead or hung\\)" "rdzv-retry excluded the dead node, saying why"
unlike "$(grep 'trained' "$d/out")" " on $node " "... and the rerun ran without it"
done_testing
