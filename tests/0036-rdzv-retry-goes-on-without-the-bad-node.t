#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# helpers/rdzv-retry reruns a failed step inside its allocation without the
# node whose rank failed, on the allocation's spare node, so the world size
# stays 4. The ranks on n2 exit 1 on the first attempt only
# (TORCHELASTIC_RESTART_COUNT=0); the second runs on n1 and n3 and trains.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT
retry=$top_srcdir/helpers/rdzv-retry

step 5 "$retry" -n x -- srun true
is "$rc" 2 "rdzv-retry -n x: a usage error (exit 2)"
step 5 "$retry" -- python3 x.py
is "$rc" 2 "rdzv-retry without srun: a usage error (exit 2)"

new_stamp
step 300 salloc -N3 --ntasks-per-node=2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" node-once 0 "$stamp" n2
is "$rc" 0 "3 nodes allocated, 2 used, n2's ranks fail once: rdzv-retry exits 0"
like "$out" "rdzv-retry: excluding n2: rank [23] \(node n2\) exited with status 1; the step was stopped" \
	"... it says which node it excluded and why"
like "$out" "rdzv-retry: attempt 2 of 3: TORCHELASTIC_RESTART_COUNT=1, excluding n2" "... and how it reruns"
is "$(printf '%s\n' "$out" | grep -c 'trained sum=10 of 10')" 4 "... the second attempt's 4 ranks all-reduce (world size kept)"
is "$(printf '%s\n' "$out" | grep -E '^rank [0-9] on n[0-9] restart=1' | awk '{print $4}' | sort -u | tr '\n' ' ')" "n1 n3 " \
	"... on n1 and the spare n3, with TORCHELASTIC_RESTART_COUNT=1"

new_stamp
step 300 salloc -N2 --ntasks-per-node=2 "$retry" -n 1 -- srun -N2 --ntasks-per-node=2 --rdzv=torch -n4 $PY "$FAIL_APP" exit1-before-init 3 "$stamp"
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "no spare node: rdzv-retry gives up with srun's status (exit $rc)"
like "$out" "rdzv-retry: no spare node: without n2 the allocation has 1 node\\(s\\) and the step asks for 2; giving up" "... saying so, before a rerun srun would refuse"
unlike "$out" "attempt 2 of" "... and runs no second attempt"
done_testing
