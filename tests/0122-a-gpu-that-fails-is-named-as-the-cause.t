#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A GPU that fails is named as the cause (issue 46), on the local Slurm
# cluster, as root. Every node has AWS p4d's 8 GPUs (fake device files,
# gres.conf out of PCI order, minors permuted: tests/topo/identity/p4d, whose
# golden p4d.out gives Slurm's number -> bus id). Each node's kernel log is
# a file in /dev/kmsg's format (kmsg=$T/kmsg/%n: never the machine's), the
# Xid table the shipped etc/rdzv-xid.conf.
# - The health gate (rdzv_node.so health_check=yes): an Xid 79 on n2's GPU 1
#   drains n2 at the next job's prolog, the reason naming Slurm's GPU 1,
#   its bus id, the Xid and its meaning; rdzv-preflight --node says the
#   same; resumed by the admin, n2 is not drained again for it (the cursor);
#   an Xid 13 (the application's) drains nothing; an Xid 48 logged while a
#   job runs drains the node at that job's epilog; an AMD card's
#   uncorrectable RAS count rising drains n3, naming its PCI address.
# - The verdict: a torch step on n1-n3 (2 ranks a node, bound to GPUs 0
#   and 1) whose rank on n2's GPU 1 exits after n2's kernel log received an
#   Xid 79 for that GPU: srun's first line names n2's GPU 1, its rank, Xid
#   79 and "a node fault", before the rank's exit; the step's record and
#   the metrics carry it; n2's epilog drains n2 for it, once. An Xid on a
#   GPU of n2 the step does not have is said to be none of the step's.
# - rdzv-retry (3 nodes, the step on 2): with that Xid 79, n2 is excluded
#   naming its GPU and training resumes on the spare n3; with an Xid 13
#   instead, the script is blamed and nothing is excluded.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
fix=$top_srcdir/tests/topo/identity
golden=$fix/p4d.out
p4d=aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml
T=$(mktemp -d /tmp/rdzv-0122.XXXXXX)
chmod 755 "$T"
mkdir -p "$T/topo" "$T/root" "$T/kmsg" "$T/state" "$T/records" "$T/metrics"
cp -r "$fix/p4d/proc" "$fix/p4d/sys" "$T/root/"
mkdir -p "$T/root/proc/sys/kernel/random"
echo "0122-boot" > "$T/root/proc/sys/kernel/random/boot_id"
echo "AutoDetect=off" > "$T/gres.conf"
for n in n1 n2 n3; do
	ln -s "$fixtures/$p4d" "$T/topo/$n.xml"
	mkdir -p "$T/dev/$n"
	files=
	for k in 0 1 2 3 4 5 6 7; do
		m=$(sed -n "s|^# slurm $k -> /dev/nvidia\([0-9]*\) .*|\1|p" "$golden")
		mknod "$T/dev/$n/gpu$k" c 195 "$m"
		files=${files:+$files,}$T/dev/$n/gpu$k
	done
	echo "NodeName=$n Name=gpu File=$files" >> "$T/gres.conf"
	: > "$T/kmsg/$n"
done
# The topology's NIC ports, ACTIVE in the fake sysfs (the node check's).
"$top_builddir/helpers/rdzv-topo" -l -i "$T/topo/n1.xml" | sed -n 's/^nic \([^:]*\):\([0-9]*\) .*/\1 \2/p' \
	| while read -r dev port; do
		mkdir -p "$T/root/sys/class/infiniband/$dev/ports/$port"
		echo "4: ACTIVE" > "$T/root/sys/class/infiniband/$dev/ports/$port/state"
	done
