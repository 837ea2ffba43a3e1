#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The opt-outs restore Slurm's own behaviour: srun -K0,
# --kill-on-bad-exit=0, an exported SLURM_KILL_BAD_EXIT=0, and the admin's
# plugstack kill_on_bad_exit=no (slurm.conf's KillOnBadExit, 0 here, decides
# again) keep the other tasks running when rank 3 exits 1; the user's -K
# still stops the step under kill_on_bad_exit=no.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT
prog() {
	# Rank 3 fails a second in, once every node's tasks run (a rank's
	# imports take longer than that), not while srun is still launching.
	printf 'if [ "$SLURM_PROCID" = 3 ]; then sleep 1; date +%%s.%%N > %s; exit 1; fi; sleep %s; echo "task $SLURM_PROCID survived KBE=${SLURM_KILL_BAD_EXIT:-unset}"' "$stamp" "$1"
}
went_on() { # NAME
	is "$rc" 1 "$1: srun exits 1 (rank 3's status)"
	is "$(printf '%s\n' "$out" | grep -c survived)" 3 "$1: ... the other tasks ran on to their end"
	is "$(rdzv_lines)" "rdzv: rank 3 (node n2) exited with status 1" "$1: ... rank 3 is still named, without 'the step was stopped'"
}

new_stamp
step 150 srun -K0 -N2 -n4 --rdzv=torch sh -c "$(prog 3)"
went_on "srun -K0"
new_stamp
step 150 srun --kill-on-bad-exit=0 -N2 -n4 --rdzv=torch sh -c "$(prog 3)"
went_on "srun --kill-on-bad-exit=0"
new_stamp
step 150 env SLURM_KILL_BAD_EXIT=0 srun -N2 -n4 --rdzv=torch sh -c "$(prog 3)"
went_on "SLURM_KILL_BAD_EXIT=0 exported"
like "$out" "survived KBE=0" "SLURM_KILL_BAD_EXIT=0: ... the user's own value reaches the tasks untouched"

e2e_plugstack kill_on_bad_exit=no
new_stamp
step 150 srun -N2 -n4 --rdzv=torch sh -c "$(prog 3)"
went_on "plugstack kill_on_bad_exit=no"
new_stamp
step 150 srun -K -N2 -n4 --rdzv=torch sh -c "$(prog 120)"
took=$(since "$stamp")
within 10 "$took"; ok $? "kill_on_bad_exit=no, srun -K: the user's -K still stops the step (${took}s)" \
	|| diag "$(printf '%s\n' "$out" | tail -n 12)"
is "$(rdzv_lines)" "rdzv: rank 3 (node n2) exited with status 1; the step was stopped" "... and says so"
e2e_plugstack
done_testing
