#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The liveness channel across a rolling upgrade (issue 45): this build adds
# srun's ACK of a node's HELLO (RDZVL1 ACK), the node's resends until it
# comes, the node's socket connected to the ACK's source and srun's check
# of each answer's address, on the same RDZVL1 wire. A release without
# them (RDZV_LIVENESS_PREVIOUS, default 67ebc76, the last commit before;
# built from git, so on the host leg of a git checkout) and this build, as
# srun and as the nodes, either way round: a node hung (SIGSTOP of its
# slurmd, slurmstepd and rank, the test's own) while the others' collective
# times out is still named by srun, and the healthy nodes are not.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/releases.sh"
. "$top_srcdir/tests/lib/live-nodes.sh"
e2e_require torch
app=$top_srcdir/tests/e2e/live_rank.py
work=$(mktemp -d /tmp/rdzv-0125.XXXXXX) || exit 1
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
new=$top_builddir/spank/.libs/rdzv.so
rev=${RDZV_LIVENESS_PREVIOUS:-67ebc76}
why=
build_release "$rev" "$work/old" || { [ -n "$why" ] && skip_all "$why"; }
ok "$?" "the release before ACK ($rev) builds"
old=$work/old/spank/.libs/rdzv.so
stopped=
trap live_cleanup EXIT
e2e_start
cd "$work" || exit 1
# srun's own plugstack, as tests/0118: a copy of the cluster's slurm.conf.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$work/srun-plugstack.conf|" "$SLURM_CONF" >"$work/srun-slurm.conf"
srun_with() { echo "required $1" >"$work/srun-plugstack.conf"; }
nodes_with() { sed -i "s|^required [^ ]*|required $1|" "$RDZV_CLUSTER_DIR/plugstack.conf"; }

# hung NAME: 3 ranks train, rank 2's node hangs; srun names it alone.
hung() {
	local d=$work/$1 node sd st rk
	mkdir -m 755 "$d"
	env SLURM_CONF="$work/srun-slurm.conf" srun -N3 --ntasks-per-node=1 --rdzv=torch $PY "$app" "$d" 10 >"$d/out" 2>&1 &
	srun_pid=$!
	wait_for 120 started "$d" 3; ok $? "$1: 3 ranks on 3 nodes train"
	read -r node sd st rk <<< "$(node_procs "$d" 2)"
	hang_until_srun_ends $sd $st $rk
	ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "... srun fails (exit $rc, $t ms after the stop)"
	like "$(cat "$d/out")" "rdzv: node $node does not answer \\(dead or hung: last heard [0-9.]+ s before the failure\\); the step was stopped" \
		"... naming the hung node $node"
	is "$(grep -c 'does not answer' "$d/out")" 1 "... in one line, no other node named"
	diag "$(grep '^rdzv:' "$d/out" | head -n 2)"
}

srun_with "$old"
nodes_with "$new"
hung "the release before ACK as srun, this build's nodes"
srun_with "$new"
nodes_with "$old"
hung "this build's srun, the nodes of the release before ACK"
nodes_with "$new"
done_testing
