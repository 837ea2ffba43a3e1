#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --rdzv=megatron on the local Slurm cluster. sbatch-examples/05 (TP x PP from
# its TP/PP variables, a site NCCL profile) runs scaled down to 2 nodes x 2
# tasks with TP=2 PP=2, Megatron-LM replaced by its stand-in
# (sbatch-examples/stand-ins/megatron-lm: Megatron's parser, its
# validate_args refusals, and a check that every tensor-parallel group sits
# on one node) around real torch.distributed on gloo. Bad layouts and hostile
# command lines are refused by srun before anything launches, with the
# numbers in the message.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
# The profiles directory must be root-owned all the way up (not /tmp).
profiles=/run/rdzv-test-profiles-$$
mkdir -p "$profiles" && chmod 755 "$profiles" || skip_all "cannot create $profiles"
trap 'rm -rf "$profiles"' EXIT
printf 'description test fabric\ndefault NCCL_IB_TIMEOUT=22\n' > "$profiles/test-ib.profile"
chmod 644 "$profiles/test-ib.profile"
e2e_start RDZV_NODE_GPUS="2 2 2" RDZV_PLUGSTACK_ARGS="profiles=$profiles"
trap 'e2e_stop; rm -rf "$profiles"' EXIT
ex="$top_srcdir/sbatch-examples"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
tmp=$(mktemp -d) || exit 1
cd "$ex" || exit 1
standin="$ex/stand-ins/megatron-lm/pretrain_gpt.py"
export PYTHON=$PY MEGATRON_LM="$ex/stand-ins/megatron-lm" NCCL_PROFILE=test-ib PYTHONDONTWRITEBYTECODE=1
small=(--cpus-per-task=1 --gpus-per-node=2 --ntasks-per-node=2 -N2)
marker=$tmp/launched
# report_field and megatron_refused (srun before launch, $marker never
# made): tests/lib/steps.sh.
launch=(bash -c "touch $marker; exec $PY $standin \"\$@\"" pretrain_gpt.py)

TP=2 PP=2 run_to 180 sbatch --wait "${small[@]}" -o "$tmp/ok.out" 05-megatron-gpt.sbatch
out=$(cat "$tmp/ok.out" 2>/dev/null)
is "$rc" 0 "example 5 with TP=2 PP=2 on 2 nodes x 2 tasks exits 0"
verdict=$(printf '%s\n' "$out" | $check 4 --per-node n1=2,n2=2)
is "$?" 0 "example 5: 4 Megatron ranks meet ($verdict)"
is "$(report_field tp_groups_split)" "[]" "example 5: every tensor-parallel group is on one node"
is "$(report_field env.CUDA_DEVICE_MAX_CONNECTIONS)" '"1"' "example 5: CUDA_DEVICE_MAX_CONNECTIONS=1 in every rank"
is "$(report_field nccl.NCCL_IB_TIMEOUT)" '"22"' "example 5: --nccl-profile applied the site profile"
[ "$rc" = 0 ] || diag "$(tail -n 15 "$tmp/ok.out")"

TP=4 PP=1 run_to 120 sbatch --wait "${small[@]}" -o "$tmp/tp4.out" 05-megatron-gpt.sbatch
out=$(cat "$tmp/tp4.out" 2>/dev/null)
ok "$([ "$rc" != 0 ]; echo $?)" "example 5 with TP=4 on nodes of 2 tasks fails the job (exit $rc)"
like "$out" "layout check: TP=4 is larger than the 2 tasks on node 0" \
	"... with the layout check's message in the job output (as the script's comment shows for TP=16)"
unlike "$out" "RDZV_REPORT" "... and no rank ever started"

megatron_refused "world size not divisible" "world size 6 .* TP x PP x CP = 2 x 2 x 1 = 4" \
	-N2 -n6 --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2
megatron_refused "TP group across a node boundary" "node 0 holds 3 tasks \(ranks 0..2\), not a multiple of TP=2: the tensor-parallel group of ranks 2..3 would straddle nodes 0 and 1" \
	-N2 -n6 --ntasks-per-node=3 --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size=2
megatron_refused "TP larger than a node's tasks" "TP=8 is larger than the 4 tasks on node 0" \
	-N2 -n8 --ntasks-per-node=4 --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size 8 \
	--pipeline-model-parallel-size=1 --context-parallel-size 1 --num-layers 2
megatron_refused "cyclic distribution" "--distribution=cyclic places consecutive ranks on different nodes" \
	-N2 -n4 --ntasks-per-node=2 -m cyclic --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size 2
megatron_refused "plane=1 distribution" "plane=1 places blocks of 1" \
	-N2 -n4 -m plane=1 --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size 2
TP_SIZE=3 megatron_refused "TP_SIZE exported for a run.sh, seen by srun" "srun: error: rdzv: .*from TP_SIZE" \
	-N2 --ntasks-per-node=2 --cpus-per-task=1 bash -c "touch $marker"
# Given only to the step (--export), srun cannot see it: the nodes' check ends
# every task before it execs, with the same message.
megatron_refused "TP_SIZE given through --export, seen by the nodes" "rdzv: error: task 0: .*from TP_SIZE" \
	--export=ALL,TP_SIZE=3 -N2 --ntasks-per-node=2 --cpus-per-task=1 bash -c "touch $marker"
megatron_refused "--tensor-model-parallel-size=0" "tensor-model-parallel-size 0 is out of range" \
	-N1 -n2 --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size=0
megatron_refused "a missing value" "pipeline-model-parallel-size needs a value" \
	-N1 -n2 --cpus-per-task=1 "${launch[@]}" --pipeline-model-parallel-size --bf16
megatron_refused "a huge number" "out of range: it must be a whole number from 1 to 1048576" \
	-N1 -n2 --cpus-per-task=1 "${launch[@]}" --context-parallel-size 99999999999999999999999
megatron_refused "a repeated flag whose first value is bad" "'x' is not a whole number" \
	-N1 -n2 --cpus-per-task=1 "${launch[@]}" --tensor-model-parallel-size x --tensor-model-parallel-size 2

run_to 120 srun --rdzv=megatron -N2 -n4 -m block --cpus-per-task=1 $PY "$standin" \
	--tensor-model-parallel-size 2 --tensor-model-parallel-size 1 --use-torch-fsdp2
is "$rc" 0 "a repeated flag: the last value (TP=1) counts, as in Megatron's argparse"
is "$(report_field env.CUDA_DEVICE_MAX_CONNECTIONS)" "null" "--use-torch-fsdp2: CUDA_DEVICE_MAX_CONNECTIONS left unset"

CUDA_DEVICE_MAX_CONNECTIONS=8 run_to 120 srun --rdzv=megatron -N1 -n2 --cpus-per-task=1 $PY "$standin"
is "$(report_field env.CUDA_DEVICE_MAX_CONNECTIONS)" '"8"' "a user's exported CUDA_DEVICE_MAX_CONNECTIONS wins"
rm -rf "$tmp"
done_testing
