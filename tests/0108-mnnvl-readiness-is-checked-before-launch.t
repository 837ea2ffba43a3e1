#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Multi-node NVLink readiness: a profile with "require mnnvl"
# makes every node of a step check, once per step and before any task
# starts, that it has an IMEX channel and that NVML reports every GPU's
# fabric registration completed, healthy and in one clique; a node that is
# not ready fails the step naming itself and the reason, and no task runs.
# The healthy step passes and its tasks get NVIDIA_IMEX_CHANNELS (and its
# APPTAINERENV_ copy). Without the requirement nothing is checked; a user
# cannot escape a partition default's requirement with --nccl-profile=none.
#
# No GPU is needed: NVML is the test double (tests/nvml-double), one copy
# per node through nvml_library=DIR/%n/libnvml.so (the double reads
# nvml-double.txt beside itself), and /dev is a fixture tree through
# identity_root= (the channel is made with mknod).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require

double=$top_builddir/tests/nvml-double/.libs/libnvml-double.so
[ -f "$double" ] || skip_all "the NVML double is not built (make check builds it)"

# Profiles need a directory whose every ancestor is root's (see 0050): /run.
T=/run/rdzv-e2e-mnnvl.$$
pdir=$T/profiles
root=$T/root
chan=$root/dev/nvidia-caps-imex-channels
mkdir -p "$pdir" "$chan" "$T/n1" "$T/n2" "$T/n3" || skip_all "cannot create $T"
chmod 755 "$T" "$pdir"
cleanup_dirs() { rm -rf "$T"; }
mknod "$chan/channel0" c 234 0 || skip_all "mknod failed (needs root)"
cat > "$pdir/mnnvl.profile" <<'EOF'
description GB200 test: multi-node NVLink required
require mnnvl
default NCCL_MNNVL_ENABLE=1
enforce NCCL_CUMEM_ENABLE=1
EOF
printf 'description plain\ndefault NCCL_DEBUG=WARN\n' > "$pdir/plain.profile"
printf 'description broken\nrequire nvlink\n' > "$pdir/broken.profile"
chmod 644 "$pdir"/*.profile
for n in n1 n2 n3; do cp "$double" "$T/$n/libnvml.so"; done

A=3f2a0c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b
# node NODE [STATE2] [HEALTH2] [CLIQUE2]: two GPUs; the second's state,
# health mask and clique as given (a healthy node by default).
node() {
	{
		echo "log $T/inits.log"
		echo "gpu GPU-$1-0 00000000:1B:00.0 3 $A 7 completed 0 0x1aa 1"
		echo "gpu GPU-$1-1 00000000:2B:00.0 3 $A ${4:-7} ${2:-completed} 0 ${3:-0x1aa} 1"
	} > "$T/$1/nvml-double.txt"
}
healthy() { node n1; node n2; node n3; }
healthy

e2e_start RDZV_PLUGSTACK_ARGS="profiles=$pdir profile=plain partition_profile=gpu:mnnvl identity_root=$root nvml_library=$T/%n/libnvml.so"
trap 'e2e_stop; cleanup_dirs' EXIT
cd "$(mktemp -d)" || exit 1
marker=$PWD/launched
nolaunch() { ok "$([ ! -e "$marker" ] && echo 0 || echo 1)" "$1"; rm -f "$marker"; }
# Where one node of two is broken, its own tasks never start; the healthy
# node's may, and end with the step (each node refuses its own tasks).
pernode=(bash -c 'touch "$0.$SLURMD_NODENAME"' "$marker")
nolaunch_on() { ok "$([ ! -e "$marker.$1" ] && echo 0 || echo 1)" "$2"; rm -f "$marker".*; }

# --- the healthy case ---
: > "$T/inits.log"
run_to 30 srun -N2 -n4 --nccl-profile=mnnvl printenv NVIDIA_IMEX_CHANNELS NCCL_MNNVL_ENABLE NCCL_CUMEM_ENABLE
is "$rc" 0 "healthy nodes: the step runs"
is "$(uniq_of "$out")" "0 1 " "every task gets NVIDIA_IMEX_CHANNELS=0 and the profile's NCCL settings"
is "$(wc -l < "$T/inits.log")" 2 "NVML is read once per node (2 nodes, 4 tasks), not once per task"
run_to 30 srun -N1 -n1 --nccl-profile=mnnvl printenv APPTAINERENV_NVIDIA_IMEX_CHANNELS
is "$(uniq_of "$out")" "0 " "the channel reaches Apptainer as APPTAINERENV_NVIDIA_IMEX_CHANNELS"
run_to 30 srun -N1 -n1 --nccl-profile=mnnvl --export=ALL,NVIDIA_IMEX_CHANNELS=5 printenv NVIDIA_IMEX_CHANNELS
is "$(uniq_of "$out")" "5 " "a user's own NVIDIA_IMEX_CHANNELS is kept"
run_to 30 srun -N1 -n1 printenv NVIDIA_IMEX_CHANNELS
ok "$(not0 "$rc")" "without require mnnvl no NVIDIA_IMEX_CHANNELS is set"

# --- broken nodes: named, and no task of theirs starts ---
node n2 in-progress
run_to 30 srun -N2 -n2 -w n1,n2 --nccl-profile=mnnvl "${pernode[@]}"
ok "$(not0 "$rc")" "a GPU still registering fails the step (rc $rc)"
like "$out" "MNNVL: node n2 is not ready for multi-node NVLink: GPU 1 \(00000000:2B:00.0\): fabric state in progress, not completed" \
	"the node, the GPU and the state are named"
like "$out" "required by .*mnnvl.profile:2 \(profile mnnvl\)" "the message names the profile line that asked"
unlike "$out" "node n1 is not ready" "the healthy node is not blamed"
nolaunch_on n2 "no task ran on n2"

node n2 completed 0x1a9
run_to 30 srun -N2 -n2 -w n1,n2 --nccl-profile=mnnvl "${pernode[@]}"
like "$out" "MNNVL: node n2 is not ready for multi-node NVLink: GPU 1 \(00000000:2B:00.0\): fabric health: degraded bandwidth" \
	"degraded bandwidth fails the step, GPU and fault named"
nolaunch_on n2 "... and no task ran on n2"

node n2 completed 0x1aa 8
run_to 30 srun -N2 -n2 -w n1,n2 --nccl-profile=mnnvl "${pernode[@]}"
like "$out" "MNNVL: node n2 is not ready for multi-node NVLink: the GPUs of this node are not in one NVLink domain: GPU 0 \(00000000:1B:00.0\) cluster $A clique 7; GPU 1 \(00000000:2B:00.0\) cluster $A clique 8" \
	"two cliques on one node: both named, nothing guessed"
nolaunch_on n2 "... and no task ran on n2"
healthy

rm -f "$T/n3/libnvml.so"
run_to 30 srun -w n3 -N1 -n1 --nccl-profile=mnnvl touch "$marker"
like "$out" "MNNVL: node n3 is not ready for multi-node NVLink: no NVML: cannot load $T/n3/libnvml.so" "no NVML on a node: named"
nolaunch "... and no task ran"
cp "$double" "$T/n3/libnvml.so"

rm -f "$chan/channel0"
run_to 30 srun -N2 -n2 --nccl-profile=mnnvl touch "$marker"
like "$out" "MNNVL: node n[12] is not ready for multi-node NVLink: no IMEX channel: $chan has no channelN character device" \
	"an empty channel directory fails the step"
nolaunch "... and no task ran"
rmdir "$chan"
run_to 30 srun -N2 -n2 --nccl-profile=mnnvl touch "$marker"
like "$out" "MNNVL: node n[12] is not ready for multi-node NVLink: no IMEX channel: $chan does not exist" \
	"no channel directory fails the step"
nolaunch "... and no task ran"

# --- only when asked; and the partition default's requirement holds ---
run_to 30 srun -N2 -n2 touch "$marker"
is "$rc" 0 "a profile without require mnnvl does not check (the node has no channel)"
rm -f "$marker"
run_to 30 srun -p gpu -N1 -n1 --nccl-profile=none touch "$marker"
like "$out" "MNNVL: node n[0-9]+ is not ready" "--nccl-profile=none does not escape the partition default's require mnnvl (whichever node the step got)"
nolaunch "... and no task ran"
mkdir -p "$chan" && mknod "$chan/channel0" c 234 0
run_to 30 srun -p gpu -N2 -n2 printenv NVIDIA_IMEX_CHANNELS
is "$(uniq_of "$out")" "0 " "the partition default's requirement passes on healthy nodes"

# --- a bad directive is refused before anything is submitted ---
run_to 30 srun -N1 -n1 --nccl-profile=broken touch "$marker"
like "$out" "broken.profile:2: unknown requirement 'nvlink' \(expected: mnnvl\)" "a bad require line is named by file:line in srun"
nolaunch "... and nothing ran"

# --- nvlink_domain=nvml: each node's domain from its GPUs ---
healthy
e2e_plugstack profiles=$pdir profile=plain identity_root=$root "nvml_library=$T/%n/libnvml.so" nvlink_domain=nvml
run_to 30 srun -N2 -n4 --rdzv=torch bash -c 'echo "D=$RDZV_NVLINK_DOMAIN S=${RDZV_NVLINK_DOMAIN_SIZE-unset}"'
is "$rc" 0 "nvlink_domain=nvml: the step runs"
is "$(uniq_of "$out")" "D=$A.7 S=unset " "nvlink_domain=nvml: every task gets its node's cluster UUID and clique, no size (other nodes unseen)"
node n2 completed 0x1aa 8
run_to 30 srun -N2 -n2 -w n1,n2 --rdzv=torch "${pernode[@]}"
like "$out" "nvlink_domain=nvml: node n2: .*GPU 0 \(00000000:1B:00.0\) cluster $A clique 7; GPU 1 \(00000000:2B:00.0\) cluster $A clique 8" \
	"nvlink_domain=nvml: two cliques on one node refuse the step, both GPUs named"
nolaunch_on n2 "... and no task ran on n2"
healthy

# Megatron's groups across nodes under nvml: each node tells srun its clique
# before its tasks start; srun checks the groups and answers every node.
mega=(bash -c 'touch "$0.$SLURMD_NODENAME"' "$marker" --tensor-model-parallel-size)
run_to 60 srun -N2 -w n1,n2 --ntasks-per-node=2 --rdzv=megatron "${mega[@]}" 4
is "$rc" 0 "nvml, one clique on both nodes: TP=4 across them runs"
ok "$([ -e "$marker.n1" ] && [ -e "$marker.n2" ]; echo $?)" "... tasks ran on n1 and n2"
rm -f "$marker".*
{
	echo "log $T/inits.log"
	echo "gpu GPU-n2-0 00000000:1B:00.0 3 $A 8 completed 0 0x1aa 1"
	echo "gpu GPU-n2-1 00000000:2B:00.0 3 $A 8 completed 0 0x1aa 1"
} > "$T/n2/nvml-double.txt"
run_to 60 srun -N2 -w n1,n2 --ntasks-per-node=2 --rdzv=megatron "${mega[@]}" 4
ok "$(not0 "$rc")" "nvml, n1 in clique 7 and n2 in clique 8: TP=4 across them is refused (rc $rc)"
like "$out" "TP=4 \(--tensor-model-parallel-size\): the group of ranks 0-3 would span NVLink domains $A.7 \(ranks 0-1 on n1\) and $A.8 \(ranks 2-3 on n2\)" \
	"... srun names the ranks, the nodes and both cliques"
ok "$([ ! -e "$marker.n1" ] && [ ! -e "$marker.n2" ]; echo $?)" "... and no task ran on either node (both waited for srun's verdict)"
rm -f "$marker".*
run_to 60 srun -N2 -w n1,n2 --ntasks-per-node=2 --rdzv=megatron "${mega[@]}" 2
is "$rc" 0 "nvml, two cliques: TP=2 (each group on one node) runs"
healthy
done_testing
