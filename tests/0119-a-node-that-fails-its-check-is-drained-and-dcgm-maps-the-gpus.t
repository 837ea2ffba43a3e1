#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The admin's node work, on the local Slurm cluster, as root:
# - dcgm_job_map_dir=DIR/%n: while a step runs, DCGM-exporter's job-mapping
#   directory of its node has one file per GPU bound to the step, named by
#   the GPU's DCGM index (NVML's order: PCI bus-id order), holding the job
#   id; Slurm's GPU numbers are not the index (node n1: AWS p4d, gres.conf
#   out of PCI order, device minors permuted, as tests/topo/identity/p4d
#   says; the expected indices come from derive.py's golden, p4d.out). No
#   file is left after the step, nor after its slurmstepd was killed (the
#   job's epilog, rdzv_node.so's, sweeps its claims).
# - rdzv_node.so health_check=yes: the job's prolog checks the node (GPU device files of
#   gres.conf, the topology's NIC ports in a fake sysfs); a missing GPU
#   drains the node with a reason that names it (sinfo -R), the job does
#   not run there, and `rdzv-preflight --node` says the same; a healthy
#   node's check takes well under 1 s and srun's start grows by less.
# - health_timeout=: a check slower than its bound (NVML's first
#   initialisation, the test's NVML double through the admin's
#   nvml_library=, taking 3 s) is "unfinished", never a GPU's fault: it
#   drains the node with that reason (health_timeout_action=drain, the
#   default) or lets the job run (health_timeout_action=none); within the
#   bound the node is healthy.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
fix=$top_srcdir/tests/topo/identity
golden=$fix/p4d.out
p4d=aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml
jwb=psmgmt__tests__hwloc__topo.jwb0004.xml
T=$(mktemp -d /tmp/rdzv-0119.XXXXXX)
chmod 755 "$T"
mkdir -p "$T/topo" "$T/root" "$T/dev/n2" "$T/dev/n3" "$T/dcgm/n1" "$T/dcgm/n2" "$T/dcgm/n3"
cp -r "$fix/p4d/proc" "$fix/p4d/sys" "$T/root/"
ln -s "$fixtures/$p4d" "$T/topo/n1.xml"
ln -s "$fixtures/$jwb" "$T/topo/n2.xml"
ln -s "$fixtures/$jwb" "$T/topo/n3.xml"
files=
for k in 0 1 2 3 4 5 6 7; do
	m=$(sed -n "s|^# slurm $k -> /dev/nvidia\([0-9]*\) .*|\1|p" "$golden")
	mknod "$T/dev/gpu$k" c 195 "$m"
	files=${files:+$files,}$T/dev/gpu$k
done
for i in 0 1 2 3; do mknod "$T/dev/n2/nvidia$i" c 195 "$i"; mknod "$T/dev/n3/nvidia$i" c 195 "$i"; done
cat > "$T/gres.conf" <<CONF
AutoDetect=off
NodeName=n1 Name=gpu File=$files
NodeName=n2 Name=gpu File=$T/dev/n2/nvidia[0-3]
NodeName=n3 Name=gpu File=$T/dev/n3/nvidia[0-3]
CONF
# The NIC ports of both topologies, ACTIVE, in the fake sysfs.
for x in "$T/topo/n1.xml" "$T/topo/n2.xml"; do
	"$top_builddir/helpers/rdzv-topo" -l -i "$x" | sed -n 's/^nic \([^:]*\):\([0-9]*\) .*/\1 \2/p'
done | while read -r dev port; do
	mkdir -p "$T/root/sys/class/infiniband/$dev/ports/$port"
	echo "4: ACTIVE" > "$T/root/sys/class/infiniband/$dev/ports/$port/state"
