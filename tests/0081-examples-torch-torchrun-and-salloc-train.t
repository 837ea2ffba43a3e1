#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sbatch-examples 1, 2, 3 and 6, run as written on the local 3-node Slurm
# cluster, scaled down from the command line (sbatch options override the
# scripts' #SBATCH lines: 2 fake GPUs or 2 tasks per node instead of 8, one
# CPU per task): real torchrun ($TORCHRUN from tests/lib/e2e.sh, a shim per
# PyTorch major, see there) and real PyTorch DDP on gloo train
# sbatch-examples/train_tiny.py, and every rank's view is checked against
# Slurm's. The scripts hold no rank, address or port anywhere.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_NODE_GPUS="2 2 2"
ex="$top_srcdir/sbatch-examples"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
tmp=$(mktemp -d) || exit 1
cd "$ex" || exit 1
export PYTHON=$PY TORCHRUN
small=(--cpus-per-task=1 --gpus-per-node=2)

job() { # job NAME SCRIPT SBATCH-OPTIONS...: sbatch --wait, output in $out
	local name=$1 script=$2
	shift 2
	run_to 180 sbatch --wait -o "$tmp/$name.out" "$@" "$script"
	out=$(cat "$tmp/$name.out" 2>/dev/null)
}

for f in 01-torchrun-one-node.sbatch 02-torchrun-two-nodes.sbatch 03-torch-two-nodes.sbatch \
	06-interactive-salloc.sh; do
	unlike "$(grep -v '^[[:space:]]*#' "$f")" '--node_rank|--master_addr|--master_port|MASTER_ADDR=|MASTER_PORT=|RANK=\$SLURM|WORLD_SIZE=\$SLURM' \
		"$f sets no rank, address or port itself"
done

job ex1 01-torchrun-one-node.sbatch "${small[@]}"
is "$rc" 0 "example 1 (torchrun, one node) exits 0"
verdict=$(printf '%s\n' "$out" | $check 2 --launcher torchrun --per-node n1=2)
is "$?" 0 "example 1: torchrun starts one worker per GPU (2) and they train ($verdict)"
like "$out" '"replicas_equal": true' "example 1: DDP replicas end identical"

job ex2 02-torchrun-two-nodes.sbatch "${small[@]}"
is "$rc" 0 "example 2 (torchrun, two nodes) exits 0"
verdict=$(printf '%s\n' "$out" | $check 4 --launcher torchrun --per-node n1=2,n2=2)
is "$?" 0 "example 2: two torchruns, 2 workers each, meet without --node_rank/--master_addr ($verdict)"

job ex3 03-torch-two-nodes.sbatch "${small[@]}" --ntasks-per-node=2
is "$rc" 0 "example 3 (one task per GPU, plain python) exits 0"
verdict=$(printf '%s\n' "$out" | $check 4 --per-node n1=2,n2=2)
is "$?" 0 "example 3: 4 ranks train with RANK/LOCAL_RANK/MASTER_* from the plugin ($verdict)"
like "$out" 'train_tiny: step 19 loss' "example 3: rank 0 ran all 20 steps"

run_to 240 env SMALL_STEP_TASKS=2 salloc -N2 --ntasks-per-node=2 --cpus-per-task=1 --rdzv=torch \
	./06-interactive-salloc.sh
is "$rc" 0 "example 6 (salloc --rdzv=torch, then sruns) exits 0"
first=$(printf '%s\n' "$out" | grep RDZV_REPORT | python3 -c '
import json, sys
reps = [json.loads(l.split("RDZV_REPORT ", 1)[1]) for l in sys.stdin]
print(sorted((r["world"], r["env"]["RANK"]) for r in reps))')
is "$first" "[(2, '0'), (2, '1'), (4, '0'), (4, '1'), (4, '2'), (4, '3')]" \
	"example 6: the full step (4 ranks) and a smaller step (2 ranks) each form their own world"
like "$out" 'rdzv=off: RANK=unset' "example 6: srun --rdzv=off inside the allocation gets nothing"
[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | tail -n 15)"
rm -rf "$tmp"
done_testing
