#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# helpers/rdzv-retry reruns a failed step inside its allocation, and first
# decides whose fault it was (3 nodes allocated, the step uses 2, so the
# world size of 4 is kept on the spare):
#   - a rank killed by a signal it did not raise (SIGKILL, once, on n2):
#     the node's fault: n2 excluded, the rerun trains on n1 and n3;
#   - a rank that exits 1 once on a healthy node: the script's own, checked
#     (rdzv-preflight --node on n2: healthy): nothing excluded, one rerun in
#     place trains (on the nodes Slurm picks);
#   - a bug (ValueError at every attempt): nothing excluded, two attempts,
#     then exit 70, "do not requeue";
#   - a rank that exits 1 on a node whose health check fails (one of n2's
#     GPU device files removed, the cluster's own): the node's fault, n2
#     excluded, naming the fault;
#   - no spare node: it gives up before a rerun srun would refuse.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT
retry=$top_srcdir/helpers/rdzv-retry
export RDZV_PREFLIGHT=$top_builddir/helpers/rdzv-preflight
trained() { printf '%s\n' "$out" | grep -c 'trained sum=10 of 10'; }
ran_on() { printf '%s\n' "$out" | grep -E "^rank [0-9] on n[0-9] restart=$1" | awk '{print $4}' | sort -u | tr '\n' ' '; }

step 5 "$retry" -n x -- srun true
is "$rc" 2 "rdzv-retry -n x: a usage error (exit 2)"
step 5 "$retry" -- python3 x.py
is "$rc" 2 "rdzv-retry without srun: a usage error (exit 2)"

# 1. A process killed (not by itself): the node is excluded.
new_stamp
step 300 salloc -N3 --ntasks-per-node=2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" node-killed-once 0 "$stamp" n2
is "$rc" 0 "n2's ranks killed (SIGKILL) once: rdzv-retry exits 0"
like "$out" "rdzv-retry: excluding n2 \\(a signal it did not raise itself\\): rank [23] \\(node n2\\) was killed by signal 9" \
	"... it excludes n2, saying why"
like "$out" "rdzv-retry: attempt 2 of 3: TORCHELASTIC_RESTART_COUNT=1, excluding n2" "... and how it reruns"
is "$(trained)" 4 "... the second attempt's 4 ranks all-reduce (world size kept)"
is "$(ran_on 1)" "n1 n3 " "... on n1 and the spare n3, with TORCHELASTIC_RESTART_COUNT=1"

# 2. An exit of its own on a healthy node, once: rerun in place.
new_stamp
step 300 salloc -N3 --ntasks-per-node=2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" node-once 0 "$stamp" n2
is "$rc" 0 "n2's ranks exit 1 once: rdzv-retry exits 0"
like "$out" "rdzv-retry: n2 checked: healthy in [0-9]+ ms" "... it checks n2's health first (rdzv-preflight --node)"
like "$out" "rdzv-retry: not a node's fault: rank [23] \\(node n2\\) exited with status 1; the step was stopped \\(its own exit\\); retrying once in place, excluding nothing" \
	"... then reruns in place, excluding nothing"
unlike "$out" "excluding n[0-9]" "... no node is excluded"
is "$(trained)" 4 "... the second attempt trains"
is "$(ran_on 1 | wc -w)" 2 "... on 2 of the allocation's nodes, none excluded (Slurm picks them: 24.11 may take the spare while n2 completes the failed step)"

# 3. A bug: the same failure at every attempt stops after two.
new_stamp
step 300 salloc -N3 --ntasks-per-node=2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" bug 0 "$stamp"
is "$rc" 70 "a ValueError at every attempt: rdzv-retry exits 70 (the script fails by itself: do not requeue)"
like "$out" "the script failed by itself again \\(its own exit, on a healthy node\\); stopping: exit 70" "... saying so"
is "$(printf '%s\n' "$out" | grep -c '^rdzv-retry: attempt [0-9]* of')" 2 "... after 2 attempts"
unlike "$out" "excluding n[0-9]" "... excluding no node"

# 4. An exit of its own on a node that fails its health check: excluded.
gpu=$RDZV_CLUSTER_DIR/dev/n2/nvidia1
rm -f "$gpu"
new_stamp
step 300 salloc -N3 --ntasks-per-node=2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" node-once 0 "$stamp" n2
mknod "$gpu" c 195 1
is "$rc" 0 "n2's ranks exit 1 once and n2 lost a GPU: rdzv-retry exits 0"
like "$out" "rdzv-retry: excluding n2 \\(its node's health check: GPU 1 missing: $gpu\\)" "... it excludes n2, naming the fault its check found"
is "$(ran_on 1)" "n1 n3 " "... and reruns on n1 and n3"

# 5. No spare node: given up before srun would refuse the rerun.
new_stamp
step 300 salloc -N2 --ntasks-per-node=2 "$retry" -n 1 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" node-killed-once 0 "$stamp" n2
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "no spare node: rdzv-retry gives up with srun's status (exit $rc)"
like "$out" "rdzv-retry: no spare node: without n2 the allocation has 1 node\\(s\\) and the step asks for 2; giving up" "... saying so, before a rerun srun would refuse"
unlike "$out" "attempt 2 of" "... and runs no second attempt"
done_testing