done
# Slurm's GPU k on n1 -> its bus id (golden) -> its place in PCI order.
dcgm_index() {
	local bus
	bus=$(sed -n "s|^# slurm $1 -> .* -> \(0000:[0-9a-f:.]*\)$|\1|p" "$golden")
	sed -n 's|^# slurm [0-9]* -> .* -> \(0000:[0-9a-f:.]*\)$|\1|p' "$golden" | sort | grep -nx "$bus" | cut -d: -f1 | awk '{ print $1 - 1 }'
}
args="topology=$T/topo/%n.xml gres_conf=$T/gres.conf identity_root=$T/root dcgm_job_map_dir=$T/dcgm/%n kmsg=$T/kmsg/%n gpu_state_dir=$T/state/%n"
e2e_start RDZV_NODE_GPUS="8 4 4" RDZV_GRES_CONF="$T/gres.conf" RDZV_PLUGSTACK_ARGS="$args" \
	RDZV_NODE_PLUGSTACK_ARGS="$args"
# plugstack.conf with rdzv.so's line and rdzv_node.so's (the job's prolog
# and epilog), each with ARGS: written new and renamed in.
# plugstack RDZV_ARGS NODE_ARGS; NODE_ARGS "-": no rdzv_node.so line.
plugstack() {
	local so=$top_builddir/spank/.libs
	{
		printf 'required %s/rdzv.so %s\n' "$so" "$1"
		[ "$2" = - ] || printf 'required %s/rdzv_node.so %s\n' "$so" "$2"
	} > "$RDZV_CLUSTER_DIR/plugstack.conf.new"
	mv "$RDZV_CLUSTER_DIR/plugstack.conf.new" "$RDZV_CLUSTER_DIR/plugstack.conf"
}
cleanup() { e2e_stop; rm -rf "$T"; }
trap cleanup EXIT
cd "$T" || exit 1
pf="$top_builddir/helpers/rdzv-preflight"

# gpu_files DIR: the GPU files (names that are numbers), sorted, on one line.
gpu_files() { ls "$1" 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tr '\n' ' ' | sed 's/ $//'; }
# wait_for SECS TEST...: until TEST holds (events, never a fixed sleep).
wait_for() {
	local end=$((SECONDS + $1 * ${E2E_TIMEOUT_SCALE:-2})); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done
}
started() { [ "$(ls "$T"/started.* 2>/dev/null | wc -l)" -ge "$1" ]; }
gone() { [ -z "$(gpu_files "$1")" ]; }

# 1. A step on two of n1's GPUs: their DCGM indices, not Slurm's numbers.
a=$(dcgm_index 0) b=$(dcgm_index 1)
want=$(printf '%s\n%s\n' "$a" "$b" | sort -n | tr '\n' ' ' | sed 's/ $//')
rm -f "$T"/started.* "$T/go"
srun -N1 -w n1 -n2 --gres=gpu:2 bash -c "echo \$SLURM_JOB_ID > $T/job; touch $T/started.\$SLURM_PROCID; while [ ! -e $T/go ]; do sleep 0.1; done" >"$T/out1" 2>&1 &
srun_pid=$!
wait_for 60 started 2; ok $? "the step's 2 tasks run on n1"
job=$(cat "$T/job" 2>/dev/null)
is "$(gpu_files "$T/dcgm/n1")" "$want" "n1's mapping directory names Slurm's GPUs 0 and 1 by their DCGM index ($a, $b: PCI order), no other"
is "$(cat "$T/dcgm/n1/$a" 2>/dev/null)" "$job" "GPU $a's file holds the job id ($job), one line"
is "$(stat -c '%a %U' "$T/dcgm/n1/$a" 2>/dev/null)" "644 root" "... a file of root's, readable by the exporter"
is "$(gpu_files "$T/dcgm/n2")" "" "n2, not in the step, has no file"
touch "$T/go"
wait "$srun_pid"; is "$?" 0 "the step ends"
is "$(gpu_files "$T/dcgm/n1")" "" "no file is left after the step"

