#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The topology XML that slurmstepd parses (with hwloc, in user_init, in a
# process whose saved uid is root: doc/privilege.md) is the admin's
# topology= path with %n replaced by this node's name as Slurm knows it. A
# user's environment must not steer it elsewhere: SLURMD_NODENAME in the
# job's environment is the user's at user_init time (slurmstepd sets the
# real one only in each task, later; inside a batch script it is the
# batch host's name). Found by this test, fixed in spank/bind.c (d8bb17e).
# Nor does the step's node list, which the client assembles (issue 45): %n
# is slurmd's own name (slurmd -N included), which slurmstepd puts in its
# own environment before loading plugins (the harness's -H).
. "$top_srcdir/tests/lib/tap.sh"
topos=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
evil_src=$topos/aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml
mine_src=$topos/hwloc__tests__hwloc__xml__nvidiaDGX2.xml
[ -f "$evil_src" ] && [ -f "$mine_src" ] || { echo "Bail out! real topologies not found in $topos: they belong to the repository (tests/topo/fixtures)"; exit 1; }
. "$top_srcdir/tests/harness/harness.sh"

d=$h_work/site
mkdir -p "$d/topo"
cp "$mine_src" "$d/topo/localhost.xml"  # the admin's file for this node
cp "$evil_src" "$d/evil.xml"            # a file outside the admin's directory
mine_gpu=0000:34:00.0                   # first GPU of each file
evil_gpu=0000:10:1c.0
step="-N 1 -t 1 -l 1 -e SLURM_STEP_NODELIST=localhost -e SLURM_STEP_GPUS=0 -o rdzv=torch -o rdzv-bind=gpu,verbose"

h "topology=%n, no SLURMD_NODENAME" $step "$plugin" "topology=$d/topo/%n.xml"
like "$err" "task 0: gpu 0 $mine_gpu" "%n is the node's name: the admin's localhost.xml is used"

h "topology=%n, SLURMD_NODENAME=../evil" $step -e SLURMD_NODENAME=../evil "$plugin" "topology=$d/topo/%n.xml"
unlike "$err" "$evil_gpu" "SLURMD_NODENAME=../evil in the job's environment does not make slurmstepd parse $d/evil.xml"
like "$err" "task 0: gpu 0 $mine_gpu" "... the admin's file for this node is used instead"
h "topology=%n, SLURMD_NODENAME=other" $step -e SLURMD_NODENAME=n9 "$plugin" "topology=$d/topo/%n.xml"
like "$err" "task 0: gpu 0 $mine_gpu" "a user's SLURMD_NODENAME=n9 (or a batch host's) does not replace this node's name in %n"

# A forged list that agrees with itself: this node is "$me" in it (a name
# that resolves, so the step runs), and slurmd's own name is localhost.
me=$(hostname -s 2>/dev/null)
if getent hosts "$me" >/dev/null 2>&1 && [ "$me" != localhost ] && [ "${me#*/}" = "$me" ]; then
	cp "$evil_src" "$d/topo/$me.xml"
	h "topology=%n, a forged SLURM_STEP_NODELIST" -N 1 -t 1 -l 1 -e SLURM_STEP_NODELIST="$me" \
		-e SLURM_STEP_GPUS=0 -o rdzv=torch -o rdzv-bind=gpu,verbose "$plugin" "topology=$d/topo/%n.xml"
	unlike "$err" "$evil_gpu" "a client's SLURM_STEP_NODELIST=$me does not make slurmstepd parse $me.xml"
	like "$err" "task 0: gpu 0 $mine_gpu" "... slurmd's own name (localhost) chooses the file"
	rm -f "$d/topo/$me.xml"
else
	skip "this host's short name ($me) does not resolve or is localhost"
fi
cp "$mine_src" "$d/topo/n7.xml"
cp "$evil_src" "$d/topo/localhost.xml"
h "topology=%n, slurmd -N n7" -H n7 $step "$plugin" "topology=$d/topo/%n.xml"
like "$err" "task 0: gpu 0 $mine_gpu" "slurmd -N n7: %n is n7, slurmd's name, not the host's or the list's"
done_testing
