#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sbatch --rdzv=torch with --export=NONE or --export=LIST: how Slurm carries a
# SPANK option into the batch script's environment changed in 23.11 ("define
# SPANK options environment variables when --export=NIL|NONE") and 24.05
# ("SPANK options not sent to the remote context when --export was used";
# remote callbacks once, not twice). Whatever the version does, the srun
# inside the script must either give its tasks the rendezvous variables or
# say that the option was lost: never run the step silently without them.
# Runs under every cluster (tests/versions: 22.05, 24.11, 26.05).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
e2e_start
cd "$(mktemp -d)" || exit 1
chmod 755 .
srun_path=$(command -v srun)

for export in NONE HOME; do
	rm -f "job-$export.out"
	# --export=NONE leaves the script and its tasks no PATH: full paths.
	run_to 120 sbatch --wait --export=$export -N2 --ntasks-per-node=2 --rdzv=torch \
		-o "$PWD/job-$export.out" --wrap "$srun_path /bin/bash -c 'echo TASK \${SLURM_PROCID} RANK=\${RANK:-unset} WORLD_SIZE=\${WORLD_SIZE:-unset}'"
	body=$(cat "job-$export.out" 2>/dev/null)
	diag "Slurm $SLURM_VERSION, --export=$export: exit $rc: $(printf '%s' "$body" | sort | head -c 400 | tr '\n' '|')"
	ranks=$(printf '%s\n' "$body" | sed -n 's/^TASK [0-9]* RANK=\([0-9]*\) .*/\1/p' | sort | tr '\n' ' ')
	if [ "$ranks" = "0 1 2 3 " ]; then
		ok 0 "sbatch --export=$export --rdzv=torch: the option reaches the inner srun, its 4 tasks get RANK 0-3"
		like "$body" "WORLD_SIZE=4" "... and WORLD_SIZE=4"
	else
		like "$body" "rdzv.*(lost|export)" "sbatch --export=$export --rdzv=torch: the option was lost and the job says so"
		unlike "$body" "RANK=unset" "... and no task ran without its variables"
	fi
	is "$rc" 0 "sbatch --export=$export --wait exits 0"
done
done_testing
