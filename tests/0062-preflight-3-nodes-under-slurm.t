#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rdzv-preflight as users run it, on the local 3-node Slurm cluster:
#   srun --rdzv=torch -N3 -n6 rdzv-preflight --cpu
# passes with every rank met on three nodes and the ring checked; a wrong
# MASTER_ADDR and a missing rank fail within their timeouts, with a
# non-zero exit and the address or the rank (and its node) named.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
bin=$top_builddir/helpers/rdzv-preflight
[ -x "$bin" ] || skip_all "helpers/rdzv-preflight not built"
e2e_start
cd "$(mktemp -d)" || exit 1

run_to 90 srun -N3 -n6 --ntasks-per-node=2 --rdzv=torch "$bin" --cpu --timeout=30 --ring-bytes=1M
is "$rc" 0 "6 ranks on 3 nodes: srun exits 0"
like "$out" "PASS  rendezvous  6/6 ranks on 3 nodes met at n1:[0-9]+" "every rank met at rank 0's node"
like "$out" "PASS  ring +TCP ring all-reduce of 1 MiB over 6 ranks: correct on every rank" \
	"the ring all-reduce crossed all three nodes and was checked"
like "$out" "n3 +4,5 " "the node table shows n3 with ranks 4 and 5"
is "$(printf '%s\n' "$out" | grep -c 'rdzv-preflight: PASS')" 1 "one summary, printed once"

run_to 90 srun -N3 -n6 --ntasks-per-node=2 --rdzv=torch "$bin" --cpu --timeout=30 --ring-bytes=64K --json
is "$rc" 0 "--json under srun exits 0"
summary=$(printf '%s\n' "$out" | grep '^{' | $PY -c '
import json, sys
d = json.loads(sys.stdin.readline())
print(d["ok"], sorted({r["host"] for r in d["ranks"]}),
      [(r["rank"], r["host"], r["local_rank"], r["local_world_size"]) for r in d["ranks"]][4])
' 2>&1)
is "$summary" "True ['n1', 'n2', 'n3'] (4, 'n3', 0, 2)" "--json: three hosts, rank 4 is local 0 of 2 on n3"

# Without --cpu: this cluster's nodes have no real GPU.
run_to 90 srun -N3 -n3 --rdzv=torch "$bin" --timeout=30 --ring-bytes=64K
if [ "${RDZV_HAVE_CUDA:-no}" = yes ]; then
	is "$rc" 0 "CUDA build, no GPU, no GPU requested: the CPU path passes"
	like "$out" "SKIP  gpu +not checked, CPU path only: no rank has a usable GPU" "and the summary says why"
	# The fake gres GPUs make Slurm promise CUDA_VISIBLE_DEVICES that CUDA cannot open.
	run_to 90 srun -N3 -n3 --gres=gpu:1 --rdzv=torch "$bin" --timeout=30 --ring-bytes=64K
	ok $([ "$rc" != 0 ] && echo 0 || echo 1) "GPUs promised by Slurm but not usable: the step fails (exit $rc)"
	like "$out" "FAIL  binding" "the binding check fails"
	like "$out" "rank 2 \(n3\): CUDA_VISIBLE_DEVICES=0 but no GPU" "naming the rank, node and promise"
else
	is "$rc" 0 "built without CUDA: the CPU path passes"
	like "$out" "built without CUDA/NCCL" "and the summary says so"
fi

# Forced failure 1: an exported MASTER_ADDR that is not rank 0's node. The
# plugin checks an exported address against the node of rank 0 and ends
# every task before exec, naming it (the preflight's own report of an
# unreachable MASTER_ADDR is 0061's, where no plugin stands in between).
# A loopback address that no test node has: nothing leaves this machine.
start=$(date +%s)
MASTER_ADDR=127.0.9.9 run_to 90 srun -N3 -n3 --rdzv=torch "$bin" --cpu --timeout=5
took=$(( $(date +%s) - start ))
ok $([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1) "wrong MASTER_ADDR: srun exits non-zero (exit $rc)"
ok $([ "$took" -le 40 ] && echo 0 || echo 1) "within seconds, not the preflight's timeout (${took}s)"
like "$out" "MASTER_ADDR=127.0.9.9 \(exported\) is not n1, the node of rank 0 of this step" \
	"the plugin names the exported MASTER_ADDR and rank 0's node"
unlike "$out" "rdzv-preflight: rank [0-9]+ on n[0-9]+: (PASS|FAIL)" \
	"no preflight rank started with the wrong address"

# Forced failure 2: rank 4 never starts the preflight.
start=$(date +%s)
run_to 90 srun -N3 -n6 --ntasks-per-node=2 --rdzv=torch bash -c \
	'[ "$RANK" = 4 ] && exit 0; exec "$0" --cpu --timeout=5' "$bin"
took=$(( $(date +%s) - start ))
ok $([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1) "a missing rank: srun exits non-zero (exit $rc)"
ok $([ "$took" -le 40 ] && echo 0 || echo 1) "within the timeout and a margin (${took}s for --timeout=5)"
like "$out" "FAIL  rendezvous  1 of 6 ranks missing at phase 1: rank 4" "rank 0 counts and names the missing rank"
like "$out" "rank 4 never connected \(Slurm placed it on n3\)" "and names the node it should have run on"
done_testing
