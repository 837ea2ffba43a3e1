#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rdzv-hostfile writes one "host slots=N" line per node of the allocation, in
# Slurm's node order, with N from the GPUs per node, else the tasks per node;
# bad or missing sources are refused with the variable named, and no file is
# left behind.
. "$top_srcdir/tests/lib/tap.sh"
h="$top_builddir/helpers/rdzv-hostfile"
[ -x "$h" ] || skip_all "helpers/rdzv-hostfile not built"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
run() { # run [VAR=value...] [helper args...]
	local vars=()
	while [ $# -gt 0 ] && [[ $1 == [A-Z]*=* ]]; do vars+=("$1"); shift; done
	out=$(env -i "${vars[@]}" "$h" "$@" 2>&1)
	rc=$?
}
nl='
'

run SLURM_JOB_NODELIST='n[1-2],gpu[08-10]' SLURM_GPUS_PER_NODE=h100:8
is "$out" "n1 slots=8${nl}n2 slots=8${nl}gpu08 slots=8${nl}gpu09 slots=8${nl}gpu10 slots=8" \
	"--gpus-per-node=h100:8 on n[1-2],gpu[08-10]: every node, zero padding kept, 8 slots"
run SLURM_JOB_NODELIST='n[1-2]' SLURM_GPUS_PER_NODE=a100:2,v100:1
is "$out" "n1 slots=3${nl}n2 slots=3" "several GPU types per node are summed"
run SLURM_JOB_NODELIST='n[1-3]' SLURM_TASKS_PER_NODE='2(x2),1'
is "$out" "n1 slots=2${nl}n2 slots=2${nl}n3 slots=1" "without GPUs: tasks per node, node by node (2(x2),1)"
run SLURM_JOB_NODELIST='n[1-3]' SLURM_STEP_NODELIST='n[2-3]' SLURM_TASKS_PER_NODE='2(x3)' SLURM_STEP_TASKS_PER_NODE='4,1'
is "$out" "n2 slots=4${nl}n3 slots=1" "inside a step the step's nodes and tasks win over the job's"
run SLURM_JOB_NODELIST='a,b' SLURM_JOB_GPUS=0,1,2
is "$out" "a slots=3${nl}b slots=3" "the batch node's GPU list (SLURM_JOB_GPUS) counts for every node"
run SLURM_JOB_NODELIST='a,b' SLURM_GPUS_PER_NODE=4 SLURM_TASKS_PER_NODE='1(x2)'
is "$out" "a slots=4${nl}b slots=4" "auto prefers GPUs over tasks"
run SLURM_JOB_NODELIST='a,b' SLURM_GPUS_PER_NODE=4 SLURM_TASKS_PER_NODE='1(x2)' --slots=tasks
is "$out" "a slots=1${nl}b slots=1" "--slots=tasks forces tasks"
run SLURM_JOB_NODELIST='a' --slots=7
is "$out" "a slots=7" "--slots=N gives N everywhere"
run SLURM_JOB_NODELIST='a,b'
is "$out" "a slots=1${nl}b slots=1" "nothing known: one slot per node"
run --nodelist='x[1-2]' --slots=2
is "$out" "x1 slots=2${nl}x2 slots=2" "--nodelist works outside Slurm"

run SLURM_JOB_NODELIST='a' SLURM_GPUS_PER_NODE=2 -o "$tmp/hostfile"
is "$rc:$(cat "$tmp/hostfile")" "0:a slots=2" "-o FILE writes the file"

# Invalid input first in spirit: each refusal names what is wrong.
run
is "$rc" 1 "no node list: exit 1"
like "$out" "no node list" "... saying there is no node list"
run SLURM_JOB_NODELIST='n[1-3]' SLURM_TASKS_PER_NODE='2(x2)'
is "$rc" 1 "tasks per node for another node count: exit 1"
like "$out" "SLURM_TASKS_PER_NODE='2\(x2\)' describes 2 nodes, but the node list 'n\[1-3\]' has 3" "... with both counts named"
run SLURM_JOB_NODELIST='n[1-' SLURM_GPUS_PER_NODE=1
is "$rc" 1 "a malformed node list: exit 1"
like "$out" "node list 'n\[1-'" "... naming the list"
run SLURM_JOB_NODELIST='a' SLURM_GPUS_PER_NODE='h100:'
is "$rc" 1 "SLURM_GPUS_PER_NODE without a count: exit 1"
like "$out" "SLURM_GPUS_PER_NODE='h100:'" "... naming the variable"
run SLURM_JOB_NODELIST='a' --slots=gpus
is "$rc" 1 "--slots=gpus without GPUs: exit 1"
run SLURM_JOB_NODELIST='a' --slots=0
is "$rc" 2 "--slots=0 is a usage error"
run SLURM_JOB_NODELIST='a' --slots=tasks
is "$rc" 1 "--slots=tasks without tasks per node: exit 1"
run SLURM_JOB_NODELIST='n[1-3]' SLURM_TASKS_PER_NODE='2(x2)' -o "$tmp/bad"
ok "$([ ! -e "$tmp/bad" ]; echo $?)" "a refused run leaves no file behind"
run SLURM_JOB_NODELIST='a' extra
is "$rc" 2 "a stray argument is a usage error"
done_testing
