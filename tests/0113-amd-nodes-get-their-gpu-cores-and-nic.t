#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end on fake AMD nodes: n1 is the HPE Cray EX235a blade (eas-tioga:
# 8 MI250X GCDs, 4 Slingshot NICs), n2 an El Capitan-family MI300A node
# (tuo.SPX: 4 APUs, 4 Slingshot NICs), both through topology=DIR/%n.xml.
# Their GPUs are DRM render nodes made with mknod (char 226:128+N), listed
# in n1's gres.conf out of minor order, whose minors are not in PCI order
# either (a sysfs tree under identity_root= says which function each
# render node is). Run twice: gres Flags=amd_gpu_env (Slurm sets only
# ROCR_VISIBLE_DEVICES) and no flag (Slurm sets CUDA_VISIBLE_DEVICES,
# ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK and GPU_DEVICE_ORDINAL alike).
# In both, every task ends with one GPU selection variable,
# ROCR_VISIBLE_DEVICES, naming its own GPU (Slurm's number followed through
# gres.conf and sysfs), the CPUs near that GPU and its NIC; real PyTorch
# ranks meet and all-reduce; MIOpen's caches go to a private node-local
# directory.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
tioga=mpibind__topo-xml__eas-tioga.xml
tuo=flux-core__t__hwloc-data__tuo.SPX.xml
T=$(mktemp -d /tmp/rdzv-amd.XXXXXX)
chmod 755 "$T"
mkdir -p "$T/topo" "$T/dev" "$T/tmp" "$T/root/sys/class/drm" "$T/root/sys/bus/pci/devices"
ln -s "$fixtures/$tioga" "$T/topo/n1.xml"
ln -s "$fixtures/$tuo" "$T/topo/n2.xml"

# The GCDs of the blade in PCI order, OLCF's cores of each (Frontier's user
# guide, the same blade), and the Slingshot interface of each MI250X.
tioga_bus=(0000:c1:00.0 0000:c6:00.0 0000:c9:00.0 0000:ce:00.0 0000:d1:00.0 0000:d6:00.0 0000:d9:00.0 0000:de:00.0)
tioga_cores=(48-55,112-119 56-63,120-127 16-23,80-87 24-31,88-95 0-7,64-71 8-15,72-79 32-39,96-103 40-47,104-111)
tuo_bus=(0000:02:00.0 0001:02:00.0 0002:02:00.0 0003:02:00.0)
# renderD(128+i) is GCD perm[i]; n2's render nodes 136-139 are APUs 0-3.
perm=(3 0 1 2 7 6 5 4)
drm() { # drm MINOR BUSID
	mkdir -p "$T/root/sys/class/drm/renderD$1" "$T/root/sys/bus/pci/devices/$2"
	ln -s "../../../devices/pci0000:00/$2" "$T/root/sys/class/drm/renderD$1/device"
	echo 0x1002 > "$T/root/sys/bus/pci/devices/$2/vendor"
	mknod "$T/dev/renderD$1" c 226 "$1"
}
for i in 0 1 2 3 4 5 6 7; do drm $((128 + i)) "${tioga_bus[${perm[$i]}]}"; done
for i in 0 1 2 3; do drm $((136 + i)) "${tuo_bus[$i]}"; done
# Slurm's GPU k of n1 is the k-th file: 135, 128, 129, ..., 134.
n1_files=$T/dev/renderD135
for m in 128 129 130 131 132 133 134; do n1_files=$n1_files,$T/dev/renderD$m; done
gcd_of() { # Slurm's GPU k on n1 -> its GCD (PCI position)
	local f m
	f=$(printf '%s\n' "${n1_files//,/ }" | tr ' ' '\n' | sed -n "$(( $1 + 1 ))p")
	m=${f##*renderD}
	echo "${perm[$((m - 128))]}"
}
gres_conf() { # gres_conf FLAGS
	{
		echo "AutoDetect=off"
		echo "NodeName=n1 Name=gpu File=$n1_files${1:+ Flags=$1}"
		echo "NodeName=n2 Name=gpu File=$T/dev/renderD[136-139]${1:+ Flags=$1}"
	} > "$T/gres.conf"
}
args="topology=$T/topo/%n.xml gres_conf=$T/gres.conf identity_root=$T/root"
cleanup() { e2e_stop; rm -rf "$T"; }
trap cleanup EXIT
cd "$T" || exit 1

# One line per task: what selects its GPU, its CPUs, MIOpen's directory.
report='echo "$SLURMD_NODENAME $SLURM_LOCALID rocr=${ROCR_VISIBLE_DEVICES-(unset)} cuda=${CUDA_VISIBLE_DEVICES-(unset)} hip=${HIP_VISIBLE_DEVICES-(unset)} ordinal=${GPU_DEVICE_ORDINAL-(unset)} ze=${ZE_AFFINITY_MASK-(unset)} order=${CUDA_DEVICE_ORDER-(unset)} miopen=${MIOPEN_USER_DB_PATH-(unset)} miopen_cache=${MIOPEN_CUSTOM_CACHE_DIR-(unset)} cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
cat > "$T/rank.py" <<'PY'
import os, sys
from datetime import timedelta
import torch
import torch.distributed as dist
dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
e = os.environ
sel = ",".join(v for v in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                           "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK") if v in e)
cpus = [l.split(":", 1)[1].strip() for l in open("/proc/self/status") if l.startswith("Cpus_allowed_list")][0]
os.write(1, (f"{e['SLURMD_NODENAME']} {e['LOCAL_RANK']} rank={rank} world={world} set={sel} "
             f"rocr={e.get('ROCR_VISIBLE_DEVICES', '(unset)')} cpus={cpus} "
             f"sum={'OK' if t.item() == world * (world + 1) / 2 else 'WRONG'}\n").encode())
