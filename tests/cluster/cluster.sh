#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cluster.sh: a throwaway Slurm on this one machine, for end-to-end tests.
#
#   cluster.sh start      slurmctld + one slurmd per node (slurmd -N), waits until idle
#   cluster.sh stop       stops them all, cancels jobs, leaves nothing running
#   cluster.sh plugstack [ARGS...]   rewrites plugstack.conf (read anew by each step)
#   cluster.sh status     prints sinfo
#
# Nodes n1..nN (RDZV_NODES, default 3), each in its own network namespace
# (below), CPUS each (RDZV_NODE_CPUS, default 8, more
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
#   RDZV_NODE_PLUGSTACK_ARGS  when set, a second line loads rdzv_node.so
#                         (beside RDZV_PLUGIN) with these arguments
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
#   RDZV_TOPOLOGY_YAML    the text of a topology.yaml (25.05+: several named
#                         topologies; it wins over topology.conf)
#   RDZV_PART_DEBUG_OPTS, RDZV_PART_GPU_OPTS
#                         more options of partition debug or gpu (e.g. Topology=NAME)
#   RDZV_CONTAIN_SPANK=1  (Slurm 24.05+) each job in its own mount namespace with
#                         a private /dev/shm (job_container/tmpfs, named
#                         namespace/tmpfs from 25.11; BasePath under /run/rdzv-ns) and
#                         SlurmdParameters=contain_spank: user_init runs inside it
# The Slurm version is read from `slurmd -V`: from 24.05 on, a cgroup.conf with
# CgroupPlugin=disabled sits beside slurm.conf (24.05 added the value; 24.11+
# initialise cgroups unconditionally otherwise and fail without them).
# Writes $RDZV_CLUSTER_DIR/env.sh to source: SLURM_CONF and PATH.
#
# A network per node: nodes that share one network stack hide
# addressing bugs (a rendezvous aimed at the wrong node still reaches rank 0's
# store). Each slurmd runs in its own network namespace "rdzvL-nK" (and with
# it slurmstepd and the tasks): a veth pair whose outer end sits on the
# cluster's bridge "rdzvbrL" (198.18.L.254/24, where slurmctld and srun reach
# the nodes), an inner "eth0" with 198.18.L.K/24, loopback, and a second
# interface "ib0" (198.19.L.K/24, a veth whose outer end "riL-nK" is attached
# to nothing: it reaches no other node, as a node's second network would not). Names resolve per node through
# /etc/netns/rdzvL-nK/hosts (bound over /etc/hosts for the node's slurmd): the
# machine's own lines plus "198.18.L.K nK". 198.18.0.0/15 is the range set
# aside for network test benches (RFC 2544); only addresses inside these
# namespaces are used. L is the cluster's network number: 1 host, 2 24.11,
# 3 26.05 (RDZV_NET_ID overrides), so the legs' clusters never share a
# subnet. What start creates is recorded in $dir/net.list; stop removes exactly
# that (after a failure too: e2e.sh stops on exit, and start stops first).
#   RDZV_NETNS=0          the old layout instead: every node in this machine's
#                         network stack on 127.0.1.K (host /etc/hosts lines)
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

netns=${RDZV_NETNS:-1}
case ${RDZV_NET_ID:-${RDZV_SLURM:-host}} in
host) net_id=1 ;; 24.11) net_id=2 ;; 26.05) net_id=3 ;;
*[!0-9]* | '') die "RDZV_NET_ID must be a number 1-250" ;;
*) net_id=$RDZV_NET_ID ;;
esac
bridge=rdzvbr$net_id
ctld_addr=127.0.0.1
[ "$netns" = 1 ] && ctld_addr=198.18.$net_id.254
# node_addr K: the address of node nK (K=9: the ghost node).
node_addr() { if [ "$netns" = 1 ]; then echo "198.18.$net_id.$1"; else echo "127.0.1.$1"; fi; }
ns_of() { echo "rdzv$net_id-$1"; }

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
		# The admin's second plugin (job prolog and epilog), beside rdzv.so.
		[ -z "${RDZV_NODE_PLUGSTACK_ARGS+set}" ] \
			|| echo "required ${plugin%/*}/rdzv_node.so $RDZV_NODE_PLUGSTACK_ARGS" >> "$dir/plugstack.conf"
	fi
}

