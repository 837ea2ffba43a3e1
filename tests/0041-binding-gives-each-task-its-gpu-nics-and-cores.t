#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end under the local Slurm cluster: each node loads a different real
# topology through plugstack topology=DIR/%n.xml (n1 = AWS p4d, 8 GPUs;
# n2 = JUWELS Booster jwb0004, 4 GPUs; n3 = ipa20, 4 GPUs with three DOWN
# ports), fake gres GPUs match those counts, and every task's environment
# and CPU affinity is checked against answers read from the XML trees (see
# tests/topo/*.out for the derivations) and, for CPUs, against the table
# tests/topo/derive.py derives from the XML (Python xml.etree, no hwloc, no
# plugin code: independent of what is tested).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
derive=$top_srcdir/tests/topo/derive.py
topo=$(mktemp -d /tmp/rdzv-topo.XXXXXX)
p4d=aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml
jwb=psmgmt__tests__hwloc__topo.jwb0004.xml
ipa=flux-core__t__hwloc-data__ipa20.xml
ln -s "$fixtures/$p4d" "$topo/n1.xml"
ln -s "$fixtures/$jwb" "$topo/n2.xml"
ln -s "$fixtures/$ipa" "$topo/n3.xml"
args="topology=$topo/%n.xml"
e2e_start RDZV_NODE_GPUS="8 4 4" RDZV_PLUGSTACK_ARGS="$args"
cd "$topo" || exit 1

# One line per task: node, local id and what binding controls.
report='echo "$SLURMD_NODENAME $SLURM_LOCALID cvd=${CUDA_VISIBLE_DEVICES-} order=${CUDA_DEVICE_ORDER-} hca=${NCCL_IB_HCA-} ucx=${UCX_NET_DEVICES-} cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
# run_step and field NODE TASK KEY read these lines (tests/lib/steps.sh).
# The CPUs derive.py gives task $3 of a step on topology $1 with GPUs $2,
# the step's CPUs being this machine's (slurmd inherits our affinity).
mycpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
want_cpus() { $PY "$derive" "$fixtures/$1" --gpus "$2" --cpus "$mycpus" --tasks "$4" \
	| sed -n "s/^task $3: .*, cpus \([0-9,-]*\).*/\1/p"; }

run_step srun -N3 --ntasks-per-node=4 --gres=gpu:4 --rdzv-bind=auto bash -c "$report"
is "$rc" 0 "auto: 12 tasks on 3 nodes with 4 GPUs each run"
for n in n1 n2 n3; do
	for i in 0 1 2 3; do
		is "$(field $n $i cvd)" "0,1,2,3" "auto: $n task $i keeps all 4 step GPUs visible (cuda:$i is its GPU)"
		is "$(field $n $i order)" "PCI_BUS_ID" "auto: $n task $i gets CUDA_DEVICE_ORDER=PCI_BUS_ID"
	done
done
# n1 = p4d GPUs 0-3: host bridges 10 (rdmap16s27) and 20 (rdmap32s27).
for i in 0 1 2 3; do
	is "$(field n1 $i hca)" "=rdmap16s27:1,rdmap32s27:1" "p4d: task $i has the node's NCCL_IB_HCA"
done
is "$(field n1 0 ucx),$(field n1 1 ucx),$(field n1 2 ucx),$(field n1 3 ucx)" \
	"rdmap16s27:1,rdmap16s27:1,rdmap32s27:1,rdmap32s27:1" "p4d: each task's UCX NIC shares its GPU's host bridge"
# n2 = jwb0004: GPU k on the switch of mlx5_k (names match bus ids by chance here).
is "$(field n2 2 hca)" "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" "jwb0004: NCCL_IB_HCA has the 4 rail NICs"
is "$(field n2 0 ucx),$(field n2 1 ucx),$(field n2 2 ucx),$(field n2 3 ucx)" \
	"mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" "jwb0004: task k gets the NIC on GPU k's switch"
# n3 = ipa20: only mlx5_0 is ACTIVE.
is "$(field n3 3 hca)" "=mlx5_0:1" "ipa20: NCCL_IB_HCA leaves the DOWN ports out"
is "$(field n3 3 ucx)" "mlx5_0:1" "ipa20: task 3's GPU falls back to the live port"
for spec in "n1 $p4d" "n2 $jwb" "n3 $ipa"; do
	set -- $spec
	for i in 0 1 2 3; do
		want=$(want_cpus "$2" 0,1,2,3 $i 4)
		is "$(field "$1" $i cpus)" "${want:-(derive.py gave no CPUs)}" "cpu: $1 task $i is bound to $want, as derived from the XML"
	done
