#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Site NCCL profiles in a real Slurm: the site default and the partition's
# default apply to every task, a user's export beats a default but not an
# enforced entry, unset removes, list and none work, --nccl-profile=none and
# other profiles cannot escape the default's enforced entries, bad names,
# traversal and symlinks out of the directory are refused before launch,
# a malformed profile is named by file:line, the step says once which
# profile applied, and multinode lines apply by the step's node count.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require

# Profiles must sit in a directory whose every ancestor is root's and not
# writable by others (the plugin refuses the rest), which a build tree under
# /tmp is not: /run is.
pdir=/run/rdzv-e2e-profiles.$$
outside=$pdir.outside
mkdir -p "$pdir" "$outside" || skip_all "cannot create $pdir"
chmod 755 "$pdir" "$outside"
cleanup_dirs() { rm -rf "$pdir" "$outside"; }
cat > "$pdir/base.profile" <<'EOF'
# the site default
description Base for all partitions
enforce NCCL_IB_HCA==mlx5_0:1
default NCCL_IB_GID_INDEX=3
unset NCCL_P2P_DISABLE
default NCCL_DEBUG=WARN
EOF
cat > "$pdir/gpu.profile" <<'EOF'
description GPU partition
include base
default NCCL_IB_GID_INDEX=0
default NCCL_SOCKET_IFNAME=lo
EOF
cat > "$pdir/dbg.profile" <<'EOF'
description Debugging
enforce NCCL_DEBUG=INFO
default NCCL_IB_HCA=mlx5_9
default NCCL_P2P_DISABLE=1
EOF
printf 'description Broken\n\ndefault NCCL_IB_HCAS=mlx5_0\n' > "$pdir/broken.profile"
# NCCL's environment plugin keeps enforced entries inside the process
cat > "$pdir/envplug.profile" <<EOF
description In-process enforcement through NCCL's env plugin
enforce NCCL_ENV_PLUGIN=$top_builddir/nccl/.libs/libnccl-env-rdzv.so
enforce NCCL_SOCKET_IFNAME==lo
EOF
printf 'description Without the env plugin\nenforce NCCL_SOCKET_IFNAME==lo\n' > "$pdir/noplug.profile"
# lines for steps on several nodes only
cat > "$pdir/multi.profile" <<'EOF'
description Multi-node settings
default NCCL_NET=Socket
multinode default NCCL_NET=OFI
multinode enforce NCCL_CROSS_NIC=1
EOF
printf 'enforce NCCL_IB_HCA=evil\n' > "$outside/evil.profile"
chmod 644 "$pdir"/*.profile "$outside"/*.profile
ln -s base.profile "$pdir/alias.profile"
ln -s "$outside/evil.profile" "$pdir/escape.profile"

e2e_start RDZV_PLUGSTACK_ARGS="profiles=$pdir profile=base partition_profile=gpu:gpu"
trap 'e2e_stop; cleanup_dirs' EXIT
cd "$(mktemp -d)" || exit 1
marker=$PWD/launched
njobs() { scontrol show jobs -o 2>/dev/null | grep -c JobId; }
uniq_of() { printf '%s\n' "$1" | grep -v '^rdzv:' | sort -u | tr '\n' ' '; }
not0() { [ "$1" != 0 ] && echo 0 || echo 1; }

# --- which profile applies ---
run_to 30 srun -N2 -n4 printenv NCCL_IB_GID_INDEX NCCL_IB_HCA
is "$rc" 0 "a step in the default partition runs"
is "$(uniq_of "$out")" "3 =mlx5_0:1 " "the site default applies to every task"
like "$out" "rdzv: step [0-9]+\.[0-9]+: NCCL profile base \(site default\)" "the step says which profile applied"
is "$(printf '%s\n' "$out" | grep -c 'NCCL profile')" 1 "... once per step, not once per task"

run_to 30 srun -p gpu -N2 -n4 printenv NCCL_IB_GID_INDEX NCCL_IB_HCA NCCL_SOCKET_IFNAME
is "$(uniq_of "$out")" "0 =mlx5_0:1 lo " "the partition's default applies in that partition (and includes base)"
like "$out" "NCCL profile gpu \(default of partition gpu\)" "the step names the partition default"

run_to 30 srun -N3 -n6 -p gpu bash -c 'env | grep ^NCCL_ | sort | md5sum'
is "$(printf '%s\n' "$out" | grep -v '^rdzv:' | sort -u | wc -l)" 1 "every task of every node gets the same NCCL environment"
is "$(printf '%s\n' "$out" | grep -vc '^rdzv:')" 6 "... all 6 tasks reported"

# --- precedence ---
run_to 30 srun -N2 -n2 --export=ALL,NCCL_IB_GID_INDEX=7 printenv NCCL_IB_GID_INDEX
is "$(uniq_of "$out")" "7 " "a user's export beats a profile default"
run_to 30 srun -N2 -n2 --rdzv-verbose --export=ALL,NCCL_IB_HCA=mlx5_5 printenv NCCL_IB_HCA
is "$(uniq_of "$out")" "=mlx5_0:1 " "an enforced entry replaces the user's export"
like "$out" "NCCL_IB_HCA.*=mlx5_0:1 \(profile base, enforced over (the )?user's mlx5_5\)" "--rdzv-verbose says the user's value was replaced"
run_to 30 srun -N2 -n2 --export=ALL,NCCL_P2P_DISABLE=1 printenv NCCL_P2P_DISABLE
ok "$(not0 "$rc")" "unset removes the user's NCCL_P2P_DISABLE from every task (printenv fails: $rc)"
is "$(printf '%s\n' "$out" | grep -c '^1$')" 0 "... and no task printed a value"

# --- multinode lines: by the step's node count, the same on every node ---
run_to 30 srun -N1 -n2 --nccl-profile=multi printenv NCCL_NET
is "$(uniq_of "$out")" "Socket " "a one-node step gets the plain line, not the multinode one"
run_to 30 srun -N2 -n4 --nccl-profile=multi printenv NCCL_NET NCCL_CROSS_NIC
is "$(uniq_of "$out")" "1 OFI " "every task of a two-node step gets the multinode lines"
is "$(printf '%s\n' "$out" | grep -c '^OFI$')" 4 "... all 4 tasks"

# --- the user's choice, none, list ---
run_to 30 srun -N2 -n2 --nccl-profile=dbg --export=ALL,NCCL_P2P_DISABLE=1 printenv NCCL_DEBUG NCCL_IB_HCA
is "$(uniq_of "$out")" "=mlx5_0:1 INFO " "--nccl-profile=dbg applies, but the default's enforced HCA list still wins"
like "$out" "NCCL profile dbg \(--nccl-profile\); enforced entries of base \(site default\) also apply" "the step says both"
run_to 30 srun -N1 -n1 --nccl-profile=dbg --export=ALL,NCCL_P2P_DISABLE=1 printenv NCCL_P2P_DISABLE
ok "$(not0 "$rc")" "the default's unset beats the chosen profile's default"
run_to 30 srun -p gpu -N2 -n2 --nccl-profile=none printenv NCCL_IB_HCA
is "$(uniq_of "$out")" "=mlx5_0:1 " "--nccl-profile=none keeps the partition default's enforced entries"
like "$out" "no NCCL profile \(--nccl-profile=none\); enforced entries of gpu \(partition default\) apply" "the step says none and what still applies"
run_to 30 srun -p gpu -N1 -n1 --nccl-profile=none printenv NCCL_IB_GID_INDEX
ok "$(not0 "$rc")" "--nccl-profile=none drops the default's plain defaults"
printf '#!/bin/bash\n#SBATCH --nccl-profile=dbg\nsrun -N2 -n2 printenv NCCL_DEBUG\n' > prof.sbatch
run_to 90 sbatch --wait -N2 -o "$PWD/batch.out" prof.sbatch
is "$(grep -v '^rdzv:' batch.out 2>/dev/null | sort -u | tr '\n' ' ')" "INFO " "#SBATCH --nccl-profile=dbg reaches the steps of the batch job"
is "$(grep -c 'NCCL profile dbg' batch.out 2>/dev/null)" 1 "... and the job's output names it once"
run_to 30 srun -N1 -n1 --nccl-profile=alias printenv NCCL_IB_GID_INDEX
is "$(uniq_of "$out")" "3 " "a symlink inside the directory is a usable alias"

n0=$(njobs)
run_to 30 srun -N1 --nccl-profile=list touch "$marker"
is "$rc" 0 "--nccl-profile=list exits 0"
like "$out" "base +Base for all partitions" "the list shows names and descriptions"
like "$out" "broken +BROKEN: .*broken.profile:3: unknown NCCL variable NCCL_IB_HCAS \(did you mean NCCL_IB_HCA\?\)" "the list shows why a profile is unusable"
like "$out" "This step: base \(site default\)" "the list says which profile would apply"
run_to 30 sbatch --nccl-profile=list --wrap "touch $marker"
is "$rc" 0 "sbatch --nccl-profile=list exits 0"
like "$out" "gpu +GPU partition" "sbatch lists too"
is "$(njobs)" "$n0" "listing created no job"
ok "$([ ! -e "$marker" ] && echo 0 || echo 1)" "listing launched nothing"

# --- enforcement inside the process (NCCL >= 2.28 environment plugin) ---
run_to 30 srun -N1 -n1 --nccl-profile=envplug bash -c 'printf "%s\n" "$RDZV_NCCL_POLICY" | tr "\036" "|"'
like "$out" "^NCCL_ENV_PLUGIN=[^|]*libnccl-env-rdzv.so\|NCCL_SOCKET_IFNAME==lo\|NCCL_IB_HCA==mlx5_0:1\|NCCL_P2P_DISABLE$" "a profile enforcing NCCL_ENV_PLUGIN hands every enforced/unset entry to it"
run_to 30 srun -N1 -n1 --nccl-profile=noplug printenv RDZV_NCCL_POLICY
ok "$(not0 "$rc")" "without NCCL_ENV_PLUGIN enforced, no policy variable is added"
if [ "${RDZV_HAVE_CUDA:-no}" = yes ] && [ -f "$top_builddir/nccl/.libs/libnccl-env-rdzv.so" ] \
   && cat > probe.c <<'EOF' && cc -w -I/usr/local/cuda/include -o probe probe.c -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lnccl 2>/dev/null; then
#include <stdio.h>
#include <stdlib.h>
#include <nccl.h>
int main(void) /* re-exports after launch, then starts NCCL */
{
	ncclUniqueId id;
	setenv("NCCL_SOCKET_IFNAME", "=rdzv-no-such-if0", 1);
	puts(ncclGetUniqueId(&id) == ncclSuccess ? "nccl-ok" : "nccl-failed");
	return 0;
}
EOF
	run_to 60 srun -N2 -n2 --nccl-profile=envplug ./probe
	is "$(uniq_of "$out")" "nccl-ok " "with the env plugin, NCCL in every task keeps the enforced interface the program re-exported"
	run_to 60 srun -N2 -n2 --nccl-profile=noplug ./probe
	is "$(uniq_of "$out")" "nccl-failed " "without it, the program's re-export reaches NCCL (the gap the plugin closes)"
