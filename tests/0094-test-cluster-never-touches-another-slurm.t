#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The suite's test cluster never touches another Slurm on the same machine.
# This test starts a second, throwaway Slurm of its own (Debian's slurmctld
# and slurmd with their own configuration, state directory and ports, started
# WITHOUT the RDZV_TEST_CLUSTER marker: to tests/cluster/cluster.sh it is a
# production Slurm), runs a long job step on it, then starts, uses and stops
# the suite's cluster, and checks that the foreign slurmctld, slurmd and the
# step's slurmstepd are the same processes afterwards and that the step ends
# normally. It also checks that cluster.sh refuses, naming what is taken, a
# port the foreign Slurm holds (slurmctld's, then slurmd's) and a state
# directory that is not a test cluster's, and that neither its refused start
# nor its stop cancels the foreign step. Only what this test started is ever
# signalled: by the pids it recorded, each checked to be running with this
# test's configuration path before it is signalled.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
command -v ss >/dev/null 2>&1 || skip_all_missing iproute2 "ss (iproute2) not installed: cannot pick free ports"

work=$(mktemp -d /tmp/rdzv-foreign.XXXXXX) || exit 1
conf=$work/slurm.conf
mkdir -p "$work/state" "$work/spool/fx1" "$work/log" "$work/run"

# A port nobody listens on, and the one after it, from $1 up.
listening() { ss -Htln 2>/dev/null | awk '{print $4}' | grep -q ":$1\$"; }
pick_ports() {
	local p=$1
	while listening "$p" || listening $((p + 1)); do p=$((p + 2)); done
	echo "$p"
}
# Away from the suite clusters' ports (16817/16900, 17817/17900, 18817/18900),
# and apart per Slurm version: the version legs run at once.
case ${RDZV_SLURM:-host} in 24.11) fbase=24917 ;; 26.05) fbase=25017 ;; *) fbase=24817 ;; esac
fctld=$(pick_ports "$fbase")
fslurmd=$((fctld + 1))

cat >"$conf" <<CONF
ClusterName=foreign
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$fctld
SlurmdPort=$fslurmd
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd-%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
MessageTimeout=20
PlugStackConfig=$work/plugstack.conf
NodeName=fx1 NodeAddr=127.0.0.1 NodeHostname=fx1 Port=$fslurmd CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=foreign Nodes=fx1 Default=YES MaxTime=INFINITE State=UP
CONF
: >"$work/plugstack.conf"

