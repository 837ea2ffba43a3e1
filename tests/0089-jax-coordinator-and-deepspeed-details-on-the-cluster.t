#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# JAX and DeepSpeed details, with their stand-ins updated to what
# the real code does (read from JAX's and DeepSpeed's own sources):
# - JAX: process 0 starts the coordinator on its own node (the stand-in
#   refuses any other address at once, where JAX would time out), JAX reads
#   neither JAX_NUM_PROCESSES nor JAX_PROCESS_ID, and its Slurm detection needs
#   SLURM_STEP_NODELIST. JAX_COORDINATOR_ADDRESS is the node of SLURM_PROCID 0
#   under block, cyclic, plane and arbitrary (-w) distributions, also when
#   that is not the allocation's first node. A leftover OMPI_MCA_orte_hnp_uri
#   makes JAX pick Open MPI detection and crash: rank 0 warns, naming it.
# - DeepSpeed: LOCAL_SIZE is the node's count, never WORLD_SIZE on a
#   multi-node step (the stand-in refuses what would hang DeepSpeed's CPU
#   path); on uneven nodes LOCAL_RANK is the true index, not DeepSpeed's
#   RANK % LOCAL_SIZE; an OMPI_COMM_WORLD_LOCAL_RANK that differs from
#   LOCAL_RANK makes DeepSpeed's engine assert: rank 0 warns, naming it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_NODE_GPUS="2 2 2"
ex="$top_srcdir/sbatch-examples"
tmp=$(mktemp -d) || exit 1
trap 'e2e_stop; rm -rf "$tmp"' EXIT
cd "$ex" || exit 1
export PYTHON=$PY PYTHONPATH="$ex/stand-ins" PYTHONDONTWRITEBYTECODE=1
coord() { # "N host-of-process-0 coordinator-hosts" over the JAX_STANDIN lines of $out
	printf '%s\n' "$out" | grep JAX_STANDIN | python3 -c '
import json, sys
r = [json.loads(l.split("JAX_STANDIN ", 1)[1]) for l in sys.stdin]
zero = [x["node"] for x in r if x["process_id"] == 0]
print(len(r), zero[0] if zero else "-", ",".join(sorted({x["coordinator"].rsplit(":", 1)[0] for x in r})))'
}
dist() { # NAME WANT-HOST SRUN-ARGS...
	local name=$1 want=$2
	shift 2
	t0=$EPOCHREALTIME
	run_to 120 srun --rdzv=jax --cpus-per-task=1 "$@" $PY jax_tiny.py
	diag "$name: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s"
	is "$rc" 0 "jax, $name: every process meets (exit $rc)"
	is "$(coord)" "4 $want $want" "jax, $name: process 0 runs on $want and JAX_COORDINATOR_ADDRESS names $want"
}
dist "block" n1 -N2 -n4
dist "block on n2,n3 (not the allocation's first node)" n2 -N2 -n4 -w n[2-3]
dist "cyclic" n1 -N2 -n4 -m cyclic
dist "plane=1" n1 -N2 -n4 -m plane=1
dist "arbitrary -w n2,n1,n1,n2" n2 -n4 -m arbitrary -w n2,n1,n1,n2
dist "arbitrary -w n3,n3,n1,n2" n3 -n4 -m arbitrary -w n3,n3,n1,n2

run_to 60 env JAX_NUM_PROCESSES=9 JAX_PROCESS_ID=7 srun -N2 -n4 --rdzv=off --cpus-per-task=1 $PY jax_tiny.py
like "$out" "process 0 of 4" "without the plugin JAX_NUM_PROCESSES/JAX_PROCESS_ID are ignored: count and id from SLURM_NTASKS/SLURM_PROCID"
run_to 60 srun -K -N2 -n4 --rdzv=off --cpus-per-task=1 env JAX_COORDINATOR_ADDRESS=n2:29998 $PY jax_tiny.py
like "$out" "process 0 runs on n1 and starts the coordinator there, but the coordinator address is n2:29998" \
	"a coordinator address off process 0's node fails (the stand-in's check; JAX would wait out its timeout)"
run_to 60 sbatch --wait -N1 -n1 -o "$tmp/batch.out" --wrap "env -u SLURM_STEP_NODELIST $PY jax_tiny.py"
like "$(cat "$tmp/batch.out" 2>/dev/null)" "must be defined" \
	"without SLURM_STEP_NODELIST JAX's Slurm detection does not apply (nothing defines the processes)"

