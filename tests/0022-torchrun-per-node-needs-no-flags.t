#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# srun --rdzv=torchrun with one task per node runs a real torchrun ($TORCHRUN
# from tests/lib/e2e.sh: PyTorch 1.13's through torchrun-shim.py, 2.x's through
# torchrun-nolibuv.py, see why there) with no torchrun flags at all:
# nodes, node rank, processes per node (the step's GPUs on the node, 1
# without GPUs), master address and port all come from PET_* variables.
# More than one task per node is refused by srun before launch.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
rec=$(mktemp -d /tmp/rdzv-rec.XXXXXX)
e2e_start RDZV_PLUGSTACK_ARGS="record_dir=$rec"
trap 'e2e_stop; rm -rf "$rec"' EXIT
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1

run_to 90 srun -N3 --ntasks-per-node=1 --gpus-per-node=2 --rdzv=torchrun $TORCHRUN "$app"
is "$rc" 0 "torchrun on 3 nodes x 2 fake GPUs, no flags: srun exits 0"
verdict=$(printf '%s\n' "$out" | $check 6 --launcher torchrun --per-node n1=2,n2=2,n3=2)
is "$?" 0 "torchrun: 6 workers (2 per node from the step's GPUs) meet and all-reduce ($verdict)"

run_to 90 srun -N2 --ntasks-per-node=1 --rdzv=torchrun $TORCHRUN "$app"
is "$rc" 0 "torchrun on 2 nodes without GPUs: srun exits 0"
verdict=$(printf '%s\n' "$out" | $check 2 --launcher torchrun --per-node n1=1,n2=1)
is "$?" 0 "torchrun without GPUs starts one worker per node ($verdict)"

run_to 60 srun -N2 -n4 --rdzv=torchrun $PY -c 'open("/tmp/rdzv-should-not-run","w")'
isnt_zero=$([ "$rc" != 0 ] && echo 0 || echo 1)
ok "$isnt_zero" "torchrun with 4 tasks on 2 nodes is refused (srun exit $rc)"
like "$out" "ntasks-per-node=1" "the refusal tells the user to use --ntasks-per-node=1"
ok "$([ ! -e /tmp/rdzv-should-not-run ] && echo 0 || echo 1)" "nothing was launched"
rm -f /tmp/rdzv-should-not-run
records_whole "$rec"
done_testing
