#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Kill-on-bad-exit holds for every rendezvous mode but off, however the mode
# was chosen: srun --rdzv, #SBATCH --rdzv (sbatch), salloc --rdzv, RDZV_MODE,
# the site's plugstack mode=. Rank 3 of 2 nodes x 2 tasks exits 1;
# the others would sleep 120 s. Under off nothing changes: the others run on
# to their end. No PyTorch needed: the program is sh.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT
# $1: seconds the others sleep before printing "survived"
prog() {
	# Rank 3 fails a second in, once every node's tasks run (a rank's
	# imports take longer than that): Slurm 26.05's srun let a step run on
	# twice in CI when a task failed at once, right after a plugstack change.
	printf 'if [ "$SLURM_PROCID" = 3 ]; then sleep 1; date +%%s.%%N > %s; exit 1; fi; sleep %s; echo "task $SLURM_PROCID survived"' "$stamp" "$1"
}
stopped() { # NAME: the step was stopped in time and rank 3 named
	local took
	took=$(since "$stamp")
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "$1: the step fails (exit $rc)"
	within 10 "$took"; ok $? "$1: ... ${took}s after rank 3's exit (the others were to sleep 120 s)"
	is "$(rdzv_lines)" "rdzv: rank 3 (node n2) exited with status 1; the step was stopped" "$1: ... rank 3 is named"
	unlike "$out" survived "$1: ... no other task ran on"
}

for mode in torch deepspeed megatron jax; do
	new_stamp
	step 150 srun -N2 -n4 --rdzv=$mode sh -c "$(prog 120)"
	stopped "srun --rdzv=$mode"
done
# lightning refuses -n4 without --ntasks-per-node before launch (as Lightning would)
new_stamp
step 150 srun -N2 --ntasks-per-node=2 --rdzv=lightning sh -c "$(prog 120)"
stopped "srun --rdzv=lightning"

new_stamp
step 150 srun -N2 -n4 --rdzv=off sh -c "$(prog 3)"
is "$(printf '%s\n' "$out" | grep -c survived)" 3 "srun --rdzv=off: Slurm's default, the other tasks run on to their end"
is "$(rdzv_lines)" "" "srun --rdzv=off: ... and the plugin names nothing"

new_stamp
step 150 env RDZV_MODE=torch srun -N2 -n4 sh -c "$(prog 120)"
stopped "RDZV_MODE=torch"

new_stamp
# The step's end is when the batch script's srun returns (written by the
# script): sbatch --wait polls the job's state at intervals of its own
# (41 s seen under load on 24.11), which is not the step's time.
printf '#!/bin/bash\n#SBATCH -N2 -n4\n#SBATCH --rdzv=torch\nsrun sh -c %q\nrc=$?\necho $EPOCHREALTIME > %q\nexit $rc\n' "$(prog 120)" "$stamp.end" > job.sh
step 150 sbatch --wait -o job.out job.sh
out=$(cat job.out 2>/dev/null)
[ -s "$stamp.end" ] && t_end=$(cat "$stamp.end")
stopped "#SBATCH --rdzv=torch"

new_stamp
step 150 salloc -N2 -n4 --rdzv=torch srun sh -c "$(prog 120)"
stopped "salloc --rdzv=torch"

new_stamp
e2e_plugstack mode=torch
step 150 srun -N2 -n4 sh -c "$(prog 120)"
stopped "plugstack mode=torch (the site's default)"
e2e_plugstack
done_testing