else
	skip "NCCL headers or libnccl-env-rdzv.so missing"
	skip "NCCL headers or libnccl-env-rdzv.so missing"
fi

# --- refusals before launch ---
n0=$(njobs)
run_to 30 srun -N1 --nccl-profile=nosuch touch "$marker"
ok "$(not0 "$rc")" "an unknown profile stops srun"
like "$out" "no such profile \(available: alias, base, broken, dbg, envplug, escape, gpu, multi, noplug; or none, list\)" "the error lists the valid profiles"
run_to 30 srun -N1 --nccl-profile=../etc/passwd touch "$marker"
like "$out" "contains '/'" "a traversal name is refused"
run_to 30 srun -N1 --nccl-profile=.hidden touch "$marker"
like "$out" "starts with '\.'" "a hidden name is refused"
run_to 30 srun -N1 "--nccl-profile=$(printf 'a\tb')" touch "$marker"
like "$out" "control or non-ASCII byte" "a control character is refused"
run_to 30 srun -N1 --nccl-profile=escape touch "$marker"
ok "$(not0 "$rc")" "a symlink out of the directory stops srun"
like "$out" "leaves the profiles directory: refused" "... and says why"
run_to 30 srun -N1 --nccl-profile=broken touch "$marker"
ok "$(not0 "$rc")" "a malformed profile stops srun"
like "$out" "broken\.profile:3: unknown NCCL variable NCCL_IB_HCAS \(did you mean NCCL_IB_HCA\?\)" "... naming file:line and the likely name"
chmod 664 "$pdir/dbg.profile"
run_to 30 srun -N1 --nccl-profile=dbg touch "$marker"
like "$out" "dbg\.profile is writable by its group: refused" "a group-writable profile is refused"
chmod 644 "$pdir/dbg.profile"
is "$(njobs)" "$n0" "no refused command created a job"
ok "$([ ! -e "$marker" ] && echo 0 || echo 1)" "no refused command launched anything"

