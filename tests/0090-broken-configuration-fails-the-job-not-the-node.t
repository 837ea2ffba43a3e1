#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A broken plugstack.conf line for rdzv.so, with the plugin loaded
# `required` and `optional`: what happens to srun, to a batch job, and to a
# batch job whose configuration broke between submission and launch (so
# that only slurmstepd on the node sees it); what the user is told; and
# that no node is ever drained or downed (`sinfo -h -o %T`). The outcomes
# asserted here are the ones the README's admin section documents.
. "$top_srcdir/tests/lib/tap.sh"
[ -f "$top_srcdir/tests/cluster/cluster.sh" ] || skip_all "tests/cluster/cluster.sh not there yet"
[ -f "$top_srcdir/tests/lib/e2e.sh" ] || skip_all "tests/lib/e2e.sh not there yet"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
cd "$(mktemp -d)" || exit 1
chmod 755 .

node_states() { sinfo -h -o %T | sort -u | tr '\n' ' '; }
no_drain() { # no_drain WHEN
	local s
	s=$(node_states)
	printf '%s' "$s" | grep -Eq 'drain|down|fail' && diag "$1: $(sinfo -h -R -o '%N: %E' | tr '\n' ';')"
	unlike "$s" "drain|down|fail" "$1: no node drained or down (sinfo: $s)"
}
job_field() { scontrol show job "$1" -o 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"; }
wait_job() { # wait_job ID SECS: until it left the queue
	local i
	for i in $(seq 1 "$2"); do
		squeue -h -j "$1" 2>/dev/null | grep -q . || return 0
		sleep 1
	done
	diag "job $1 still queued after $2 s"
	return 1
}

for mode in required optional; do
	e2e_start RDZV_PLUGIN_REQUIRED=$mode
	e2e_plugstack colour=blue

	# srun: the plugstack line is checked on the submit host first.
	run_to 60 srun -N1 -n1 sh -c 'echo RAN; printenv RANK'
	if [ $mode = required ]; then
		ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "$mode, srun: the step is refused (exit $rc)"
		unlike "$out" "RAN" "$mode, srun: nothing was launched"
	else
		like "$out" "RAN" "$mode, srun: the step runs without the plugin"
		unlike "$out" "^0$" "$mode, srun: and without its variables"
	fi
	like "$out" "unknown plugstack argument 'colour'" "$mode, srun: the user sees which plugstack argument is wrong"
	run_to 60 srun -N1 -n1 --rdzv=torch sh -c 'echo RAN'
	ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "$mode, srun --rdzv=torch: refused, the option is unknown while the line is broken (exit $rc)"
	like "$out" "plugstack argument 'colour'" "$mode, srun --rdzv=torch: the message names the broken line"

	# sbatch: likewise checked at submission.
	run_to 60 sbatch -N1 -o "$PWD/batch-$mode.out" --wrap 'echo BATCHRAN'
	id=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out")
	if [ $mode = required ]; then
		ok "$([ "$rc" != 0 ] && [ -z "$id" ] && echo 0 || echo 1)" "$mode, sbatch: the job is refused at submission (exit $rc)"
		like "$out" "unknown plugstack argument 'colour'" "$mode, sbatch: the message names the argument"
	else
		ok "$([ -n "$id" ] && echo 0 || echo 1)" "$mode, sbatch: the job is accepted ($id)"
		[ -n "$id" ] && wait_job "$id" 60
		is "$(job_field "$id" JobState)" COMPLETED "$mode, sbatch: the batch job completes without the plugin"
		like "$(cat "batch-$mode.out" 2>/dev/null)" "BATCHRAN" "$mode, sbatch: the script ran"
	fi
	no_drain "$mode, after srun and sbatch"

	# Broken after submission: only slurmstepd on the node sees the bad line.
	e2e_plugstack
	run_to 60 sbatch -N1 --hold -o "$PWD/late-$mode.out" --wrap 'echo LATERAN; srun -n1 sh -c "echo STEPRAN"'
	id=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out")
	ok "$([ -n "$id" ] && echo 0 || echo 1)" "$mode, late break: a held job is submitted under a good configuration ($id)"
	e2e_plugstack colour=blue
	scontrol release "$id" >/dev/null 2>&1
	wait_job "$id" 90
	state=$(job_field "$id" JobState)
	reason=$(job_field "$id" Reason)
	late=$(cat "late-$mode.out" 2>/dev/null)
	diag "$mode, late break: job $id state $state reason $reason output: $(printf '%s' "$late" | head -c 300 | tr '\n' '|')"
	# slurmstepd of the batch step loads the plugin too: its init must not
	# fail there (that drains the node); the script runs, and its srun
	# refuses the broken line (required) or runs without the plugin.
	like "$late" "LATERAN" "$mode, late break: the batch script runs"
	like "$late" "plugstack argument 'colour'" "$mode, late break: the job's output names the broken line"
	if [ $mode = required ]; then
		unlike "$late" "STEPRAN" "$mode, late break: the script's step is refused"
		is "$state" FAILED "$mode, late break: the job fails"
	else
		like "$late" "STEPRAN" "$mode, late break: the script's step runs without the plugin"
	fi
	# Only the node sees the broken line, for a user's step: srun reads a
	# copy of slurm.conf whose PlugStackConfig is a good file.
	e2e_plugstack
	cp "$RDZV_CLUSTER_DIR/plugstack.conf" good-plugstack.conf
	sed "s|^PlugStackConfig=.*|PlugStackConfig=$PWD/good-plugstack.conf|" "$SLURM_CONF" >client.conf
	e2e_plugstack colour=blue
	run_to 60 env SLURM_CONF="$PWD/client.conf" srun -N1 -n2 --rdzv=torch printenv RANK
	ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "$mode, node-only break, srun --rdzv=torch: the step fails (exit $rc)"
	unlike "$out" "^[01]$" "$mode, node-only break: no task starts without its variables"
	like "$out" "plugstack argument 'colour'" "$mode, node-only break: the user sees the broken line"
	run_to 60 env SLURM_CONF="$PWD/client.conf" srun -N1 -n1 sh -c 'echo PLAIN'
	like "$out" "PLAIN" "$mode, node-only break: a step that asked for no mode runs"
	no_drain "$mode, after a job whose node saw the broken line"
	e2e_plugstack
	run_to 60 srun --immediate=15 -N3 -n3 true
	is "$rc" 0 "$mode: with the line fixed, a step on every node runs again"
	e2e_stop
done
done_testing
