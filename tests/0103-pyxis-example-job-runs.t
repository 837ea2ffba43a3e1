#!/bin/bash
# sbatch-examples/09-pyxis-container.sbatch, run as written (scaled down from
# the sbatch command line, IMAGE pointing at the test image) under Slurm 24.11
# with pyxis and enroot's PyTorch hook: the ranks train inside the container
# with the plugin's rendezvous, and the one warning says which of the hook's
# values rdzv replaced. The script holds no rank, address or port.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_enter
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
ctr_start RDZV_NODE_GPUS="2 2 2"
ctr_hook on
ctr_plugstack pyxis-first
ex="$top_srcdir/sbatch-examples"
f=09-pyxis-container.sbatch
check="$PY $top_srcdir/tests/e2e/check_reports.py"
tmp=$(mktemp -d) || exit 1
cd "$ex" || exit 1
unlike "$(grep -v '^[[:space:]]*#' "$f")" '--node_rank|--master_addr|--master_port|MASTER_ADDR=|MASTER_PORT=|RANK=\$SLURM|WORLD_SIZE=\$SLURM' \
	"$f sets no rank, address or port itself"
IMAGE=$IMAGE run_to 300 sbatch --wait -o "$tmp/ex9.out" --cpus-per-task=1 --gpus-per-node=2 --ntasks-per-node=2 "$f"
out=$(cat "$tmp/ex9.out" 2>/dev/null)
is "$rc" 0 "example 9 (pyxis container, 2 nodes x 2 tasks) exits 0"
verdict=$(printf '%s\n' "$out" | $check 4 --per-node n1=2,n2=2)
is "$?" 0 "example 9: 4 ranks train in the container with the plugin's RANK/LOCAL_RANK/MASTER_* ($verdict)"
like "$out" 'train_tiny: step 19 loss' "example 9: rank 0 ran all 20 steps"
like "$out" "rdzv: warning: inside the container, 1 variable set by the image's ENV or an enroot hook was replaced: MASTER_PORT=" \
	"example 9: ran in the container, where rdzv replaced the hook's MASTER_PORT"
[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | tail -n 20)"
rm -rf "$tmp"
done_testing