write_conf() {
	local k g
	mkdir -p "$dir/state" "$dir/log" "$dir/spool" "$dir/dev" "$dir/run"
	{
		cat <<CONF
ClusterName=rdzvtest
SlurmctldHost=localhost($ctld_addr)
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
SlurmdTimeout=300
PlugStackConfig=$dir/plugstack.conf
FirstJobId=$first_job_id
CONF
		[ "${RDZV_GHOST_NODE:-0}" = 1 ] \
			&& echo "NodeName=ghost NodeAddr=$(node_addr 9) NodeHostname=ghost Port=$((slurmd_port_base + 99)) CPUs=$cpus RealMemory=4000 State=UNKNOWN"
		for k in $(seq 1 "$nodes"); do
			g=$(gpus_of "$k")
			if [ "$g" -gt 0 ]; then
				echo "NodeName=n$k NodeAddr=$(node_addr "$k") NodeHostname=n$k Port=$((slurmd_port_base + k)) CPUs=$cpus RealMemory=4000 Gres=gpu:$g State=UNKNOWN"
			else
				echo "NodeName=n$k NodeAddr=$(node_addr "$k") NodeHostname=n$k Port=$((slurmd_port_base + k)) CPUs=$cpus RealMemory=4000 State=UNKNOWN"
			fi
		done
		echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP${RDZV_PART_DEBUG_OPTS:+ $RDZV_PART_DEBUG_OPTS}"
		echo "PartitionName=gpu Nodes=n[1-$nodes] MaxTime=INFINITE State=UP${RDZV_PART_GPU_OPTS:+ $RDZV_PART_GPU_OPTS}"
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
	if [ -n "${RDZV_TOPOLOGY_YAML:-}" ]; then
		printf '%s\n' "$RDZV_TOPOLOGY_YAML" > "$dir/topology.yaml"
	else
		rm -f "$dir/topology.yaml"
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
export RDZV_NODE_NET=$(node_addr 0 | sed 's/\.0$//')
export RDZV_NODE_NETNS=$netns RDZV_NET_ID=$net_id
ENV
	return 0
}

hosts_lines() {
	local k
	[ "$netns" = 1 ] && return 0
	for k in $(seq 1 "$nodes"); do
		grep -qE "^127\.0\.1\.$k[[:space:]]+n$k([[:space:]]|\$)" /etc/hosts \
			|| echo "127.0.1.$k n$k" >> /etc/hosts
	done
}

# net_up: the bridge, and per node (and the ghost) a namespace, veth pair,
# eth0, ib0 and hosts file; each thing is recorded in $dir/net.list before it
# is made, so that net_down removes it even when a later step fails.
net_up() {
	local k ns veth hosts base
	[ "$netns" = 1 ] || return 0
	command -v ip >/dev/null || die "ip (iproute2) not installed"
	: > "$dir/net.list"
	ip link show "$bridge" >/dev/null 2>&1 && die "bridge $bridge exists but is not this cluster's (another cluster of net $net_id?); set RDZV_NET_ID"
	echo "link $bridge" >> "$dir/net.list"
	ip link add "$bridge" type bridge || die "cannot create bridge $bridge"
	ip addr add "198.18.$net_id.254/24" dev "$bridge" && ip link set "$bridge" up || die "cannot bring up $bridge"
	# The machine's own names, without lines for the test nodes' names.
	base=$(grep -vE '[[:space:]](n[0-9]+|ghost)([[:space:]]|$)' /etc/hosts)
	for k in $(seq 1 "$nodes") ${RDZV_GHOST_NODE:+9}; do
		if [ "$k" = 9 ] && [ -n "${RDZV_GHOST_NODE:-}" ]; then ns=$(ns_of ghost); else ns=$(ns_of "n$k"); fi
		veth=rz$net_id-${ns#rdzv$net_id-}
		ip netns list 2>/dev/null | grep -qw "^$ns" && die "network namespace $ns exists but is not this cluster's; set RDZV_NET_ID"
		echo "netns $ns" >> "$dir/net.list"
		echo "etc /etc/netns/$ns" >> "$dir/net.list"
		ip netns add "$ns" || die "cannot create network namespace $ns"
		# Its identity, so that stop finds what still runs in it from any
		# mount namespace (a version leg's /run/netns is its own).
		echo "nsino $(stat -L -c %i "/run/netns/$ns")" >> "$dir/net.list"
		echo "veth $veth" >> "$dir/net.list"
		echo "veth ${veth/rz/ri}" >> "$dir/net.list"
		ip link add "$veth" type veth peer name eth0 netns "$ns" || die "cannot create $veth"
		ip link set "$veth" master "$bridge" up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "198.18.$net_id.$k/24" dev eth0
		ip -n "$ns" link set eth0 up
		# The second network: a veth pair whose outer end is attached to
		# nothing (not every kernel has dummy links).
		ip link add "${veth/rz/ri}" type veth peer name ib0 netns "$ns" || die "cannot create ${veth/rz/ri}"
		ip link set "${veth/rz/ri}" up
		ip -n "$ns" addr add "198.19.$net_id.$k/24" dev ib0
		ip -n "$ns" link set ib0 up || die "cannot configure $ns"
		mkdir -p "/etc/netns/$ns"
		hosts=$base
		for j in $(seq 1 "$nodes"); do hosts+=$'\n'"198.18.$net_id.$j n$j"; done
		printf '%s\n' "$hosts" > "/etc/netns/$ns/hosts"
	done
}

# ns_pids: processes still inside this cluster's node namespaces. Every one
# was started there by this cluster's slurmd (the namespaces are made for it
# alone): a slurmstepd whose step outlived it (26.05's slurmstepd does not
# carry the marker in its environment), a task that ignored SIGTERM. Left
# alive, one pins its namespace and the veth in it, and the next start fails.
ns_pids() {
	local inos p
	inos=$(awk '$1 == "nsino" {printf " %s", $2}' "$dir/net.list" 2>/dev/null)
	[ -n "$inos" ] || return 0
	# One stat for every process (a fork per process took seconds on a
	# loaded machine, at every start and stop).
	for p in $(stat -L -c '%i %n' /proc/[0-9]*/ns/net 2>/dev/null \
		| awk -v inos="$inos " 'index(inos, " " $1 " ") { split($2, a, "/"); print a[3] }'); do
		echo "$p:$(start_time "$p")"
	done
}

# net_down: end what still runs in the namespaces, remove what net.list
# records, then the list: the veth pairs first (deleting one end deletes
# both at once; left to a namespace's deletion they go in the kernel's own
# time, and a check or the next start right after would still see them),
# then the namespaces, then the bridge.
net_down() {
	local what name left i
	[ -f "$dir/net.list" ] || return 0
	left=$(ns_pids)
	if [ -n "$left" ]; then
		kill $(alive $left) 2>/dev/null
		for i in $(seq 1 20); do [ -z "$(alive $left)" ] && break; sleep 0.25; done
		[ -n "$(alive $left)" ] && kill -9 $(alive $left) 2>/dev/null
		for i in $(seq 1 20); do [ -z "$(alive $left)" ] && break; sleep 0.25; done
	fi
	while read -r what name; do
		[ "$what" = veth ] && ip link del "$name" 2>/dev/null
	done < "$dir/net.list"
	while read -r what name; do
		case $what in
		netns) ip netns del "$name" 2>/dev/null ;;
		etc) case $name in /etc/netns/rdzv*) rm -rf "$name" ;; esac ;;
		esac
	done < "$dir/net.list"
	while read -r what name; do
		[ "$what" = link ] && ip link del "$name" 2>/dev/null
	done < "$dir/net.list"
	rm -f "$dir/net.list"
}