# ours PID: PID runs a Slurm daemon with this test's configuration path.
ours() { [ -n "$1" ] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$conf"; }
comm() { cat "/proc/$1/comm" 2>/dev/null; }
marked() { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -q '^RDZV_TEST_CLUSTER='; }
fsrun=
foreign_stop() {
	local p i
	[ -f "$work/release" ] || touch "$work/release"
	[ -n "$fsrun" ] && wait "$fsrun" 2>/dev/null
	for p in "${fslurmd_pid:-}" "${fctld_pid:-}"; do
		ours "$p" && kill "$p" 2>/dev/null
	done
	for i in $(seq 1 40); do
		ours "${fslurmd_pid:-}" || ours "${fctld_pid:-}" || break
		sleep 0.25
	done
	for p in "${fslurmd_pid:-}" "${fctld_pid:-}"; do
		ours "$p" && kill -9 "$p" 2>/dev/null
	done
	rm -rf "$work"
}
trap foreign_stop EXIT

# 1. The foreign Slurm, unmarked, as a production one would run.
env -u RDZV_TEST_CLUSTER slurmctld -f "$conf" -i >"$work/log/ctld.start" 2>&1
env -u RDZV_TEST_CLUSTER slurmd -f "$conf" -N fx1 >"$work/log/slurmd.start" 2>&1
for i in $(seq 1 120); do
	state=$(SLURM_CONF=$conf sinfo -h -N -o '%t' 2>/dev/null)
	[ "$state" = idle ] && break
	sleep 0.5
done
is "$state" idle "a foreign Slurm (ports $fctld/$fslurmd, no marker) is up with its node idle"
[ "$state" = idle ] || { diag "$(tail -n 5 "$work"/log/*.log)"; done_testing; exit 1; }
fctld_pid=$(cat "$work/run/slurmctld.pid" 2>/dev/null)
fslurmd_pid=$(cat "$work/run/slurmd-fx1.pid" 2>/dev/null)

# 2. A long step on it: it waits for this test's release file.
SLURM_CONF=$conf srun -N1 -n1 -t 30 bash -c \
	"echo started \$\$ \$PPID; for i in \$(seq 1 3000); do [ -e $work/release ] && break; sleep 0.2; done; echo finished" \
	>"$work/step.out" 2>&1 &
fsrun=$!
for i in $(seq 1 120); do grep -q '^started ' "$work/step.out" && break; sleep 0.5; done
read -r _ ftask fstepd < <(grep '^started ' "$work/step.out")
is "$(comm "${fstepd:-0}")" slurmstepd "the foreign step runs under its slurmstepd (pid ${fstepd:-none})"
ok "$(ours "$fctld_pid" && ours "$fslurmd_pid" && ! marked "$fctld_pid" && ! marked "$fslurmd_pid" \
	&& ! marked "${fstepd:-0}" && echo 0 || echo 1)" \
	"foreign slurmctld $fctld_pid, slurmd $fslurmd_pid and slurmstepd $fstepd carry no test-cluster marker"
before="$fctld_pid:$(comm "$fctld_pid") $fslurmd_pid:$(comm "$fslurmd_pid") $fstepd:$(comm "$fstepd") $ftask:$(comm "$ftask")"
alive() { echo "$fctld_pid:$(comm "$fctld_pid") $fslurmd_pid:$(comm "$fslurmd_pid") $fstepd:$(comm "$fstepd") $ftask:$(comm "$ftask")"; }

# 3. cluster.sh refuses what it does not own, naming it, and its refused
#    start cancels nothing.
cl() { env "$@" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" start 2>&1; }
free=$(pick_ports 25817)
out=$(cl RDZV_CLUSTER_DIR="$work/c1" RDZV_CTLD_PORT="$fctld" RDZV_SLURMD_PORT_BASE="$((free + 10))"); rc=$?
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "cluster.sh start refuses a taken slurmctld port (exit $rc)"
like "$out" "port $fctld \(slurmctld\) is in use" "... and names the port ($fctld)"
out=$(cl RDZV_CLUSTER_DIR="$work/c2" RDZV_CTLD_PORT="$free" RDZV_SLURMD_PORT_BASE="$((fslurmd - 1))"); rc=$?
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "cluster.sh start refuses a taken slurmd port (exit $rc)"
like "$out" "port $fslurmd \(slurmd n1\) is in use" "... and names the port ($fslurmd) and its node"
out=$(cl RDZV_CLUSTER_DIR="$work" RDZV_CTLD_PORT="$free" RDZV_SLURMD_PORT_BASE="$((free + 10))"); rc=$?
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "cluster.sh start refuses the foreign Slurm's state directory (exit $rc)"
like "$out" "state directory $work .*not a spank-rdzv test cluster" "... and names the directory"
env RDZV_CLUSTER_DIR="$work" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" stop >/dev/null 2>&1
is "$(SLURM_CONF=$conf squeue -h -o %T 2>/dev/null)" RUNNING "cluster.sh stop on the foreign directory cancels nothing"

# 4. The suite's cluster: start, use, stop.
e2e_start
trap 'e2e_stop; foreign_stop' EXIT
run_to 60 srun -N3 -n3 bash -c 'echo $SLURMD_NODENAME'
is "$rc:$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "0:n1 n2 n3 " "the suite's cluster runs a step on n1-n3"
e2e_stop
left=$(for p in /proc/[0-9]*; do
	tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "RDZV_TEST_CLUSTER=$RDZV_CLUSTER_DIR" \
		&& echo "${p#/proc/}:$(cat "$p/comm" 2>/dev/null)"
done 2>/dev/null | tr '\n' ' ')
is "$left" "" "the suite's cluster stopped: none of its marked daemons is left"

# 5. The foreign Slurm is untouched: the same processes, the step still
#    running, then ending normally when released.
is "$(alive)" "$before" "foreign slurmctld, slurmd, slurmstepd and task are the same processes"
is "$(SLURM_CONF=$conf squeue -h -o %T 2>/dev/null)" RUNNING "the foreign job is still running"
touch "$work/release"
wait "$fsrun"
frc=$?
fsrun=
is "$frc:$(grep -c '^finished' "$work/step.out")" "0:1" "the foreign step finishes normally (srun exit 0)"
[ "$frc" = 0 ] || diag "$(cat "$work/step.out")"

done_testing