# An AMD card in the same fake sysfs, its RAS counters at 0 (n3's baseline).
ras=$T/root/sys/class/drm/card0/device
mkdir -p "$ras/ras"
printf 'DRIVER=amdgpu\nPCI_SLOT_NAME=0000:c1:00.0\n' > "$ras/uevent"
printf 'ue: 0\nce: 3\n' > "$ras/ras/umc_err_count"
# busid K: Slurm's GPU K's bus id, as the driver prints it (DDDD:BB:DD).
busid() { sed -n "s|^# slurm $1 -> .* -> \(0000:[0-9a-f:]*\)\.[0-9]$|\1|p" "$golden"; }
gpu1=$(busid 1)
# $T/xid NODE BUSID N TEXT: the driver's line appended to NODE's kernel
# log, numbered after the last (under a lock: ranks call it too), stamped
# with the kernel's clock (CLOCK_MONOTONIC) now.
cat > "$T/xid" <<'EOF'
#!/bin/bash
d=$(dirname "$0")
exec 8>>"$d/seq.lock"
flock 8
seq=$(( $(cat "$d/seq" 2>/dev/null || echo 100) + 1 ))
echo "$seq" > "$d/seq"
printf "4,%d,%d,-;NVRM: Xid (PCI:%s): %d, pid='<unknown>', name=<unknown>, %s\n SUBSYSTEM=pci\n" \
	"$seq" "$(python3 -c 'import time; print(int(time.monotonic() * 1000000))')" "$2" "$3" "$4" >> "$d/kmsg/$1"
EOF
# $T/gpu-fails XID BUSID CMD...: at the first attempt
# (TORCHELASTIC_RESTART_COUNT 0), the rank on n2's GPU 1 (local task 1:
# binding gives local task i the step's GPU i) has the driver report XID for
# BUSID, then runs CMD (which makes n2's ranks exit 1).
cat > "$T/gpu-fails" <<'EOF'
#!/bin/bash
x=$1 bus=$2
shift 2
if [ "$SLURMD_NODENAME" = n2 ] && [ "${TORCHELASTIC_RESTART_COUNT:-0}" = 0 ] && [ "$SLURM_LOCALID" = 1 ]; then
	case $x in
	79) "$(dirname "$0")/xid" n2 "$bus" 79 "GPU has fallen off the bus." ;;
	*) "$(dirname "$0")/xid" n2 "$bus" "$x" "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)" ;;
	esac
fi
exec "$@"
EOF
chmod 755 "$T/xid" "$T/gpu-fails"
xid() { "$T/xid" "$@"; }
args="topology=$T/topo/%n.xml gres_conf=$T/gres.conf identity_root=$T/root kmsg=$T/kmsg/%n gpu_state_dir=$T/state/%n xid_table=$top_srcdir/etc/rdzv-xid.conf"
e2e_start RDZV_NODE_GPUS="8 8 8" RDZV_GRES_CONF="$T/gres.conf" \
	RDZV_PLUGSTACK_ARGS="$args bind=auto record_dir=$T/records metrics_dir=$T/metrics" \
	RDZV_NODE_PLUGSTACK_ARGS="$args health_check=yes"
cleanup() { cancel_own_jobs; e2e_stop; rm -rf "$T"; }
trap cleanup EXIT
cd "$T" || exit 1
pf="$top_builddir/helpers/rdzv-preflight"
wait_for() {
	local end=$((SECONDS + $1 * ${E2E_TIMEOUT_SCALE:-2})); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done
}
idle() { [ "$(sinfo -h -n "$1" -o %t)" = idle ]; }
drained() { sinfo -h -n "$1" -o %t | grep -Eq 'drain|drng'; }
reason() { sinfo -h -R -n "$1" -o '%E' 2>/dev/null; }
# resume NODE: the admin's resume, until the node is idle (Slurm 26.05
# refuses it while the drained node still completes the last job).
resumed() { scontrol update nodename="$1" state=resume 2>/dev/null; idle "$1"; }
resume() { wait_for 60 resumed "$1" || diag "$1 not resumed: $(sinfo -h -n "$1" -o %T)"; }

# 1. The gate, healthy: each node's first look sets its cursor.
run_to 60 srun -N3 -w n1,n2,n3 true
is "$rc" 0 "a job on n1-n3 runs: no GPU fault reported"
ok "$([ -s "$T/state/n2/gpu-cursor" ] && echo 0 || echo 1)" "n2's cursor is written ($(tr '\n' ' ' < "$T/state/n2/gpu-cursor" 2>/dev/null))"
is "$(stat -c '%a %U' "$T/state/n2/gpu-cursor" 2>/dev/null)" "600 root" "... root's, 0600"
wait_for 30 idle n2; ok $? "n2 is idle"

