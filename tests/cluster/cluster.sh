#!/bin/bash
# cluster.sh: a throwaway Slurm on this one machine, for end-to-end tests.
#
#   cluster.sh start      slurmctld + one slurmd per node (slurmd -N), waits until idle
#   cluster.sh stop       stops them all, cancels jobs, leaves nothing running
#   cluster.sh plugstack [ARGS...]   rewrites plugstack.conf (read anew by each step)
#   cluster.sh status     prints sinfo
#
# Nodes n1..nN (RDZV_NODES, default 3) with their own loopback addresses
# 127.0.1.K and /etc/hosts lines, CPUS each (RDZV_NODE_CPUS, default 8, more
# than the host has: SlurmdParameters=config_overrides), fake GPUs through
# gres: character devices made with mknod (major 195, as NVIDIA's) and a
# gres.conf with AutoDetect=off, so Slurm sets CUDA_VISIBLE_DEVICES and
# SLURM_STEP_GPUS. RDZV_NODE_GPUS="8 4 4" gives per-node GPU counts
# (default 4 each). No munge (auth/none, cred/none), no cgroups
# (proctrack/pgid, task/none). Partitions: debug (default) and gpu, both all nodes.
#
# Environment:
#   RDZV_CLUSTER_DIR      state directory (default /tmp/rdzv-cluster)
#   RDZV_PLUGIN           rdzv.so to load (default $top_builddir/spank/.libs/rdzv.so)
#   RDZV_PLUGIN_REQUIRED  required|optional (default required)
#   RDZV_PLUGSTACK_ARGS   plugstack arguments at start (default empty)
#   RDZV_SLURM_EXTRA      extra slurm.conf lines (e.g. "MpiParams=ports=21000-21999")
#   RDZV_NO_PLUGIN=1      start without the plugin (benchmarks' baseline)
#   RDZV_GRES_CONF        a gres.conf to use instead of the generated one (its device files are the caller's)
#   RDZV_CGROUP_CONF      a cgroup.conf to install next to slurm.conf (removed again when unset)
#   RDZV_GHOST_NODE=1     add node "ghost" (127.0.1.9, first in node order) whose
#                         name resolves nowhere, alone with n1 in partition "ghost"
#   RDZV_CTLD_PORT, RDZV_SLURMD_PORT_BASE, RDZV_FIRST_JOB_ID
#                         ports and first job id (tests/lib/e2e.sh gives each
#                         Slurm version its own, so clusters never meet)
#   RDZV_SLURM            host|24.11|26.05: tags this cluster's daemons (below)
#   RDZV_GRES_FLAGS       Flags= of the GPU gres.conf lines (e.g. env_uuid, 26.05+)
#   RDZV_TOPOLOGY_CONF    the text of a topology.conf (SwitchName= or BlockName=
#                         lines) written beside slurm.conf; its TopologyPlugin= goes
#                         in RDZV_SLURM_EXTRA
#   RDZV_CONTAIN_SPANK=1  (Slurm 24.05+) each job in its own mount namespace with
#                         a private /dev/shm (job_container/tmpfs, named
#                         namespace/tmpfs from 25.11; BasePath under /run/rdzv-ns) and
#                         SlurmdParameters=contain_spank: user_init runs inside it
# The Slurm version is read from `slurmd -V`: from 24.05 on, a cgroup.conf with
# CgroupPlugin=disabled sits beside slurm.conf (24.05 added the value; 24.11+
# initialise cgroups unconditionally otherwise and fail without them).
# Writes $RDZV_CLUSTER_DIR/env.sh to source: SLURM_CONF and PATH.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/_build}
dir=${RDZV_CLUSTER_DIR:-/tmp/rdzv-cluster}
nodes=${RDZV_NODES:-3}
cpus=${RDZV_NODE_CPUS:-8}
plugin=${RDZV_PLUGIN:-$top_builddir/spank/.libs/rdzv.so}
required=${RDZV_PLUGIN_REQUIRED:-required}
ctld_port=${RDZV_CTLD_PORT:-16817}
slurmd_port_base=${RDZV_SLURMD_PORT_BASE:-16900}
first_job_id=${RDZV_FIRST_JOB_ID:-1}
contain_spank=
ns_base=/run/rdzv-ns/${dir//\//_}
[ "${RDZV_CONTAIN_SPANK:-0}" = 1 ] && contain_spank=yes
# The marker every daemon of this cluster carries (see own_pids). A cluster of
# another version (in a Debian 13 root sharing this PID namespace, or from a
# prefix) is tagged with its version too, so even a state directory of the
# same name never lets one cluster's stop signal another's daemons.
marker=$dir
[ "${RDZV_SLURM:-host}" = host ] || marker="$dir@$RDZV_SLURM"

die() { echo "cluster.sh: $*" >&2; exit 1; }

# slurm_at_least MAJOR.MINOR: is the slurmd on PATH that release or newer?
slurm_at_least() {
	local v
	v=$(slurmd -V 2>/dev/null | awk '{print $2}')
	[ -n "$v" ] || return 1
	[ "$(printf '%s\n%s\n' "$1" "$v" | sort -V | head -n 1)" = "$1" ]
}

gpus_of() { # gpus_of K -> GPU count of node K (1-based)
	local k=$1 list=(${RDZV_NODE_GPUS:-})
	if [ ${#list[@]} -ge "$k" ]; then echo "${list[$((k - 1))]}"; else echo 4; fi
}

write_plugstack() {
	if [ "${RDZV_NO_PLUGIN:-0}" = 1 ]; then
		: > "$dir/plugstack.conf"
	else
		echo "$required $plugin $*" > "$dir/plugstack.conf"
	fi
}

write_conf() {
	local k g
	mkdir -p "$dir/state" "$dir/log" "$dir/spool" "$dir/dev" "$dir/run"
	{
		cat <<CONF
ClusterName=rdzvtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port_base
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmdDebug=info
SlurmctldDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides${contain_spank:+,contain_spank}
GresTypes=gpu
ReturnToService=2
SchedulerType=sched/backfill
InactiveLimit=0
KillWait=5
MinJobAge=60
MessageTimeout=20
SlurmdTimeout=120
PlugStackConfig=$dir/plugstack.conf
FirstJobId=$first_job_id
CONF
		[ "${RDZV_GHOST_NODE:-0}" = 1 ] \
			&& echo "NodeName=ghost NodeAddr=127.0.1.9 NodeHostname=ghost Port=$((slurmd_port_base + 99)) CPUs=$cpus RealMemory=4000 State=UNKNOWN"
		for k in $(seq 1 "$nodes"); do
			g=$(gpus_of "$k")
			if [ "$g" -gt 0 ]; then
				echo "NodeName=n$k NodeAddr=127.0.1.$k NodeHostname=n$k Port=$((slurmd_port_base + k)) CPUs=$cpus RealMemory=4000 Gres=gpu:$g State=UNKNOWN"
			else
				echo "NodeName=n$k NodeAddr=127.0.1.$k NodeHostname=n$k Port=$((slurmd_port_base + k)) CPUs=$cpus RealMemory=4000 State=UNKNOWN"
			fi
		done
		echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP"
		echo "PartitionName=gpu Nodes=n[1-$nodes] MaxTime=INFINITE State=UP"
		[ "${RDZV_GHOST_NODE:-0}" = 1 ] && echo "PartitionName=ghost Nodes=ghost,n1 MaxTime=INFINITE State=UP"
		if [ -n "$contain_spank" ]; then
			if slurm_at_least 25.11; then echo "NamespaceType=namespace/tmpfs"; else echo "JobContainerType=job_container/tmpfs"; fi
			echo "PrologFlags=Contain"
		fi
		[ -n "${RDZV_SLURM_EXTRA:-}" ] && printf '%s\n' "$RDZV_SLURM_EXTRA"
	} > "$dir/slurm.conf"
	if [ -n "$contain_spank" ]; then
		# One BasePath per slurmd (the plugin does not add the node name),
		# outside /dev/shm. Only /dev/shm is private: the cluster lives in /tmp.
		for k in $(seq 1 "$nodes"); do
			mkdir -p "$ns_base/n$k"
			echo "NodeName=n$k AutoBasePath=true BasePath=$ns_base/n$k Dirs=/dev/shm"
		done > "$dir/job_container.conf"
	else
		rm -f "$dir/job_container.conf"
	fi
	{
		echo "AutoDetect=off"
		for k in $(seq 1 "$nodes"); do
			g=$(gpus_of "$k")
			[ "$g" -gt 0 ] || continue
			mkdir -p "$dir/dev/n$k"
			for i in $(seq 0 $((g - 1))); do
				[ -e "$dir/dev/n$k/nvidia$i" ] || mknod "$dir/dev/n$k/nvidia$i" c 195 "$i"
			done
			echo "NodeName=n$k Name=gpu File=$dir/dev/n$k/nvidia[0-$((g - 1))]${RDZV_GRES_FLAGS:+ Flags=$RDZV_GRES_FLAGS}"
		done
	} > "$dir/gres.conf"
	[ -n "${RDZV_GRES_CONF:-}" ] && cp "$RDZV_GRES_CONF" "$dir/gres.conf"
	if [ -n "${RDZV_TOPOLOGY_CONF:-}" ]; then
		printf '%s\n' "$RDZV_TOPOLOGY_CONF" > "$dir/topology.conf"
	else
		rm -f "$dir/topology.conf"
	fi
	if [ -n "${RDZV_CGROUP_CONF:-}" ]; then
		{ echo "# from RDZV_CGROUP_CONF"; cat "$RDZV_CGROUP_CONF"; } > "$dir/cgroup.conf"
	elif slurm_at_least 24.05; then
		echo "CgroupPlugin=disabled" > "$dir/cgroup.conf"
	else
		rm -f "$dir/cgroup.conf"
	fi
	write_plugstack ${RDZV_PLUGSTACK_ARGS:-}
	cat > "$dir/env.sh" <<ENV
export SLURM_CONF=$dir/slurm.conf
export RDZV_CLUSTER_DIR=$dir
ENV
	return 0
}

hosts_lines() {
	local k
	for k in $(seq 1 "$nodes"); do
		grep -qE "^127\.0\.1\.$k[[:space:]]+n$k([[:space:]]|\$)" /etc/hosts \
			|| echo "127.0.1.$k n$k" >> /etc/hosts
	done
}

wait_idle() {
	local i state
	for i in $(seq 1 120); do
		state=$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -o '%t' 2>/dev/null | sort -u | tr '\n' ' ')
		[ "$state" = "idle " ] && return 0
		sleep 0.5
	done
	echo "cluster.sh: nodes not idle after 60 s: $state" >&2
	SLURM_CONF=$dir/slurm.conf sinfo -N >&2
	tail -n 20 "$dir"/log/*.log >&2
	return 1
}

# Every daemon of this cluster is started with RDZV_TEST_CLUSTER=$marker in its
# environment; slurmd passes its environment to the slurmstepd it starts. Only
# processes that carry this exact marker are ever signalled: a production
# slurmd or slurmstepd on the same machine, or another test cluster, never is.
# Each is printed as PID:STARTTIME (field 22 of /proc/PID/stat), so a process
# found once is followed by identity, never confused with a reused PID.
own_pids() {
	local p comm
	for p in /proc/[0-9]*; do
		comm=$(cat "$p/comm" 2>/dev/null) || continue
		case $comm in slurmctld | slurmd | slurmstepd) ;; *) continue ;; esac
		tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "RDZV_TEST_CLUSTER=$marker" \
			&& echo "${p#/proc/}:$(start_time "${p#/proc/}")"
	done
}

start_time() { # start_time PID: its start time, empty once gone
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	set -- $stat
	[ "$1" = Z ] || echo "${20}"
}

# alive PID:START...: the PIDs among them still running as the same process.
# A process is followed by identity, not by its marker: a multi-threaded
# daemon whose main thread has exited (Slurm 24.11's slurmctld while it shuts
# down) has an unreadable environ while other threads still hold its ports.
alive() {
	local e
	for e in "$@"; do
		[ "$(start_time "${e%%:*}")" = "${e#*:}" ] && echo "${e%%:*}"
	done
}

stop() {
	local found more new i left
	[ -d "$dir" ] || return 0
	# Only a directory this script made is acted on: scancel with another
	# Slurm's slurm.conf would cancel that Slurm's jobs (tests/0094).
	if [ "$(cat "$dir/.owner" 2>/dev/null)" != "spank-rdzv test cluster" ]; then
		echo "cluster.sh: $dir is not a spank-rdzv test cluster's state directory: nothing stopped" >&2
		return 1
	fi
	[ -f "$dir/slurm.conf" ] && SLURM_CONF=$dir/slurm.conf timeout 10 scancel --full -u root >/dev/null 2>&1
	found=$(own_pids)
	left=$(alive $found)
	[ -n "$left" ] && kill $left 2>/dev/null
	for i in $(seq 1 40); do
		sleep 0.25
		# slurmstepds a dying slurmd started meanwhile
		more=$(own_pids)
		new=$(printf '%s\n' $more | grep -vxF -f <(printf '%s\n' $found))
		if [ -n "$new" ]; then
			kill $(alive $new) 2>/dev/null
			found="$found $new"
		fi
		[ -z "$(alive $found)" ] && break
	done
	left=$(alive $found)
	[ -n "$left" ] && kill -9 $left 2>/dev/null
	for i in $(seq 1 20); do
		[ -z "$(alive $found)" ] && break
		sleep 0.25
	done
	rm -f "$dir"/run/*.pid
	# Job namespaces (RDZV_CONTAIN_SPANK) left mounted under our own base.
	findmnt -rn -o TARGET 2>/dev/null | grep "^$ns_base/" | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	return 0
}

# A port or state directory that another process holds is refused, never
# taken over: the other holder may be a production Slurm.
check_free() {
	local k held
	held=$(ss -Htlnp 2>/dev/null | awk -v p=":$ctld_port\$" '$4 ~ p')
	[ -z "$held" ] || die "port $ctld_port (slurmctld) is in use: $held; set RDZV_CTLD_PORT"
	for k in $(seq 1 "$nodes"); do
		held=$(ss -Htlnp 2>/dev/null | awk -v p=":$((slurmd_port_base + k))\$" '$4 ~ p')
		[ -z "$held" ] || die "port $((slurmd_port_base + k)) (slurmd n$k) is in use: $held; set RDZV_SLURMD_PORT_BASE"
	done
	if [ -f "$dir/.owner" ] && [ "$(cat "$dir/.owner")" != "spank-rdzv test cluster" ]; then
		die "state directory $dir belongs to something else; set RDZV_CLUSTER_DIR"
	fi
	if [ -f "$dir/slurm.conf" ] && [ ! -f "$dir/.owner" ]; then
		die "state directory $dir exists and is not a spank-rdzv test cluster's; set RDZV_CLUSTER_DIR"
	fi
}

start() {
	local k
	[ "$(id -u)" = 0 ] || die "must run as root (slurmd, mknod, /etc/hosts)"
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null || die "slurmctld/slurmd not installed"
	[ "${RDZV_NO_PLUGIN:-0}" = 1 ] || [ -f "$plugin" ] || die "plugin $plugin not built"
	stop
	check_free
	mkdir -p "$dir" && echo "spank-rdzv test cluster" >"$dir/.owner"
	rm -rf "$dir/state" "$dir/spool" "$dir/log"
	write_conf
	hosts_lines
	RDZV_TEST_CLUSTER=$marker slurmctld -f "$dir/slurm.conf" -i || die "slurmctld failed: $(tail -n 5 "$dir/log/slurmctld.log")"
	for k in $(seq 1 "$nodes") ${RDZV_GHOST_NODE:+ghost}; do
		[ "$k" = ghost ] || k=n$k
		mkdir -p "$dir/spool/$k"
		RDZV_TEST_CLUSTER=$marker slurmd -f "$dir/slurm.conf" -N "$k" || die "slurmd $k failed: $(tail -n 5 "$dir/log/slurmd-$k.log")"
	done
	wait_idle
}

case "${1:-}" in
start) start ;;
stop) stop ;;
restart) stop; start ;;
plugstack) shift; write_plugstack "$@" ;;
status) SLURM_CONF=$dir/slurm.conf sinfo -N ;;
*) echo "usage: $0 start|stop|restart|plugstack [ARGS...]|status" >&2; exit 2 ;;
esac