uri="1234.0;tcp://10.9.9.9:4321"
run_to 60 env OMPI_MCA_orte_hnp_uri="$uri" srun -N2 -n4 --rdzv=jax --cpus-per-task=1 $PY jax_tiny.py
ok "$([ "$rc" != 0 ]; echo $?)" "jax with a leftover OMPI_MCA_orte_hnp_uri: JAX picks Open MPI detection and fails (exit $rc)"
like "$out" "KeyError: 'OMPI_COMM_WORLD_SIZE'" "... as real JAX does (KeyError: 'OMPI_COMM_WORLD_SIZE')"
is "$(printf '%s\n' "$out" | grep -c 'rdzv: warning: --rdzv=jax: OMPI_MCA_orte_hnp_uri is exported')" 1 \
	"... and rank 0 says why, once: rdzv: warning: --rdzv=jax: OMPI_MCA_orte_hnp_uri is exported ..."
like "$out" "unset OMPI_MCA_orte_hnp_uri before srun" "... naming the fix"
run_to 60 env OMPI_MCA_orte_hnp_uri="$uri" srun -N2 -n4 --rdzv=torch --cpus-per-task=1 true
unlike "$out" "OMPI_MCA_orte_hnp_uri" "... the warning is jax mode's only"

# DeepSpeed
fw=$top_srcdir/tests/e2e/fw_report.py
locals() { # "rank:LOCAL_RANK:LOCAL_SIZE:WORLD_SIZE:RANK%LOCAL_SIZE" for each report
	printf '%s\n' "$out" | grep FW_REPORT | python3 -c '
import json, sys
r = sorted((json.loads(l.split("FW_REPORT ", 1)[1])["env"] for l in sys.stdin), key=lambda e: int(e["RANK"]))
print(" ".join("%s:%s:%s:%s:%d" % (e["RANK"], e["LOCAL_RANK"], e["LOCAL_SIZE"], e["WORLD_SIZE"], int(e["RANK"]) % int(e["LOCAL_SIZE"])) for e in r))'
}
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=deepspeed --cpus-per-task=1 $PY "$fw"
is "$(locals)" "0:0:2:4:0 1:1:2:4:1 2:0:2:4:0 3:1:2:4:1" "deepspeed, 2 nodes x 2: LOCAL_SIZE 2 (the node's), never WORLD_SIZE 4"
run_to 60 srun -n5 -m arbitrary -w n1,n1,n1,n2,n2 --rdzv=deepspeed --cpus-per-task=1 $PY "$fw"
is "$(locals)" "0:0:3:5:0 1:1:3:5:1 2:2:3:5:2 3:0:2:5:1 4:1:2:5:0" \
	"deepspeed, uneven 3+2: ranks 3, 4 have LOCAL_RANK 0, 1 (DeepSpeed's own RANK % LOCAL_SIZE would give 1, 0)"
run_to 120 srun -N2 --ntasks-per-node=2 --rdzv=deepspeed --cpus-per-task=1 $PY train_tiny.py --steps 1 --deepspeed_config ds_config.json
is "$rc" 0 "deepspeed, 2 nodes x 2: the stand-in's shared-memory check (LOCAL_SIZE != WORLD_SIZE) passes"
t0=$EPOCHREALTIME
run_to 120 env OMPI_COMM_WORLD_LOCAL_RANK=0 srun -N1 -n2 --rdzv=deepspeed --cpus-per-task=1 $PY train_tiny.py --steps 1 --deepspeed_config ds_config.json
ok "$([ "$rc" != 0 ]; echo $?)" "deepspeed with a leftover OMPI_COMM_WORLD_LOCAL_RANK=0: the engine's assert stops rank 1 (exit $rc)"
diag "took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s"
like "$out" "LOCAL_RANK \(1\) != OMPI_COMM_WORLD_LOCAL_RANK \(0\)" "... as real DeepSpeed's assert"
is "$(printf '%s\n' "$out" | grep -c 'rdzv: warning: --rdzv=deepspeed: OMPI_COMM_WORLD_LOCAL_RANK=0 is exported')" 1 \
	"... and rank 0 says why, once, naming the variable"
done_testing
