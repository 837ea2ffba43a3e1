#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sbatch-examples/07: the training script of the examples runs unchanged with
# exactly the variables Kubeflow's PyTorchJob controller gives its pods
# (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, PYTHONUNBUFFERED; no
# LOCAL_RANK), so moving between Slurm and Kubernetes changes only the launch
# description. Two local processes stand for the Master and Worker pods.
. "$top_srcdir/tests/lib/tap.sh"
PY=/usr/bin/python3
$PY -c 'import torch.distributed' 2>/dev/null || skip_all_missing python3-torch "python3-torch not installed"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
script="$top_srcdir/sbatch-examples/train_tiny.py"
port=$((29600 + $$ % 300))

pod() { # pod RANK: one replica, environment as the PyTorchJob controller sets it
	# USE_LIBUV passes through: a property of the PyTorch build (Debian 13's has
	# no libuv, see tests/versions/run-leg.sh), not of the pods' variables.
	env -i PATH=/usr/bin:/bin HOME="$tmp" PYTHONUNBUFFERED=0 MASTER_ADDR=127.0.0.1 ${USE_LIBUV:+USE_LIBUV=$USE_LIBUV} \
		MASTER_PORT=$port WORLD_SIZE=2 RANK=$1 RDZV_TEST_PG_TIMEOUT=60 \
		timeout 120 $PY "$script" --steps 3 > "$tmp/pod$1.out" 2>&1
}
pod 0 &
p0=$!
pod 1
rc1=$?
wait $p0
rc0=$?
is "$rc0:$rc1" "0:0" "master and worker pods both exit 0"
reports=$(cat "$tmp"/pod*.out | grep -c '^RDZV_REPORT ')
is "$reports" 2 "each pod reports once"
like "$(cat "$tmp/pod0.out")" '"allreduce": 3.0' "the two pods meet: the all-reduce gives 1+2"
like "$(cat "$tmp/pod0.out")" '"replicas_equal": true' "data-parallel replicas end identical"
like "$(cat "$tmp/pod0.out")" 'train_tiny: step 2 loss' "rank 0 trained 3 steps"
[ "$rc0:$rc1" = 0:0 ] || diag "$(cat "$tmp"/pod*.out | tail -n 20)"
done_testing