# 2. Two steps of one job share n1's GPU 0: both hold it; the file stays
# until the second ends.
rm -f "$T"/started.* "$T/go" "$T/go2"
salloc -N1 -w n1 --gres=gpu:2 bash -c "
	srun --overlap -n1 --gres=gpu:1 bash -c 'touch $T/started.a; while [ ! -e $T/go ]; do sleep 0.1; done' &
	srun --overlap -n1 --gres=gpu:1 bash -c 'touch $T/started.b; while [ ! -e $T/go2 ]; do sleep 0.1; done' &
	wait" >"$T/out2" 2>&1 &
salloc_pid=$!
wait_for 60 started 2; ok $? "two steps of one job run on n1"
n=$(gpu_files "$T/dcgm/n1" | wc -w)
ok "$([ "$n" -ge 1 ] && [ "$n" -le 2 ] && echo 0 || echo 1)" "their GPUs are mapped ($(gpu_files "$T/dcgm/n1"))"
touch "$T/go"
have_one() { [ "$(ls "$T"/dcgm/n1/.rdzv-claims 2>/dev/null | grep -c '^[0-9]*\.[0-9]*$')" = 1 ]; }
wait_for 60 have_one; ok $? "the first step ended: one claim is left"
ok "$([ -n "$(gpu_files "$T/dcgm/n1")" ] && echo 0 || echo 1)" "... and the second step's GPU is still mapped"
touch "$T/go2"
wait "$salloc_pid"; is "$?" 0 "the job ends"
is "$(gpu_files "$T/dcgm/n1")" "" "no file is left"

# 3. The step's slurmstepd killed (the test's own step, found by its
# claim): the job's epilog sweeps its claim.
rm -f "$T"/started.* "$T/go"
srun -N1 -w n1 -n1 --gres=gpu:1 bash -c "echo \$SLURM_JOB_ID > $T/job; touch $T/started.0; while [ ! -e $T/go ]; do sleep 0.1; done" >"$T/out3" 2>&1 &
srun_pid=$!
wait_for 60 started 1; ok $? "a step runs on n1"
job=$(cat "$T/job")
claim=$(ls "$T/dcgm/n1/.rdzv-claims" | grep "^$job\.")
stepd=$(cut -d' ' -f1 "$T/dcgm/n1/.rdzv-claims/$claim" | head -n 1)
like "$(tr '\0' ' ' < "/proc/$stepd/cmdline" 2>/dev/null)" "slurmstepd" "the claim names the step's slurmstepd ($stepd)"
kill -9 "$stepd"
touch "$T/go"
ok "$([ -n "$(gpu_files "$T/dcgm/n1")" ] && echo 0 || echo 1)" "killed, it left its GPU mapped"
scancel "$job"
wait_for 60 gone "$T/dcgm/n1"; ok $? "the job's epilog removed the mapping of the killed step"
ls "$T/dcgm/n1/.rdzv-claims" | grep -q "^$job\." ; ok "$([ $? != 0 ] && echo 0 || echo 1)" "... and its claim"
wait "$srun_pid" 2>/dev/null

# 3b. Issue 45: a step whose client forges SLURM_JOB_ID (a het step of the
# attacker's own job, launched by the real srun with tests/harness/
# forge-launch.c preloaded, naming a running job) neither takes over that
# job's claim nor relabels its GPU: claims carry S_JOB_ID, the component's
# own job id. Before the fix the forged id named the claim.
forge=$top_builddir/tests/harness/.libs/forge-launch.so
rm -f "$T"/started.* "$T/go" "$T/go2" "$T/job" "$T/ajob"
srun -N1 -w n1 -n1 --gres=gpu:1 bash -c "echo \$SLURM_JOB_ID > $T/job; touch $T/started.v; while [ ! -e $T/go ]; do sleep 0.1; done" >"$T/out4" 2>&1 &
victim_pid=$!
wait_for 60 started 1; ok $? "the victim's step runs on n1"
victim=$(cat "$T/job" 2>/dev/null)
vgpu=$(gpu_files "$T/dcgm/n1")
vclaim=$(cat "$T/dcgm/n1/.rdzv-claims/$victim.0" 2>/dev/null)
env LD_PRELOAD="$forge" RDZV_FORGE_SLURM_JOB_ID="$victim" \
	srun -w n1 -N1 -n1 --gres=gpu:1 bash -c "echo \$SLURM_JOB_ID > $T/ajob; touch $T/started.a; while [ ! -e $T/go2 ]; do sleep 0.1; done" : \
	-w n2 -N1 -n1 --gres=gpu:1 bash -c "touch $T/started.b; while [ ! -e $T/go2 ]; do sleep 0.1; done" >"$T/out5" 2>&1 &
