#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Where Slurm's task/affinity has bound a task (it runs before SPANK's
# task_init), --rdzv-bind keeps that binding, and says so when none of the
# task's CPUs is local to its GPU; with --cpu-bind=none the plugin binds.
# n1 loads jwb0004 (GPU 0 is local to PUs 18-23,66-71), so on a machine whose
# CPUs are 0-N the step's CPUs are never local to it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs to tell two bindings apart"
jwb=psmgmt__tests__hwloc__topo.jwb0004.xml
topo=$(mktemp -d /tmp/rdzv-topo.XXXXXX)
for n in n1 n2 n3; do ln -s "$fixtures/$jwb" "$topo/$n.xml"; done
e2e_start RDZV_NODE_GPUS="4 4 4" RDZV_PLUGSTACK_ARGS="topology=$topo/%n.xml" \
	RDZV_SLURM_EXTRA="TaskPlugin=task/affinity"
cd "$topo" || exit 1
report='echo "$SLURMD_NODENAME $SLURM_LOCALID cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
mycpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
expand() { # expand "0-2,5" -> "0 1 2 5"
	local part
	for part in ${1//,/ }; do
		case $part in *-*) seq "${part%-*}" "${part#*-}" ;; *) echo "$part" ;; esac
	done | tr '\n' ' '
}
set -- $(expand "$mycpus")
first=$1 second=$2

run_to 60 srun -N1 -w n1 -n2 --gres=gpu:2 --cpu-bind=map_cpu:$second,$first --rdzv-bind=auto bash -c "$report"
is "$rc" 0 "a step Slurm binds with --cpu-bind=map_cpu runs"
is "$(field n1 0 cpus),$(field n1 1 cpus)" "$second,$first" "Slurm's binding is kept (task 0 on $second, task 1 on $first)"
like "$out" "warning: task 0: Slurm bound it to CPUs none of which is local to its GPU 0" \
	"a warning says task 0's CPUs are far from its GPU"

# Expected CPUs from tests/topo/derive.py (xml.etree over the XML, no hwloc,
# no plugin code), not from rdzv-topo, which runs the code under test.
want=$($PY "$top_srcdir/tests/topo/derive.py" "$fixtures/$jwb" --gpus 0,1 --cpus "$mycpus" --tasks 2 \
	| sed -n 's/^task \([01]\): .*, cpus \([0-9,-]*\).*/\2/p' | paste -sd/)
run_to 60 srun -N1 -w n1 -n2 --gres=gpu:2 --cpu-bind=none --rdzv-bind=auto bash -c "$report"
is "$(field n1 0 cpus)/$(field n1 1 cpus)" "${want:-(derive.py gave nothing)}" \
	"with --cpu-bind=none the plugin binds, as derived from the XML"
unlike "$out" "Slurm bound it" "and does not warn"

rm -rf "$topo"
done_testing
