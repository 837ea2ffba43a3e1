#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --rdzv=deepspeed on the local Slurm cluster: sbatch-examples/04 on one and
# two nodes (scaled to 2 tasks per node), with DeepSpeed replaced by its
# stand-in (sbatch-examples/stand-ins/deepspeed: reads what
# deepspeed.init_distributed and the launcher's CROSS_* contract need, and
# checks CROSS_RANK, CROSS_SIZE and LOCAL_SIZE against where the ranks really
# run) around real PyTorch DDP on gloo; uneven nodes (2+1); the stand-in
# refusing plain --rdzv=torch for lack of CROSS_*; and rdzv-hostfile inside
# real allocations.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_NODE_GPUS="2 2 2"
ex="$top_srcdir/sbatch-examples"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
tmp=$(mktemp -d) || exit 1
cd "$ex" || exit 1
export PYTHON=$PY PYTHONPATH="$ex/stand-ins" PYTHONDONTWRITEBYTECODE=1
small=(--cpus-per-task=1 --gpus-per-node=2 --ntasks-per-node=2)

cross() { # the CROSS_RANK/CROSS_SIZE/LOCAL_SIZE of every report, by node
	printf '%s\n' "$1" | grep RDZV_REPORT | python3 -c '
import json, sys
reps = [json.loads(l.split("RDZV_REPORT ", 1)[1]) for l in sys.stdin]
print(sorted({(r["node"], r["env"]["CROSS_RANK"], r["env"]["CROSS_SIZE"], r["env"]["LOCAL_SIZE"]) for r in reps}))'
}

run_to 180 sbatch --wait -N1 "${small[@]}" -o "$tmp/one.out" 04-deepspeed.sbatch
out=$(cat "$tmp/one.out" 2>/dev/null)
is "$rc" 0 "example 4 on one node (sbatch -N1) exits 0"
verdict=$(printf '%s\n' "$out" | $check 2 --per-node n1=2)
is "$?" 0 "one node: 2 DeepSpeed ranks meet ($verdict)"
is "$(cross "$out")" "[('n1', '0', '1', '2')]" "one node: CROSS_RANK 0, CROSS_SIZE 1, LOCAL_SIZE 2"

run_to 180 sbatch --wait -N2 "${small[@]}" -o "$tmp/two.out" 04-deepspeed.sbatch
out=$(cat "$tmp/two.out" 2>/dev/null)
is "$rc" 0 "example 4 on two nodes exits 0"
verdict=$(printf '%s\n' "$out" | $check 4 --per-node n1=2,n2=2)
is "$?" 0 "two nodes: 4 DeepSpeed ranks meet, no hostfile, no ssh ($verdict)"
is "$(cross "$out")" "[('n1', '0', '2', '2'), ('n2', '1', '2', '2')]" \
	"two nodes: CROSS_RANK is the node index, CROSS_SIZE 2, LOCAL_SIZE 2"
[ "$rc" = 0 ] || diag "$(tail -n 15 "$tmp/two.out")"

run_to 120 srun -N2 -n3 --cpus-per-task=1 --rdzv=deepspeed $PY train_tiny.py --steps 2 \
	--deepspeed_config ds_config.json
is "$rc" 0 "uneven nodes (2+1) under --rdzv=deepspeed: exits 0"
is "$(cross "$out")" "[('n1', '0', '2', '2'), ('n2', '1', '2', '1')]" \
	"uneven nodes: LOCAL_SIZE follows each node's tasks (2 and 1)"

run_to 120 srun -N1 -n2 --cpus-per-task=1 --rdzv=torch $PY train_tiny.py --steps 1 \
	--deepspeed_config ds_config.json
ok "$([ "$rc" != 0 ]; echo $?)" "plain --rdzv=torch is not enough for code written for DeepSpeed's launcher"
like "$out" "missing CROSS_RANK, CROSS_SIZE, LOCAL_SIZE" "... the stand-in names the missing launcher variables"

# rdzv-hostfile for those who keep the deepspeed launcher.
hf="$top_builddir/helpers/rdzv-hostfile"
if [ -x "$hf" ]; then
	run_to 60 salloc -N2 --gpus-per-node=2 --cpus-per-task=1 "$hf"
	like "$out" "n1 slots=2.*n2 slots=2|n1 slots=2
n2 slots=2" "rdzv-hostfile in salloc --gpus-per-node=2: one line per node, 2 slots"
	is "$(printf '%s\n' "$out" | grep -c 'slots=')" 2 "... exactly the allocation's 2 nodes"
	run_to 60 salloc -N3 --ntasks-per-node=3 --cpus-per-task=1 "$hf"
	is "$(printf '%s\n' "$out" | grep 'slots=' | tr '\n' ' ')" "n1 slots=3 n2 slots=3 n3 slots=3 " \
		"rdzv-hostfile without GPUs: the tasks per node of the allocation"
	cat > "$tmp/hf.sbatch" <<SB
#!/bin/bash
"$hf" -o "$tmp/hostfile"
SB
	run_to 60 sbatch --wait -N2 --gres=gpu:2 --cpus-per-task=1 -o "$tmp/hf.out" "$tmp/hf.sbatch"
	is "$(tr '\n' ' ' < "$tmp/hostfile" 2>/dev/null)" "n1 slots=2 n2 slots=2 " \
		"rdzv-hostfile -o in a batch script with --gres=gpu:2 (SLURM_JOB_GPUS)"
else
	skip "rdzv-hostfile not built"
fi
rm -rf "$tmp"
done_testing
