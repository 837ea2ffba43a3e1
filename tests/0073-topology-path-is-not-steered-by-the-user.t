#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The topology XML that slurmstepd parses (with hwloc, in user_init, in a
# process whose saved uid is root: doc/privilege.md) is the admin's
# topology= path with %n replaced by this node's name as Slurm knows it. A
# user's environment must not steer it elsewhere: SLURMD_NODENAME in the
# job's environment is the user's at user_init time (slurmstepd sets the
# real one only in each task, later; inside a batch script it is the
# batch host's name). Found by this test, fixed in spank/bind.c (d8bb17e).
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
done_testing