# --- a profile only the nodes load: srun creating its own allocation does
# not know the partition, checks the site default, and the nodes then fail
# the partition's broken default: every task ends before exec, file:line named
e2e_plugstack "profiles=$pdir" profile=base partition_profile=gpu:broken
run_to 60 srun -p gpu -N2 -n4 touch "$marker"
ok "$(not0 "$rc")" "a partition default broken on the nodes fails the step ($rc)"
like "$out" "rdzv: error: task [0-9]+: profile: .*broken\.profile:3: unknown NCCL variable NCCL_IB_HCAS" "the job's output names file:line"
ok "$([ ! -e "$marker" ] && echo 0 || echo 1)" "no task ran its program"

# --- a broken default fails every step before launch, never a node ---
e2e_plugstack "profiles=$pdir" profile=broken
run_to 30 srun -N1 --nccl-profile=none true
ok "$(not0 "$rc")" "a malformed site default stops srun even with --nccl-profile=none"
like "$out" "broken\.profile:3" "... naming file:line"
e2e_plugstack "profiles=$pdir" partition_profile=gpu
run_to 30 srun -N1 true
like "$out" "partition_profile: 'gpu' is not PARTITION:PROFILE" "a malformed partition_profile is named"
e2e_plugstack "profiles=$outside/../../../../../../tmp"
run_to 30 srun -N1 true
like "$out" "writable by others: refused" "a world-writable profiles directory is refused"
e2e_plugstack
run_to 30 srun -N1 --nccl-profile=base true
like "$out" "no NCCL profiles are configured" "without profiles= a profile name is refused"
run_to 30 srun -N1 --nccl-profile=list true
is "$rc" 0 "without profiles=, list still exits 0"
is "$(scontrol show nodes -o | grep -c -E 'State=(DRAIN|DOWN)')" 0 "no node was drained or downed"
done_testing
