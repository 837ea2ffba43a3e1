#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# When rank 0's node name does not resolve on the other nodes, every task
# fails at once with a message that says so (never a hang in
# init_process_group), whether the plugin is required or optional, and no
# node is drained.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_GHOST_NODE=1
app="$top_srcdir/tests/e2e/allreduce.py"
cd "$(mktemp -d)" || exit 1

for kind in required optional; do
	e2e_stop
	e2e_start RDZV_GHOST_NODE=1 RDZV_PLUGIN_REQUIRED=$kind
	start=$(date +%s)
	run_to 60 env RDZV_TEST_PG_TIMEOUT=600 srun -p ghost -N2 -n3 --rdzv=torch $PY "$app"
	took=$(( $(date +%s) - start ))
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "$kind: the step fails (exit $rc), it does not hang"
	ok "$([ "$took" -lt 30 ] && echo 0 || echo 1)" "$kind: it fails fast (${took}s)"
	like "$out" "MASTER_ADDR ghost \(the node of rank 0\) does not resolve" "$kind: the message names the unresolvable master"
	unlike "$out" "RDZV_REPORT" "$kind: no rank ran the training script"
	is "$(scontrol show nodes -o | grep -c -E 'State=[A-Z+]*(DRAIN|DOWN)')" 0 "$kind: no node drained"
done
done_testing