done

run_step srun -N1 -w n2 -n2 --gres=gpu:2 --rdzv-bind=auto bash -c "$report"
is "$rc" 0 "partial step: 2 of jwb0004's 4 GPUs"
is "$(field n2 0 hca)" "=mlx5_0:1,mlx5_1:1" "partial: NCCL_IB_HCA has only the step's GPUs' NICs"
is "$(field n2 1 ucx)" "mlx5_1:1" "partial: task 1 gets GPU 1's NIC"

run_step srun -N1 -w n1 -n1 --gres=gpu:8 --rdzv-bind=auto bash -c "$report"
is "$(field n1 0 ucx)" "rdmap16s27:1,rdmap32s27:1,rdmap144s27:1,rdmap160s27:1" \
	"one task on all 8 GPUs (a launcher) gets every GPU's NIC, not GPU 0's"
want=$(want_cpus $p4d 0,1,2,3,4,5,6,7 0 1)
is "$(field n1 0 cpus)" "${want:-(derive.py gave no CPUs)}" "... and all their CPUs ($want)"

run_step srun -N1 -w n2 -n4 --gres=gpu:4 --rdzv-bind=isolate bash -c "$report"
is "$(field n2 0 cvd),$(field n2 1 cvd),$(field n2 2 cvd),$(field n2 3 cvd)" "0,1,2,3" \
	"isolate: each task sees only its own GPU"

export NCCL_IB_HCA=mlx5_9 CUDA_DEVICE_ORDER=FASTEST_FIRST
run_to 60 srun -N1 -w n2 -n2 --gres=gpu:2 --rdzv-bind=auto bash -c "$report"
is "$(field n2 1 hca) $(field n2 1 order)" "mlx5_9 FASTEST_FIRST" "the user's NCCL_IB_HCA and CUDA_DEVICE_ORDER win"
unset NCCL_IB_HCA CUDA_DEVICE_ORDER

run_to 60 srun -N1 -w n2 -n2 --rdzv-bind=auto bash -c "$report"
is "$rc:$(field n2 0 hca):$(field n2 0 order):$(field n2 0 cpus)" "0:::$mycpus" \
	"a step without GPUs: nothing set, CPUs untouched, no error"

run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=dry-run bash -c "$report"
like "$out" "rdzv: bind \(dry run\): task 1: gpu 1 0000:10:1d.0" "dry-run prints the node's rows"
is "$(field n1 1 hca)$(field n1 1 order)" "" "dry-run sets nothing"

run_to 60 srun -N1 -w n1 -n1 --rdzv-bind=bogus true
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "a bad --rdzv-bind is refused by srun (exit $rc)"
like "$out" "valid: auto, gpu, nic, cpu, isolate" "the refusal lists the valid values"

e2e_plugstack "topology=$topo/missing-%n.xml"
run_to 60 srun -N1 -w n3 -n1 --gres=gpu:1 --rdzv-bind=auto bash -c "$report"
is "$rc" 0 "an unreadable topology: the step still runs"
like "$out" "warning: binding: topology: .*missing-n3.xml.*running unbound" "... with a warning naming the file"

e2e_plugstack "topology=$topo/missing-%n.xml" strict=yes
run_to 60 srun -N1 -w n3 -n1 --gres=gpu:1 --rdzv-bind=auto bash -c "$report"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "strict=yes: an unreadable topology fails the task (exit $rc)"

e2e_plugstack
run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=verbose bash -c "$report"
is "$rc" 0 "live discovery in slurmstepd (no topology=): the step runs"
like "$out" "rdzv: bind: node: " "live discovery: the node's table is printed"
unlike "$out" "warning: binding" "live discovery: no warning"

e2e_plugstack "topology=$topo/%n.xml" bind=nic
run_to 60 srun -N1 -w n3 -n1 --gres=gpu:1 bash -c "$report"
is "$(field n3 0 hca)/$(field n3 0 order)" "=mlx5_0:1/" "site default bind=nic applies without the option"

rm -rf "$topo"
done_testing
