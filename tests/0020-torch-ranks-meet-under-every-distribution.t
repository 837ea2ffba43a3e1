#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real PyTorch ranks (gloo, env://) launched by one srun --rdzv=torch on the
# local 3-node cluster meet and all-reduce, for block, cyclic, plane and
# arbitrary distributions, with uneven tasks per node; every rank's view is
# checked against Slurm's (check_reports.py).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
rec=$(mktemp -d /tmp/rdzv-rec.XXXXXX)
e2e_start RDZV_PLUGSTACK_ARGS="record_dir=$rec"
trap 'e2e_stop; rm -rf "$rec"' EXIT
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1

step() { # step NTASKS CHECKARGS -- SRUNARGS
	local n=$1; shift
	local cargs=()
	while [ "$1" != "--" ]; do cargs+=("$1"); shift; done
	shift
	run_to "$E2E_TIMEOUT" srun "$@" $PY "$app"
	srun_rc=$rc
	srun_out=$out
	verdict=$(printf '%s\n' "$out" | $check "$n" "${cargs[@]}")
	check_rc=$?
}

step 6 -- -N3 -n6 --rdzv=torch -m block
is "$srun_rc" 0 "block 3 nodes x 6 tasks (4+1+1): srun exits 0"
is "$check_rc" 0 "block: ranks 0..5, LOCAL_* per node, MASTER_ADDR = rank 0's node ($verdict)"

step 6 --per-node n1=2,n2=2,n3=2 -- -N3 -n6 --ntasks-per-node=2 --rdzv=torch -m cyclic
is "$srun_rc" 0 "cyclic 3 nodes x 6 tasks: srun exits 0"
is "$check_rc" 0 "cyclic: ranks interleaved across nodes still meet ($verdict)"

step 7 -- -N3 -n7 --rdzv=torch -m plane=2
is "$srun_rc" 0 "plane=2 3 nodes x 7 tasks: srun exits 0"
is "$check_rc" 0 "plane=2: ranks meet ($verdict)"

# 3+2+1 with rank 0 on the LAST node: the hostfile lays task i on line i.
printf 'n3\nn1\nn1\nn1\nn2\nn2\n' > hosts
SLURM_HOSTFILE=$PWD/hosts step 6 --master n3 --per-node n1=3,n2=2,n3=1 -- -n6 --rdzv=torch --distribution=arbitrary
is "$srun_rc" 0 "arbitrary with SLURM_HOSTFILE (3+2+1, rank 0 on n3): srun exits 0"
is "$check_rc" 0 "arbitrary: MASTER_ADDR is n3, where rank 0 runs ($verdict)"
[ "$check_rc" = 0 ] || diag "$srun_out"
records_whole "$rec"
done_testing
