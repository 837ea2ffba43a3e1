#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Slurm 26.05's gres.conf Flags=env_uuid puts GPU UUIDs instead of indices in
# CUDA_VISIBLE_DEVICES where slurmd knows them (NVML autodetection). A step
# under such a configuration must never fail silently with --rdzv-bind: it
# binds, or runs unbound with a warning. Here the GPUs are fake (mknod, no
# NVML): slurmd says it has no UUID and falls back to indices, which is what
# a site without NVML gets; binding must work as without the flag. The UUID
# path itself (UUIDs resolved to PCI bus ids) belongs to lib/bind.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
e2e_slurm_at_least 26.05 || skip_all "Slurm $SLURM_VERSION has no gres Flags=env_uuid (26.05+)"
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
xml=$fixtures/psmgmt__tests__hwloc__topo.jwb0004.xml
[ -f "$xml" ] || { echo "Bail out! no topology fixtures at $xml: they belong to the repository (tests/topo/fixtures)"; exit 1; }
work=$(mktemp -d /tmp/rdzv-0097.XXXXXX) || exit 1
e2e_start RDZV_GRES_FLAGS=env_uuid RDZV_NODE_GPUS="4 4 4" RDZV_PLUGSTACK_ARGS="topology=$xml"
trap 'e2e_stop; rm -rf "$work"' EXIT
cd "$work" || exit 1

like "$(grep -h 'env_uuid' "$RDZV_CLUSTER_DIR"/log/slurmd-n1.log)" "no GPU UUID available" \
	"slurmd takes Flags=env_uuid and, with no UUID for a fake GPU, falls back to indices"
report='echo "$SLURMD_NODENAME $SLURM_LOCALID cvd=${CUDA_VISIBLE_DEVICES-} step=${SLURM_STEP_GPUS-} rank=${RANK-} cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
run_to 60 srun -N1 -n2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto bash -c "$report"
diag "env_uuid step: rc $rc: $(printf '%s' "$out" | head -c 600 | tr '\n' '|')"
is "$rc" 0 "with Flags=env_uuid a step with --rdzv-bind=auto runs (srun exits 0)"
is "$(printf '%s\n' "$out" | grep -c '^n1 [01] cvd=[^ ]')" 2 "... both tasks ran and see their GPUs"
is "$(printf '%s\n' "$out" | sed -n 's/.* rank=\([0-9]*\) .*/\1/p' | sort | tr '\n' ' ')" "0 1 " "... with ranks 0 and 1"
unlike "$out" "error" "... and no error"
cvds=$(printf '%s\n' "$out" | sed -n 's/.* cvd=\([^ ]*\) .*/\1/p' | sort -u | tr '\n' ' ')
if printf '%s' "$cvds" | grep -q GPU-; then
	like "$out" "warning|cpus=" "UUIDs in CUDA_VISIBLE_DEVICES: bound or warned ($cvds)"
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP CUDA_VISIBLE_DEVICES holds indices ($cvds): UUIDs need NVML-detected GPUs"
fi
done_testing