attacker_pid=$!
wait_for 60 started 3; ok $? "a het step with SLURM_JOB_ID=$victim forged runs on n1 and n2"
attacker=$(cat "$T/ajob" 2>/dev/null)
has_claim() { [ -f "$T/dcgm/n1/.rdzv-claims/$1" ]; }
wait_for 30 has_claim "$attacker.0"; ok $? "the attacker's claim on n1 is its own job's ($attacker.0)"
is "$(cat "$T/dcgm/n1/.rdzv-claims/$victim.0" 2>/dev/null)" "$vclaim" "the victim's claim $victim.0 is untouched"
is "$(cat "$T/dcgm/n1/$vgpu" 2>/dev/null)" "$victim" "... and its GPU $vgpu still names job $victim"
touch "$T/go" "$T/go2"
wait "$victim_pid" "$attacker_pid"
wait_for 60 gone "$T/dcgm/n1"; ok $? "both steps ended: no file is left"

# 4. The health gate. Healthy first: the check's own time, and srun's
# start with and without it (best of 3, a new job each: the prolog runs
# once per job and node).
plugstack "$args" "$args health_check=yes"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n2
is "$rc" 0 "rdzv-preflight --node: n2 is healthy"
like "$out" "^n2: healthy in [0-9]+ ms \\(4 GPU files, [1-9][0-9]* NIC ports" "... having checked its 4 GPU files and NIC ports"
ms=$(printf '%s' "$out" | sed -n 's/.*healthy in \([0-9]*\) ms.*/\1/p')
ok "$([ -n "$ms" ] && [ "$ms" -lt 1000 ] && echo 0 || echo 1)" "... in $ms ms (under 1 s)"
best() {
	local i t0 t1 b=999999
	for i in 1 2 3; do
		t0=$(date +%s%N); srun -N1 -w n2 true >/dev/null 2>&1; t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000000 )); [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
with=$(best)
plugstack "$args" -
without=$(best)
plugstack "$args" "$args health_check=yes"
ok "$([ $((with - without)) -lt 1000 ] && echo 0 || echo 1)" "a healthy node's prolog adds under 1 s to srun (best of 3: $with ms with rdzv_node.so's check, $without ms without its line)"
idle() { [ "$(sinfo -h -n "$1" -o %t)" = idle ]; }
wait_for 30 idle n2; ok $? "n2 stays in service (idle)"

# A missing GPU: n2's GPU 2 device file removed.
rm "$T/dev/n2/nvidia2"
run_to 120 srun -N1 -w n2 true
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "a job on n2 does not run there (srun exit $rc)"
like "$out" "Job prolog failed" "... srun says its prolog failed"
reason=$(sinfo -h -R -n n2 -o '%E' 2>/dev/null)
is "$reason" "rdzv: GPU 2 missing: $T/dev/n2/nvidia2" "n2 is drained, the reason names the missing GPU"
like "$(sinfo -h -n n2 -o %t)" "drain|drng" "n2's state is drained"
diag "sinfo -R: $(sinfo -R | tr '\n' '|')"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n2
is "$rc" 1 "rdzv-preflight --node exits 1 on n2"
is "$out" "n2: unhealthy: GPU 2 missing: $T/dev/n2/nvidia2" "... with the same words (for NHC)"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n3
is "$rc" 0 "n3 (its own files) is healthy"
# Mended: back to service.
mknod "$T/dev/n2/nvidia2" c 195 2
scontrol update nodename=n2 state=resume
run_to 60 srun -N1 -w n2 true
is "$rc" 0 "mended and resumed, n2 runs jobs again"
# A slow check: n2's NVML (the test's double, a library only this test's
# plugstack names) takes 3 s to start, past health_timeout=1s.
mkdir -p "$T/nvml/n2"
cp "$top_builddir/tests/nvml-double/.libs/libnvml-double.so" "$T/nvml/n2/libnvidia-ml.so.1"
for i in 0 1 2 3; do
	echo "gpu GPU-$i 0000:0$i:00.0 0 00000000000000000000000000000000 0 not-supported 0 0"
done > "$T/nvml/n2/nvml-double.txt"
echo "slow-init 3000" >> "$T/nvml/n2/nvml-double.txt"
slow="$args nvml_library=$T/nvml/%n/libnvidia-ml.so.1 health_timeout=1s"
plugstack "$slow" "$slow health_check=yes"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n2
is "$rc" 3 "rdzv-preflight --node exits 3 on n2, whose NVML takes 3 s to start (health_timeout=1s)"
is "$out" "n2: unfinished: node check unfinished after 1 s (health_timeout=1s)" "... saying the check was unfinished, not unhealthy"
run_to 120 srun -N1 -w n2 true
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "health_timeout_action=drain (default): a job on n2 does not run there (srun exit $rc)"
reason=$(sinfo -h -R -n n2 -o '%E' 2>/dev/null)
is "$reason" "rdzv: node check unfinished after 1 s (health_timeout=1s)" "n2 is drained with the unfinished check's own reason"
unlike "$reason" "GPU|NVML" "... which names no GPU's fault"
scontrol update nodename=n2 state=resume
plugstack "$slow health_timeout_action=none" "$slow health_timeout_action=none health_check=yes"
run_to 120 srun -N1 -w n2 true
is "$rc" 0 "health_timeout_action=none: the job runs on n2 all the same"
# The prolog's outcome line ("job N: node n2: ..."), not the GPU gate's
# ("job N's prolog/epilog: ..."): the epilog's may be written after srun
# has exited, before this grep.
like "$(grep -E 'rdzv: health: job [0-9]+: node n2: ' "$RDZV_CLUSTER_DIR/log/slurmd-n2.log" | tail -n 1)" \
	"node n2: node check unfinished after 1 s \\(health_timeout=1s\\): not drained \\(health_timeout_action=none\\)" \
	"... slurmd's log says the check was unfinished and the node not drained"
wait_for 30 idle n2; ok $? "... and n2 stays in service (idle)"
plugstack "$args nvml_library=$T/nvml/%n/libnvidia-ml.so.1 health_timeout=10s" \
	"$args nvml_library=$T/nvml/%n/libnvidia-ml.so.1 health_timeout=10s health_check=yes"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n2
is "$rc" 0 "health_timeout=10s: the 3 s check ends in time"
like "$out" "^n2: healthy in [3-9][0-9]{3} ms \\(4 GPU files, [0-9]+ NIC ports, NVML 4 GPUs" "... healthy, NVML's 4 GPUs counted"
run_to 120 srun -N1 -w n2 true
is "$rc" 0 "... and a job runs on n2"
# A broken rdzv_node.so line (health_check=maybe) never drains a node:
# its prolog says so in slurmd's log, checks nothing, and the job runs.
plugstack "$args" "$args health_check=maybe"
run_to 60 srun -N1 -w n3 true
is "$rc" 0 "a job runs on n3 under a broken rdzv_node.so line"
like "$(grep 'rdzv_node.so: plugstack.conf' "$RDZV_CLUSTER_DIR/log/slurmd-n3.log" | tail -n 1)" \
	"health_check=maybe: valid values are yes, no" "... slurmd's log names the bad argument and its valid values"
wait_for 30 idle n3; ok $? "... and n3 is not drained"
done_testing
