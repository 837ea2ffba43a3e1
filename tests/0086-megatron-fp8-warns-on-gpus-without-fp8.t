#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Megatron's FP8 flags on a GPU without FP8 give one warning that names the
# GPU model, read from the node's topology when binding loads it: n1 is an
# AWS p4d (A100: no FP8), n3 is ipa20 (H100: FP8). The step still runs.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
topo=$(mktemp -d /tmp/rdzv-topo.XXXXXX)
ln -s "$fixtures/aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml" "$topo/n1.xml"
ln -s "$fixtures/psmgmt__tests__hwloc__topo.jwb0004.xml" "$topo/n2.xml"
ln -s "$fixtures/flux-core__t__hwloc-data__ipa20.xml" "$topo/n3.xml"
e2e_start RDZV_NODE_GPUS="8 4 4" RDZV_PLUGSTACK_ARGS="topology=$topo/%n.xml bind=auto"
cd "$topo" || exit 1
prog='echo RANK=$RANK CDMC=$CUDA_DEVICE_MAX_CONNECTIONS'
args="--tensor-model-parallel-size 2 --fp8-format hybrid"

run_to 60 srun -w n1 -N1 -n2 --gpus-per-node=2 --rdzv=megatron bash -c "$prog" $args
is "$rc" 0 "FP8 on an A100 node: the step still runs"
like "$out" "warning: .*A100" "the warning names the A100 found in n1's topology"
is "$(printf '%s\n' "$out" | grep -c 'warning:.*A100')" 1 "the warning is printed once per step, not per task"
run_to 60 srun -w n3 -N1 -n2 --gpus-per-node=2 --rdzv=megatron bash -c "$prog" $args
is "$rc" 0 "FP8 on an H100 node runs"
unlike "$out" "warning:.*FP8|warning:.*fp8" "no FP8 warning on an H100"
run_to 60 srun -w n1 -N1 -n2 --gpus-per-node=2 --rdzv=megatron bash -c "$prog" --tensor-model-parallel-size 2
unlike "$out" "warning:.*A100" "no warning on the A100 without FP8 flags"
rm -rf "$topo"
done_testing