# 2. Xid 79 on n2's GPU 1 ($gpu1).
xid n2 "$gpu1" 79 "GPU has fallen off the bus."
want="GPU 1 ($gpu1): Xid 79, GPU has fallen off the bus (RESTART_BM)"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n2
is "$rc" 1 "rdzv-preflight --node: n2 is unhealthy"
is "$out" "n2: unhealthy: $want" "... naming Slurm's GPU 1, its bus id, the Xid and its meaning"
run_to 120 srun -N1 -w n2 true
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "the next job does not run on n2 (srun exit $rc)"
is "$(reason n2)" "rdzv: $want" "n2 is drained, the reason naming the GPU, the Xid and its meaning"
like "$(sinfo -h -n n2 -o %t)" "drain|drng" "n2's state is drained"
resume n2
run_to 60 srun -N1 -w n2 true
is "$rc" 0 "resumed by the admin, n2 runs the next job: the same Xid drains once"
wait_for 30 idle n2; ok $? "... and n2 stays in service"

# 3. Xid 13 (the application's): said, never a drain.
xid n2 "$gpu1" 13 "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)"
run_to 30 "$pf" --node --plugstack "$RDZV_CLUSTER_DIR/plugstack.conf" --name n2
is "$rc" 0 "rdzv-preflight --node: an Xid 13 leaves n2 healthy"
like "$out" "GPU $gpu1: Xid 13, Graphics engine exception \\(RESTART_APP\\): the application's, not the node's" "... and says it is the application's"
run_to 60 srun -N1 -w n2 true
is "$rc" 0 "a job runs on n2 after an Xid 13"
wait_for 30 idle n2; ok $? "... n2 is not drained"

# 4. The epilog: an Xid 48 on n1's GPU 3 while a job runs there drains n1
# as that job ends, before the next is placed.
rm -f "$T/started" "$T/go"
srun -N1 -w n1 bash -c "touch $T/started; while [ ! -e $T/go ]; do sleep 0.1; done" >"$T/out4" 2>&1 &
srun_pid=$!
wait_for 60 test -e "$T/started"; ok $? "a job runs on n1"
xid n1 "$(busid 3)" 48 "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0."
touch "$T/go"
wait "$srun_pid"; is "$?" 0 "the job ends (its own work was done)"
wait_for 60 drained n1; ok $? "n1 is drained by the job's epilog"
is "$(reason n1)" "rdzv: GPU 3 ($(busid 3)): Xid 48, Double bit ECC error (RESET_GPU)" "... the reason naming GPU 3 and Xid 48"
resume n1

# 5. AMD: n3's card's uncorrectable count rises from its baseline (0).
printf 'ue: 2\nce: 3\n' > "$ras/ras/umc_err_count"
run_to 120 srun -N1 -w n3 true
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "a job does not run on n3 after its RAS count rose (srun exit $rc)"
is "$(reason n3)" "rdzv: GPU 0000:c1:00: an uncorrectable RAS error (umc, 2 new)" "n3 is drained, naming the card's PCI address and the count"
resume n3
run_to 60 srun -N1 -w n3 true
is "$rc" 0 "resumed, n3 runs the next job: judged once"
# The fake sysfs is every node's: its count back to the others' baseline.
printf 'ue: 0\nce: 3\n' > "$ras/ras/umc_err_count"

# 6. The verdict: n2's GPU 1 falls off the bus, then its rank exits.
for n in n1 n2 n3; do wait_for 30 idle "$n"; done
new_stamp
step 300 srun -N3 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch -n6 "$T/gpu-fails" 79 "$gpu1" $PY "$FAIL_APP" node-once 0 "$stamp" n2
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "the step fails (srun exit $rc)"
lines=$(printf '%s\n' "$out" | grep -E '^rdzv: ')
diag "srun: $(printf '%s' "$lines" | tr '\n' '|')"
like "$(printf '%s\n' "$lines" | head -n 1)" "^rdzv: GPU 1 of node n2 \\(rank [0-9]+\\): Xid 79, GPU has fallen off the bus, [0-9]+\\.[0-9] s before rank [0-9]+ exited: a node fault\$" \
	"srun's first line names n2's GPU 1, its rank, Xid 79 and a node fault"