dist.destroy_process_group()
PY
run_step() { run_to 90 "$@"; [ "$rc" = 0 ] || diag "exit $rc: $(printf '%s' "$out" | head -c 2000)"; }
field() { printf '%s\n' "$out" | grep "^$1 $2 " | head -n 1 | tr ' ' '\n' | sed -n "s/^$3=//p"; }
# Row i of the node's table (--rdzv-bind=verbose, printed by local task 0).
row() { printf '%s\n' "$out" | sed -n "s/^rdzv: bind: task $1: //p" | head -n 1; }
mycpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# The CPUs the table gives a task on GCD g: OLCF's cores of g within this
# machine's (slurmd inherits them), else all of them, said to be far.
# Slurm's own binding (task/affinity) is kept when it is within them, so a
# task's affinity is checked to lie inside them.
cpuset() { # cpuset near|within A B
	$PY - "$@" <<'PY'
import sys
def ids(s):
    out = set()
    for part in s.split(","):
        if part:
            a, _, b = part.partition("-")
            out.update(range(int(a), int(b or a) + 1))
    return out
def text(v):
    v, out, i = sorted(v), [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        out.append(str(v[i]) if i == j else f"{v[i]}-{v[j]}")
        i = j + 1
    return ",".join(out)
a, b = ids(sys.argv[2]), ids(sys.argv[3])
if sys.argv[1] == "near":
    print(text(a & b) if a & b else text(b) + " (none of the step's CPUs is local to the GPU)")
else:
    print("yes" if a and a <= b else "no: %s is not within %s" % (sys.argv[2], sys.argv[3]))
PY
}
want_row_cpus() { cpuset near "${tioga_cores[$1]}" "$mycpus"; }
within() { cpuset within "$1" "$2"; }

for mode in amd_gpu_env none; do
	flags=$mode; [ "$mode" = none ] && flags=
	gres_conf "$flags"
	e2e_start RDZV_NODES=2 RDZV_NODE_GPUS="8 4" RDZV_GRES_CONF="$T/gres.conf" RDZV_PLUGSTACK_ARGS="$args"
	m="gres Flags=$flags"; [ -n "$flags" ] || m="gres without a flag"

	# What Slurm alone gives (binding off): the removals below remove something.
	run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=none bash -c "$report"
	diag "$m, --rdzv-bind=none: n1 task 0's environment: $(printf '%s\n' "$out" | grep '^n1 0 ')"
	if [ "$mode" = none ]; then
		is "$(field n1 1 rocr)/$(field n1 1 cuda)/$(field n1 1 ordinal)/$(field n1 1 ze)" "0,1/0,1/0,1/0,1" \
			"$m: Slurm alone sets all four variables to one list"
	else
		is "$(field n1 1 rocr)/$(field n1 1 cuda)/$(field n1 1 ordinal)/$(field n1 1 ze)" "0,1/(unset)/(unset)/(unset)" \
			"$m: Slurm alone sets ROCR_VISIBLE_DEVICES only"
	fi

	# n1, all 8 GCDs, the table printed.
	run_step env TMPDIR="$T/tmp" srun -N1 -w n1 -n8 --gres=gpu:8 --rdzv-bind=verbose bash -c "$report"
	is "$rc" 0 "$m: 8 tasks on n1's 8 GCDs run"
	diag "$m: n1 task 0's environment: $(printf '%s\n' "$out" | grep '^n1 0 ')"
	diag "$m: n1 task 0's row: $(row 0)"
	if [ "$mode" = none ]; then
		is "$(printf '%s\n' "$out" | grep -c 'cuda=0,1,2,3,4,5,6,7 ')" 0 \
			"$m: Slurm's CUDA_VISIBLE_DEVICES copy is gone from every task"
	fi
	like "$out" "rdzv: bind: identity: gres.conf $T/gres.conf" "$m: identity through gres.conf and sysfs"
	for k in 0 1 2 3 4 5 6 7; do
		g=$(gcd_of $k)
		is "$(field n1 $k rocr)/$(field n1 $k cuda)/$(field n1 $k hip)/$(field n1 $k ordinal)/$(field n1 $k ze)/$(field n1 $k order)" \
			"0,1,2,3,4,5,6,7/(unset)/(unset)/(unset)/(unset)/(unset)" \
			"$m: task $k: ROCR_VISIBLE_DEVICES is its one selection variable (hip:$k is its GPU), no CUDA_DEVICE_ORDER"
		like "$(row $k)" "^gpu $g ${tioga_bus[$g]} hip:$k ROCR_VISIBLE_DEVICES $k, nic hsi$((g / 2)) " \
			"$m: task $k: Slurm's GPU $k is GCD $g (${tioga_bus[$g]}), its NIC hsi$((g / 2))"
		want=$(want_row_cpus "$g")
		rowc=$(row $k | sed 's/.*, cpus //')
		is "$(within "${rowc%% (*}" "${want%% (*}")|${rowc#"${rowc%% (*}"}" "yes|${want#"${want%% (*}"}" \
			"$m: task $k: its table CPUs ($rowc) are GCD $g's (${tioga_cores[$g]}) this machine has ($want)"
		is "$(within "$(field n1 $k cpus)" "${want%% (*}")" yes "$m: task $k runs inside them"
		is "$(field n1 $k miopen)|$(field n1 $k miopen_cache)" "$T/tmp/rdzv-miopen-0|$T/tmp/rdzv-miopen-0" \
			"$m: task $k: MIOpen's databases and kernel cache on the node, the user's"
	done
	like "$(printf '%s\n' "$out" | grep '^rdzv: bind: node:')" "NCCL_SOCKET_IFNAME==hsi0,hsi1,hsi2,hsi3" \
		"$m: the node's table names its 4 Slingshot interfaces"
	is "$(stat -c '%a %u' "$T/tmp/rdzv-miopen-0" 2>&1)" "700 0" "$m: MIOpen's directory is private (0700) to the user"

	# Both nodes: real ranks meet and all-reduce; one selection each.
	run_step env TMPDIR="$T/tmp" srun -N2 -w n1,n2 --ntasks-per-node=4 --gres=gpu:4 --rdzv=torch \
		--rdzv-bind=auto /usr/bin/env USE_LIBUV=0 "$PY" "$T/rank.py"
	is "$rc" 0 "$m: 8 PyTorch ranks on n1 and n2 run"
	is "$(printf '%s\n' "$out" | grep -c 'world=8 set=ROCR_VISIBLE_DEVICES rocr=0,1,2,3 .*sum=OK')" 8 \
		"$m: all 8 meet, all-reduce, and see ROCR_VISIBLE_DEVICES=0,1,2,3 and no other selection variable"
	for k in 0 1 2 3; do
		g=$(gcd_of $k)
		want=$(want_row_cpus "$g")
		is "$(within "$(field n1 $k cpus)" "${want%% (*}")" yes "$m: n1's local rank $k runs on GCD $g's CPUs"
	done

	# n2, MI300A: each APU is its own NUMA node; render nodes 136-139 in order.
	run_step srun -N1 -w n2 -n4 --gres=gpu:4 --rdzv-bind=verbose bash -c "$report"
	for k in 0 1 2 3; do
		like "$(row $k)" "^gpu $k ${tuo_bus[$k]} hip:$k ROCR_VISIBLE_DEVICES $k, nic hsi$k " \
			"$m: MI300A task $k: APU $k (${tuo_bus[$k]}), its NIC hsi$k"
	done

	# isolate: ROCR_VISIBLE_DEVICES is the task's GPU alone.
	run_step srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=isolate bash -c "$report"
	is "$(field n1 0 rocr)/$(field n1 0 cuda)" "0/(unset)" \
		"$m: isolate: task 0 sees ROCR_VISIBLE_DEVICES=0 only, and no CUDA_VISIBLE_DEVICES"
	is "$(field n1 1 rocr)/$(field n1 1 cuda)" "1/(unset)" "$m: isolate: task 1 sees ROCR_VISIBLE_DEVICES=1 only"

	# Slurm narrows each task's list (--gpus-per-task): the task's own GPU.
	run_step srun -N1 -w n1 -n2 --gres=gpu:2 --gpus-per-task=1 --rdzv-bind=verbose bash -c "$report"
	for k in 0 1; do
		r=$(field n1 $k rocr)
		g=$(gcd_of "$r")
		is "$(field n1 $k cuda)/$(field n1 $k ordinal)" "(unset)/(unset)" \
			"$m: --gpus-per-task: task $k keeps only ROCR_VISIBLE_DEVICES=$r"
		want=$(want_row_cpus "$g")
		# Its row: the local-rank row when its list is that row's, else its own.
		like "$out" "rdzv: bind: task $k: (its own ROCR_VISIBLE_DEVICES=$r: )?gpu $g ${tioga_bus[$g]}( hip:$k ROCR_VISIBLE_DEVICES $r)?, nic hsi$((g / 2)) " \
			"$m: --gpus-per-task: task $k is bound to its own GCD $g and its NIC"
		is "$(within "$(field n1 $k cpus)" "${want%% (*}")" yes "$m: --gpus-per-task: task $k runs inside them"
	done

	e2e_stop
done

# A user's own selection is kept and named; a directory that is not
# private is refused, never used.
gres_conf amd_gpu_env
e2e_start RDZV_NODES=2 RDZV_NODE_GPUS="8 4" RDZV_GRES_CONF="$T/gres.conf" RDZV_PLUGSTACK_ARGS="$args"
run_step env HIP_VISIBLE_DEVICES=1 TMPDIR="$T/tmp" srun -N1 -w n1 -n2 --gres=gpu:2 --rdzv-bind=auto bash -c "$report"
is "$(field n1 0 hip)" "1" "the user's HIP_VISIBLE_DEVICES is kept"
like "$out" "warning: binding: HIP_VISIBLE_DEVICES=1 \(not Slurm's\) selects again among the GPUs ROCR_VISIBLE_DEVICES=0,1 leaves" \
	"... and named as a second filter"
mkdir -p "$T/tmp2/rdzv-miopen-0" && chmod 777 "$T/tmp2/rdzv-miopen-0"
run_step env TMPDIR="$T/tmp2" srun -N1 -w n1 -n1 --gres=gpu:1 --rdzv-bind=auto bash -c "$report"
is "$(field n1 0 miopen)" "(unset)" "a MIOpen directory open to others is not used"
like "$out" "warning: MIOpen's caches left where MIOpen puts them: .*rdzv-miopen-0 is open to others \(mode 777\)" \
	"... and the user is told why"
run_step env MIOPEN_USER_DB_PATH=/dev/shm/mine TMPDIR="$T/tmp" srun -N1 -w n1 -n1 --gres=gpu:1 --rdzv-bind=auto bash -c "$report"
is "$(field n1 0 miopen)|$(field n1 0 miopen_cache)" "/dev/shm/mine|$T/tmp/rdzv-miopen-0" \
	"the user's MIOPEN_USER_DB_PATH wins; the kernel cache still goes to the node"

# The AMD example job script, as a user would submit it (small).
ex="$top_srcdir/sbatch-examples"
run_to 240 env -C "$ex" PYTHON="$PY" TMPDIR="$T/tmp" sbatch --wait -o "$T/ex13.out" -N2 \
	--ntasks-per-node=2 --gpus-per-node=2 --cpus-per-task=1 13-amd-slingshot.sbatch
out=$(cat "$T/ex13.out" 2>/dev/null)
is "$rc" 0 "example 13 (AMD, --rdzv=torch --rdzv-bind=auto) exits 0"
[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | tail -n 15)"
like "$out" 'train_tiny: step 19 loss' "example 13: 4 ranks on n1 and n2 train all 20 steps"
unlike "$(grep -v '^[[:space:]]*#' "$ex/13-amd-slingshot.sbatch")" \
	'ROCR_VISIBLE_DEVICES=|mask_cpu|MASTER_ADDR=|RANK=\$SLURM|MIOPEN_' \
	"example 13 sets no GPU selection, CPU mask, address, rank or MIOpen path itself"
done_testing
