#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A rank that exits non-zero or is killed ends the whole step at once on
# every node (Slurm's kill-on-bad-exit, set by the plugin for every mode but
# off: lib/failure/failure.h), and srun names it in one line in the plugin's
# terms; a rank that exits 0 early stops nothing. 2 nodes x 2
# ranks, PyTorch gloo: without the plugin's default the survivors wait in
# init_process_group for PyTorch's 30-minute timeout (or sleep 600 s here).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT

new_stamp
step 120 srun -N2 -n4 --rdzv=torch $PY "$FAIL_APP" exit1-before-init 3 "$stamp"
took=$(since "$stamp")
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "rank 3 exits 1 before init: srun fails (exit $rc)"
within 10 "$took"; ok $? "... and the step ends ${took}s after the failure (under 10 s; PyTorch would wait 30 min)"
is "$(rdzv_lines)" "rdzv: rank 3 (node n2) exited with status 1; the step was stopped" \
	"... one line names rank 3 on n2, its status and that the step was stopped"
is "$(leftover "$stamp")" "" "... no process of the step is left on any node"

new_stamp
step 120 srun -N2 -n4 --rdzv=torch $PY "$FAIL_APP" kill-after-init 3 "$stamp"
took=$(since "$stamp")
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "rank 3 killed by SIGKILL after init: srun fails (exit $rc)"
within 10 "$took"; ok $? "... and the step ends ${took}s after the kill (the others were to sleep 600 s)"
[ -s "$stamp" ] || diag "$(printf "%s\n" "$out" | tail -n 15)"
is "$(rdzv_lines)" "rdzv: rank 3 (node n2) was killed by signal 9 (Killed); the step was stopped" \
	"... one line names rank 3 on n2 and the signal, not the ranks the step's stop killed"
unlike "$out" "slept through" "... no survivor ran on"
is "$(leftover "$stamp")" "" "... no process of the step is left on any node"

new_stamp
step 120 srun -N2 -n4 --rdzv=torch $PY "$FAIL_APP" exit0-early 3 "$stamp"
is "$rc" 0 "rank 3 exits 0 early: srun exits 0"
is "$(printf '%s\n' "$out" | grep -c 'survived')" 3 "... ranks 0-2 ran on to their end"
is "$(rdzv_lines)" "" "... and no failure is reported"

new_stamp
step 120 srun -N2 -n4 --rdzv=torch $PY -c 'import os; print("KBE=" + os.environ.get("SLURM_KILL_BAD_EXIT", "unset"), "REPORT=" + os.environ.get("RDZV_STEP_REPORT", "unset"))'
is "$(printf '%s\n' "$out" | grep -c '^KBE=unset REPORT=unset$')" 4 \
	"the tasks inherit neither SLURM_KILL_BAD_EXIT nor the report address (a nested srun would take them for the user's)"
done_testing