# in_node NODE CMD...: run CMD in NODE's network namespace, with its hosts
# file bound over /etc/hosts in a mount namespace of its own, or here without
# namespaces. Not "ip netns exec": it mounts a fresh /sys without
# /sys/fs/cgroup, which slurmd needs.
in_node() {
	local node=$1 ns
	shift
	[ "$netns" = 1 ] || { "$@"; return; }
	ns=$(ns_of "$node")
	nsenter --net="/run/netns/$ns" unshare -m --propagation slave \
		sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "/etc/netns/$ns/hosts" "$@"
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
	local comms envs p
	# Two greps in all: the Slurm daemons by name, then those of them whose
	# environment holds the marker.
	# (grep's status is 2 when a process vanished meanwhile: not used.)
	comms=$(grep -lxE 'slurmctld|slurmd|slurmstepd' /proc/[0-9]*/comm 2>/dev/null)
	[ -n "$comms" ] || return 0
	envs=$(printf '%s\n' $comms | sed 's#/comm$#/environ#')
	for p in $(grep -lzxF "RDZV_TEST_CLUSTER=$marker" $envs 2>/dev/null); do
		p=${p#/proc/}
		p=${p%/environ}
		echo "$p:$(start_time "$p")"
	done
}

start_time() { # start_time PID: its start time, empty once gone
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
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
	net_down
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
	net_up
	RDZV_TEST_CLUSTER=$marker slurmctld -f "$dir/slurm.conf" -i || die "slurmctld failed: $(tail -n 5 "$dir/log/slurmctld.log")"
	for k in $(seq 1 "$nodes") ${RDZV_GHOST_NODE:+ghost}; do
		[ "$k" = ghost ] || k=n$k
		mkdir -p "$dir/spool/$k"
		RDZV_TEST_CLUSTER=$marker in_node "$k" slurmd -f "$dir/slurm.conf" -N "$k" || die "slurmd $k failed: $(tail -n 5 "$dir/log/slurmd-$k.log")"
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
