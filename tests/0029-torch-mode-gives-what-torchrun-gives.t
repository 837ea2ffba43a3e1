#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Parity with the real thing: real torchrun on 2 nodes x 2 workers, and
# srun --rdzv=torch on the same layout, each worker dumping its environment
# (tests/e2e/dump_env.py) and meeting the others. Every variable torchrun
# added to its workers' environment (measured against torchrun's own
# environment on the same node, not taken from the plugin's table) must be
# present in the --rdzv=torch task of the same RANK with the same value,
# except the short list justified in tests/e2e/parity.py. The diff is
# printed as diagnostics.
#
# torchrun: $TORCHRUN from tests/lib/e2e.sh for the cluster under test
# (PyTorch 1.13: Debian 12's through tests/e2e/torchrun-shim.py; 2.x: real
# torchrun through tests/e2e/torchrun-nolibuv.py), else the 1.13 shim.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
dump="$top_srcdir/tests/e2e/dump_env.py"
torchrun=${TORCHRUN:-"$PY $top_srcdir/tests/e2e/torchrun-shim.py"}
diag "torchrun: $torchrun (PyTorch ${TORCH_VERSION:-?}, Slurm ${SLURM_VERSION:-?})"
cd "$(mktemp -d)" || exit 1

# By hand, as on separate machines: each node names the interface that
# reaches n1 (the plugin does this itself; torchrun does not, and Gloo would
# bind to what the host name resolves to, here loopback). Exported before
# torchrun, so it is the launcher's, not something torchrun adds.
ifname=lo
[ "${RDZV_NODE_NETNS:-0}" = 1 ] && ifname=eth0
run_to 120 srun -N2 -w n1,n2 --ntasks-per-node=1 --rdzv=off bash -c \
	"export GLOO_SOCKET_IFNAME=$ifname; $PY $dump --launcher && exec $torchrun --nnodes=2 --nproc_per_node=2 \
	 --node_rank=\$SLURM_NODEID --master_addr=n1 --master_port=$((E2E_USER_PORT - 1)) $dump"
printf '%s\n' "$out" > torchrun.out
is "$rc" 0 "real torchrun, 2 nodes x 2 workers: the workers meet (srun exit $rc)"
[ "$rc" = 0 ] || diag "$(tail -n 20 torchrun.out)"
is "$(grep -c 'RDZV_ENV .*\["", "END"\]' torchrun.out)" 4 "torchrun: 4 workers dumped their environment"

run_to 120 srun -N2 -w n1,n2 --ntasks-per-node=2 --rdzv=torch $PY "$dump"
printf '%s\n' "$out" > rdzv.out
is "$rc" 0 "srun --rdzv=torch, 2 nodes x 2 tasks: the tasks meet (srun exit $rc)"
[ "$rc" = 0 ] || diag "$(tail -n 20 rdzv.out)"

diff=$($PY "$top_srcdir/tests/e2e/parity.py" torchrun.out rdzv.out)
prc=$?
while IFS= read -r line; do diag "$line"; done <<< "$diff"
is "$prc" 0 "every variable torchrun gives its workers is under --rdzv=torch, same meaning and value, or justified"
like "$diff" "same RANK " "the comparison covered RANK (the expected list is not empty)"
done_testing