like "$(printf '%s\n' "$lines" | sed -n 2p)" "^rdzv: rank [0-9]+ \\(node n2\\) exited with status 1" "... then the rank's exit, as before"
rec=$(cat "$T"/records/*.n2.json 2>/dev/null)
like "$rec" '"gpu_fault":\{"kind":"xid_node","text":"rdzv: GPU 1 of node n2' "n2's record of the step carries the GPU fault"
like "$(cat "$T/metrics/rdzv.prom" 2>/dev/null)" 'rdzv_gpu_faults_total\{kind="xid_node"\} [1-9]' "... and the metrics count it"
wait_for 60 drained n2; ok $? "n2's epilog drains n2 for it"
is "$(reason n2)" "rdzv: $want" "... the reason naming GPU 1 and Xid 79"
resume n2
run_to 60 srun -N1 -w n2 true
is "$rc" 0 "resumed, n2 runs the next job: drained once"

# 6b. The same on n2's GPU 5, which the step (2 GPUs a node) does not have:
# named by Slurm's number, and said to be none of the step's.
for n in n1 n2 n3; do wait_for 30 idle "$n"; done
new_stamp
step 300 srun -N3 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch -n6 "$T/gpu-fails" 79 "$(busid 5)" $PY "$FAIL_APP" node-once 0 "$stamp" n2
like "$(printf '%s\n' "$out" | grep -E '^rdzv: ' | head -n 1)" "^rdzv: GPU 5 of node n2 \\(not one of the step's GPUs\\): Xid 79, GPU has fallen off the bus, [0-9]+\\.[0-9] s before rank [0-9]+ exited: a node fault\$" \
	"an Xid on a GPU the step does not have: named, and said to be none of the step's"
wait_for 60 drained n2; ok $? "n2's epilog drains n2 for it"
is "$(reason n2)" "rdzv: GPU 5 ($(busid 5)): Xid 79, GPU has fallen off the bus (RESTART_BM)" "... naming GPU 5"
resume n2

# 7. rdzv-retry: the Xid 79 excludes n2, training resumes on the spare n3.
for n in n1 n2 n3; do wait_for 30 idle "$n"; done
retry=$top_srcdir/helpers/rdzv-retry
export RDZV_PREFLIGHT=$top_builddir/helpers/rdzv-preflight
trained() { printf '%s\n' "$out" | grep -c 'trained sum=10 of 10'; }
ran_on() { printf '%s\n' "$out" | grep -E "^rank [0-9] on n[0-9] restart=$1" | awk '{print $4}' | sort -u | tr '\n' ' '; }
new_stamp
step 300 salloc -N3 --ntasks-per-node=2 --gres=gpu:2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch -n4 "$T/gpu-fails" 79 "$gpu1" $PY "$FAIL_APP" node-once 0 "$stamp" n2
is "$rc" 0 "under rdzv-retry, an Xid 79 on n2's GPU 1: exit 0"
like "$out" "rdzv-retry: excluding n2 \\(its GPU failed: GPU 1 of node n2 \\(rank [0-9]+\\): Xid 79, GPU has fallen off the bus" "... n2 excluded, naming its GPU and why"
is "$(trained)" 4 "... the second attempt's 4 ranks all-reduce"
is "$(ran_on 1)" "n1 n3 " "... on n1 and the spare n3"
wait_for 60 drained n2; ok $? "n2 is drained for it (the job's epilog)"
resume n2

# 8. An Xid 13 instead: the script's; nothing excluded.
for n in n1 n2 n3; do wait_for 30 idle "$n"; done
new_stamp
step 300 salloc -N3 --ntasks-per-node=2 --gres=gpu:2 "$retry" -n 2 -- srun -N2 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch -n4 "$T/gpu-fails" 13 "$gpu1" $PY "$FAIL_APP" node-once 0 "$stamp" n2
is "$rc" 0 "under rdzv-retry, an Xid 13 on n2's GPU 1: exit 0"
like "$out" "rdzv: GPU 1 of node n2 \\(rank [0-9]+\\): Xid 13, Graphics engine exception, [0-9.]+ s before rank [0-9]+ exited: the application's, not a node fault" "srun names the Xid 13 as the application's"
like "$out" "rdzv-retry: not a node's fault: .*\\(its GPU's driver reported the application's own fault: GPU 1 of node n2" "... rdzv-retry blames the script"
unlike "$out" "excluding n[0-9]" "... and excludes no node"
is "$(trained)" 4 "... the rerun in place trains"
ok "$(drained n2 && echo 1 || echo 0)" "n2 is not drained for an Xid 13"
done_testing
