#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end: under the local Slurm cluster, node n1 (AWS p4d topology) has
# 8 fake GPUs whose device nodes are named without their minor (gpu-a ...)
# and listed in gres.conf out of PCI order, with minors permuted against
# PCI order as tests/topo/identity/p4d's /proc tree says. Every task gets
# the NICs of the GPU Slurm's number names (expected: the derive.py golden
# tests/topo/identity/p4d.out, whose chain is the same minors), also when
# Slurm narrows a task's own CUDA_VISIBLE_DEVICES (--gpu-bind=map_gpu,
# --gpus-per-task); the node model is cached by root; a topology without
# PCI fails a GPU step under strict=yes and warns otherwise. Then the same
# with TaskPlugin=task/cgroup and ConstrainDevices=yes (CUDA_VISIBLE_DEVICES
# renumbered from 0), where this machine allows it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
command -v lstopo-no-graphics >/dev/null || skip_all "no lstopo-no-graphics (hwloc) for the --no-io export"
fix=$top_srcdir/tests/topo/identity
golden=$fix/p4d.out
p4d=aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml
jwb=psmgmt__tests__hwloc__topo.jwb0004.xml
T=$(mktemp -d /tmp/rdzv-ident.XXXXXX)
mkdir -p "$T/topo" "$T/noio" "$T/root" "$T/dev/n2"
cp -r "$fix/p4d/proc" "$fix/p4d/sys" "$T/root/"
ln -s "$fixtures/$p4d" "$T/topo/n1.xml"
ln -s "$fixtures/$jwb" "$T/topo/n2.xml"
ln -s "$fixtures/$jwb" "$T/topo/n3.xml"
for n in n1 n2 n3; do lstopo-no-graphics --no-io -i "$T/topo/$n.xml" --of xml "$T/noio/$n.xml"; done
# n1: Slurm's GPU k is the k-th file of its gres.conf line; the files'
# minors are the golden chain's ("# slurm k -> /dev/nvidiaM -> minor M").
files=
for k in 0 1 2 3 4 5 6 7; do
	m=$(sed -n "s|^# slurm $k -> /dev/nvidia\([0-9]*\) .*|\1|p" "$golden")
	name=gpu-$(printf "\\$(printf '%03o' $((97 + k)))")
	mknod "$T/dev/$name" c 195 "$m"
	files=${files:+$files,}$T/dev/$name
