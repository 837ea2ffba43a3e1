#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# srun -m arbitrary takes the layout from -w (or -F, or SLURM_HOSTFILE when
# neither is given; -w wins over SLURM_HOSTFILE): task i on the i-th host.
# srun finds rank 0's node there and hands it to the nodes, so MASTER_ADDR
# names the node that really runs rank 0 in every case, and the ranks meet.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1
printf 'n2\nn1\nn3\n' > hosts

step() { # step LABEL MASTER CHECKARGS... -- SRUN ARGS...
	local label=$1 master=$2; shift 2
	local cargs=()
	while [ "$1" != "--" ]; do cargs+=("$1"); shift; done
	shift
	run_to 90 "$@" $PY "$app"
	is "$rc" 0 "$label: srun exits 0"
	verdict=$(printf '%s\n' "$out" | $check 3 --master "$master" "${cargs[@]}")
	is "$?" 0 "$label: MASTER_ADDR is $master, where rank 0 runs, and the ranks meet ($verdict)"
	[ "$rc" = 0 ] || diag "$(tail -n 5 <<< "$out")"
}

step "-m arbitrary -w n3,n1,n2" n3 -- srun -n3 -m arbitrary -w n3,n1,n2 --rdzv=torch
step "-m arbitrary -w n3,n1,n2 with SLURM_HOSTFILE set (-w wins)" n3 -- \
	env SLURM_HOSTFILE=$PWD/hosts srun -n3 -m arbitrary -w n3,n1,n2 --rdzv=torch
step "-m arbitrary with SLURM_HOSTFILE only (n2 first)" n2 -- \
	env SLURM_HOSTFILE=$PWD/hosts srun -n3 -m arbitrary --rdzv=torch
step "--distribution=arbitrary --nodelist=n2,n3,n1" n2 -- \
	srun -n3 --distribution=arbitrary --nodelist=n2,n3,n1 --rdzv=torch
step "-m arbitrary -F hosts (a node file)" n2 -- srun -n3 -m arbitrary -F hosts --rdzv=torch
# Inside a 3-node allocation, a block step on n2 and n3 only: srun's view of
# the step's nodes (not the job's) names rank 0's node, n2.
step "a block step on n2,n3 inside a 3-node allocation" n2 -- \
	salloc -N3 --ntasks-per-node=2 srun -N2 -n3 -w n2,n3 --rdzv=torch
done_testing
