#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --rdzv=jax on the local Slurm cluster: sbatch-examples/08 (one process per
# GPU, --gpus-per-task=1 so Slurm narrows CUDA_VISIBLE_DEVICES to one fake GPU
# per task) runs scaled down to 2 nodes x 2 tasks with JAX replaced by its
# stand-in (sbatch-examples/stand-ins/jax: jax.distributed.initialize's
# reading of JAX_COORDINATOR_ADDRESS and JAX_LOCAL_DEVICE_IDS, JAX's own Slurm
# detection for what is left unset, and a coordination store hosted by
# process 0 at the coordinator address). Without the plugin, JAX's Slurm
# detection picks device SLURM_LOCALID, which a narrowed task does not have.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_NODE_GPUS="2 2 2"
ex="$top_srcdir/sbatch-examples"
tmp=$(mktemp -d) || exit 1
cd "$ex" || exit 1
export PYTHON=$PY PYTHONPATH="$ex/stand-ins" PYTHONDONTWRITEBYTECODE=1
standin() { # standin KEY: sorted "node:value" (compact JSON) of KEY over the JAX_STANDIN lines of $out
	printf '%s\n' "$out" | grep JAX_STANDIN | python3 -c '
import json, sys
rows = [json.loads(l.split("JAX_STANDIN ", 1)[1]) for l in sys.stdin]
print(" ".join(sorted("%s:%s" % (r["node"], json.dumps(r[sys.argv[1]], sort_keys=True, separators=(",", ":"))) for r in rows)))' "$1"
}

run_to 180 sbatch --wait -N2 --ntasks-per-node=2 --gpus-per-task=1 --cpus-per-task=1 \
	-o "$tmp/ex8.out" 08-jax.sbatch
out=$(cat "$tmp/ex8.out" 2>/dev/null)
is "$rc" 0 "example 8 (--rdzv=jax, --gpus-per-task=1) on 2 nodes x 2 tasks exits 0"
is "$(printf '%s\n' "$out" | grep -c 'jax_tiny: process .* of 4, .* sum 10.0')" 4 \
	"all 4 processes meet at the coordinator and sum 1+2+3+4"
is "$(standin local_device_ids | tr ' ' '\n' | sort -u | sed 's/^n[0-9]://' | sort -u)" "[0]" \
	"every task uses device 0, the one GPU it can see (not SLURM_LOCALID)"
src=$(standin source | tr ' ' '\n' | sed 's/^n[0-9]://' | sort -u)
like "$src" '"coordinator":"JAX_COORDINATOR_ADDRESS"' "the coordinator comes from JAX_COORDINATOR_ADDRESS"
like "$src" '"devices":"JAX_LOCAL_DEVICE_IDS"' "the device ids come from JAX_LOCAL_DEVICE_IDS"
coord=$(standin coordinator | tr ' ' '\n' | sed 's/^n[0-9]://' | sort -u)
like "$coord" '^"n1:[0-9]+"$' "one coordinator for all, on n1 (rank 0's node): $coord"
port=${coord##*:}
port=${port%\"}
ok "$([ "$port" -ge 29500 ] && [ "$port" -le 32767 ]; echo $?)" \
	"the coordinator port $port is the step's, below the ephemeral range (JAX's own guess is 61440+)"
[ "$rc" = 0 ] || diag "$(tail -n 15 "$tmp/ex8.out")"

run_to 120 srun -K -N2 --ntasks-per-node=2 --gpus-per-task=1 --cpus-per-task=1 --rdzv=off \
	env JAX_COORDINATOR_ADDRESS= $PY jax_tiny.py
ok "$([ "$rc" != 0 ]; echo $?)" "without the plugin the same step fails (exit $rc)"
like "$out" "local device ids \[1\] do not exist: the process sees 1 GPU" \
	"... because JAX's Slurm detection takes SLURM_LOCALID 1 as the device"

run_to 120 srun -N1 -n2 -w n1 --gpus-per-node=2 --cpus-per-task=1 --rdzv=jax $PY jax_tiny.py
is "$rc" 0 "2 tasks sharing a node's 2 GPUs (not narrowed): exits 0"
is "$(standin local_device_ids)" "n1:[0] n1:[1]" "... each task takes its own GPU, 0 and 1"

run_to 120 srun -N2 -w n1,n2 --ntasks-per-node=1 --gpus-per-node=2 --cpus-per-task=1 --rdzv=jax $PY jax_tiny.py
is "$rc" 0 "one process per node: exits 0"
is "$(standin local_device_ids)" "n1:[0,1] n2:[0,1]" "... each process owns both GPUs of its node"
is "$(standin num_processes)" "n1:2 n2:2" "... JAX_NUM_PROCESSES agrees with the step"
rm -rf "$tmp"
done_testing