done
for i in 0 1 2 3; do mknod "$T/dev/n2/nvidia$i" c 195 "$i"; done
cat > "$T/gres.conf" <<CONF
AutoDetect=off
NodeName=n1 Name=gpu File=$files
NodeName=n[2-3] Name=gpu File=$T/dev/n2/nvidia[0-3]
CONF
printf 'CgroupPlugin=cgroup/v1\nConstrainDevices=yes\n' > "$T/cgroup.conf"
nic() { sed -n "s/^task $1: [^ ]* \([^ ]*\) .*/\1/p" "$golden"; }
busid() { sed -n "s/^task $1: \([^ ]*\) .*/\1/p" "$golden"; }
args="topology=$T/topo/%n.xml gres_conf=$T/gres.conf identity_root=$T/root topology_cache=$T/cache"
e2e_start RDZV_NODE_GPUS="8 4 4" RDZV_GRES_CONF="$T/gres.conf" RDZV_PLUGSTACK_ARGS="$args"
# On exit: stop, and leave no cgroup.conf of ours for the next cluster.
cleanup() {
	e2e_stop
	grep -qx "# from RDZV_CGROUP_CONF" "$RDZV_CLUSTER_DIR/cgroup.conf" 2>/dev/null \
		&& rm -f "$RDZV_CLUSTER_DIR/cgroup.conf"
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1

report='echo "$SLURMD_NODENAME $SLURM_LOCALID cvd=${CUDA_VISIBLE_DEVICES-} gpus=${SLURM_STEP_GPUS-} hca=${NCCL_IB_HCA-} ucx=${UCX_NET_DEVICES-} cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

run_step srun -N1 -w n1 -n8 --gres=gpu:8 --rdzv-bind=verbose bash -c "$report"
is "$rc" 0 "8 tasks on n1's 8 permuted GPUs run"
for i in 0 1 2 3 4 5 6 7; do
	is "$(field n1 $i ucx)" "$(nic $i)" "task $i gets the NIC of Slurm's GPU $i ($(busid $i)), not of the ${i}th in PCI order"
done
like "$out" "rdzv: bind: identity: gres.conf $T/gres.conf" "verbose: identity established through gres.conf"
like "$out" "rdzv: bind: gpu [0-9] $(busid 0): slurm 0 file $T/dev/gpu-a minor [0-9] busid $(busid 0) source device\+proc\+sysfs" \
	"verbose: Slurm's GPU 0 is read as device node gpu-a, its minor, its bus id"
like "$out" "rdzv: bind: topology $T/topo/n1.xml: cache written" "root wrote the node model to the cache"
ls "$T/cache"/topo-*.model >/dev/null 2>&1; ok $? "the cache entry exists"
run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=verbose bash -c "$report"
like "$out" "rdzv: bind: topology $T/topo/n1.xml: cache hit" "the next step reads the model from the cache"
is "$(field n1 1 ucx)" "$(nic 1)" "... with the same answer"

run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv=torch --rdzv-verbose --rdzv-bind=auto bash -c "$report"
like "$out" "rdzv: bind: identity: gres.conf $T/gres.conf; topology $T/topo/n1.xml: cache hit" \
	"--rdzv-verbose says how GPU identity was established and where the model came from"

run_step srun -N1 -w n1 -n2 --gres=gpu:4 --gpu-bind=map_gpu:3,1 --rdzv-bind=verbose bash -c "$report"
is "$(field n1 0 cvd)/$(field n1 1 cvd)" "3/1" "--gpu-bind=map_gpu:3,1: Slurm gives task 0 GPU 3, task 1 GPU 1"
is "$(field n1 0 ucx)" "$(nic 3)" "task 0 gets the NIC of its own GPU 3, not of local rank 0's"
is "$(field n1 1 ucx)" "$(nic 1)" "task 1 gets the NIC of its own GPU 1"

run_step srun -N1 -w n1 -n2 --gres=gpu:2 --gpus-per-task=1 --rdzv-bind=auto bash -c "$report"
is "$(field n1 0 ucx),$(field n1 1 ucx)" "$(nic "$(field n1 0 cvd)"),$(nic "$(field n1 1 cvd)")" \
	"--gpus-per-task=1: each task gets the NIC of the GPU in its own list"

run_to 60 srun -N1 -w n2 -n1 --gres=gpu:1 --rdzv-bind=verbose bash -c "$report"
like "$out" "identity: by position: GPU 0: .*not a CUDA GPU of the topology" \
	"a node whose /proc does not match its topology falls back to position, and says why"

e2e_plugstack "topology=$T/noio/%n.xml" "topology_cache=$T/cache"
run_to 60 srun -N1 -w n1 -n1 --gres=gpu:1 --rdzv-bind=auto bash -c "$report"
is "$rc" 0 "a topology without PCI devices: the step runs"
like "$out" "warning: binding: .*shows no PCI device.*running unbound" "... with a warning"
e2e_plugstack "topology=$T/noio/%n.xml" "topology_cache=$T/cache" strict=yes
run_to 60 srun -N1 -w n1 -n1 --gres=gpu:1 --rdzv-bind=auto bash -c "$report"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "strict=yes: a GPU step on a topology without PCI devices fails (exit $rc)"
like "$out" "shows no PCI device" "... naming why"
run_to 60 srun -N1 -w n1 -n1 --rdzv-bind=auto bash -c "$report"
is "$rc" 0 "strict=yes: a step without GPUs there still runs"

# ConstrainDevices: restart with task/cgroup.
e2e_stop
cg_vars=(RDZV_NODE_GPUS="8 4 4" RDZV_GRES_CONF="$T/gres.conf" RDZV_PLUGSTACK_ARGS="$args"
	RDZV_CGROUP_CONF="$T/cgroup.conf" RDZV_SLURM_EXTRA="TaskPlugin=task/cgroup")
e2e_vars=("${cg_vars[@]}")
if ! env "${cg_vars[@]}" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" start >"$T/cg-start.log" 2>&1; then
	diag "task/cgroup with ConstrainDevices=yes did not start here: $(grep -v 'specified more than once' "$T/cg-start.log" | tail -n 5 | tr '\n' ' ')"
	ok 0 "ConstrainDevices scenario # SKIP the cluster does not start with task/cgroup on this machine"
	done_testing
	exit
fi
run_step scontrol show config
like "$out" "TaskPlugin *= task/cgroup" "the cluster runs task/cgroup"
run_step srun -N1 -w n1 -n4 --gres=gpu:4 --rdzv-bind=verbose bash -c "$report"
is "$rc" 0 "ConstrainDevices: 4 tasks on 4 GPUs run"
for i in 0 1 2 3; do
	is "$(field n1 $i ucx)" "$(nic $i)" "ConstrainDevices: task $i gets the NIC of Slurm's GPU $i"
done
# Hold Slurm's GPUs 0-1, so that the next step's are 2-3, renumbered 0-1.
srun -N1 -w n1 -n1 --gres=gpu:2 sleep 25 >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 50); do squeue -h -t R -o %i | grep -q . && break; sleep 0.2; done
run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=verbose bash -c "$report"
is "$(field n1 0 gpus)/$(field n1 0 cvd)" "2,3/0,1" "ConstrainDevices: the step holds Slurm's GPUs 2,3, its tasks see them as 0,1"
is "$(field n1 0 ucx),$(field n1 1 ucx)" "$(nic 2),$(nic 3)" "ConstrainDevices: renumbered entries still bind to GPUs 2 and 3's NICs"
run_step srun -N1 -w n1 -n2 --gres=gpu:2 --gpus-per-task=1 --rdzv-bind=verbose bash -c "$report"
like "$out" "numbered from 0 for this task alone|its own CUDA_VISIBLE_DEVICES" \
	"ConstrainDevices + --gpus-per-task: how each task's row was chosen is said"
is "$(field n1 0 ucx),$(field n1 1 ucx)" "$(nic 2),$(nic 3)" \
	"ConstrainDevices + --gpus-per-task: task i keeps step GPU i's NIC (Slurm's per-task order)"
wait "$holder" 2>/dev/null
done_testing
