#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# srun -p gpu,debug: before Slurm 24.11.3, srun and salloc set
# SLURM_JOB_PARTITION to the requested list, not the partition the job runs
# in (Slurm NEWS, 24.11.3). The partition's NCCL profile default
# (partition_profile=) must still be the right one: when both listed
# partitions share a default it applies; when they differ the plugin, which
# cannot tell the running partition without asking slurmctld, applies none
# and says so, rather than a wrong one. Runs under every cluster: what each
# version puts in SLURM_JOB_PARTITION is reported, the outcome asserted.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
# Profiles must sit where every ancestor is root's (see 0050): /run.
pdir=/run/rdzv-e2e-0099.$$
mkdir -p "$pdir" || skip_all "cannot create $pdir"
chmod 755 "$pdir"
printf 'description GPU\ndefault NCCL_SOCKET_IFNAME=gpuif\n' > "$pdir/gpuprof.profile"
printf 'description Debug\ndefault NCCL_SOCKET_IFNAME=dbgif\n' > "$pdir/dbgprof.profile"
chmod 644 "$pdir"/*.profile
e2e_start RDZV_PLUGSTACK_ARGS="profiles=$pdir partition_profile=gpu:gpuprof,debug:gpuprof"
trap 'e2e_stop; rm -rf "$pdir"' EXIT
cd "$(mktemp -d)" || exit 1

show='echo "part=$SLURM_JOB_PARTITION if=${NCCL_SOCKET_IFNAME:-unset}"'
run_to 60 srun -p gpu,debug -N1 -n1 --rdzv=torch bash -c "$show"
part=$(printf '%s\n' "$out" | sed -n 's/^part=\([^ ]*\) .*/\1/p')
diag "Slurm $SLURM_VERSION: srun -p gpu,debug gives SLURM_JOB_PARTITION=$part"
is "$rc" 0 "srun -p gpu,debug runs"
like "$out" "if=gpuif" "both partitions default to gpuprof: it applies whichever the job runs in (SLURM_JOB_PARTITION=$part)"

e2e_plugstack "profiles=$pdir" "partition_profile=gpu:gpuprof,debug:dbgprof"
run_to 60 srun -p gpu,debug -N1 -n1 --rdzv=torch bash -c "$show"
is "$rc" 0 "with different defaults, srun -p gpu,debug still runs"
running=$(printf '%s\n' "$out" | sed -n 's/^part=\([^ ]*\) .*/\1/p')
case $running in
*,*)
	# Neither partition's profile value: the interface toward rank 0's node
	# (the plugin's own default) or nothing.
	unlike "$out" "if=(gpuif|dbgif)" "SLURM_JOB_PARTITION=$running (a list): no partition default is guessed"
	like "$out" "names several partitions whose NCCL profile defaults differ" "... and srun says why"
	;;
gpu) like "$out" "if=gpuif" "SLURM_JOB_PARTITION=gpu: gpu's default applies"; unlike "$out" "names several" "... without a warning" ;;
debug) like "$out" "if=dbgif" "SLURM_JOB_PARTITION=debug: debug's default applies"; unlike "$out" "names several" "... without a warning" ;;
*) ok 1 "SLURM_JOB_PARTITION=$running is none of gpu, debug or their list" ;;
esac
run_to 60 srun -p gpu,debug -N1 -n1 --nccl-profile=dbgprof --rdzv=torch bash -c "$show"
like "$out" "if=dbgif" "--nccl-profile picks the profile whatever SLURM_JOB_PARTITION holds"
done_testing
