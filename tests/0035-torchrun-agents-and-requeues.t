#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# torchrun mode with real torchrun ($TORCHRUN): a worker on node 2 exits 1
# before init. PyTorch 2.x's agent stops its own workers and exits 1 (its
# monitor interval: 0.1 s); PyTorch 1.x's would wait 300 s in its exit
# barrier, so slurmstepd's watcher (spank/failure.c) names the worker and
# kills the agent 1 s later. Either way kill-on-bad-exit ends node 1's agent
# and workers, which waited in init. The line names the worker's
# rank (the watcher saw it first) or node 2's rank and its two workers (the
# agent reaped it first), never Slurm's "task 1". Then a requeued batch job:
# TORCHELASTIC_RESTART_COUNT follows SLURM_RESTART_COUNT.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT

new_stamp
step 60 srun -N2 --ntasks-per-node=1 --gpus-per-node=2 --rdzv=torchrun $TORCHRUN "$FAIL_APP" exit1-before-init 3 "$stamp"
took=$(since "$stamp")
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "torchrun, worker rank 3 exits 1: srun fails (exit $rc)"
within 10 "$took"; ok $? "... the step ends ${took}s after the worker's exit"
like "$(rdzv_lines)" '^rdzv: (rank 3 \(node n2\)|node rank 1 \(node n2: torchrun, 2 workers\)) exited with status 1; the step was stopped$' \
	"... one line names worker rank 3 on n2, or node rank 1 on n2 and its two workers"
is "$(leftover "$stamp")" "" "... no agent or worker is left on any node"

# A job that requeues itself once: its second run sees SLURM_RESTART_COUNT=1.
cat > requeue.sh <<EOF2
#!/bin/bash
#SBATCH -N2 -n2 --requeue --open-mode=append
srun --rdzv=torch $PY -c 'import os; print("count", os.environ["RANK"], os.environ.get("TORCHELASTIC_RESTART_COUNT"))'
if [ "\${SLURM_RESTART_COUNT:-0}" = 0 ]; then scontrol requeue \$SLURM_JOB_ID; sleep 300; fi
EOF2
step 20 sbatch --parsable -o requeue.out requeue.sh
jid=${out%%;*}
# Wait on the events: the requeue (the controller holds a requeued job until
# a BeginTime about two minutes ahead: released here with StartTime=now),
# then the second run's lines in the output.
released=
for _ in $(seq 1 1200); do
	n=$(grep -c '^count ' requeue.out 2>/dev/null)
	[ "${n:-0}" -ge 4 ] && break
	if [ -z "$released" ] && scontrol show job "$jid" 2>/dev/null | grep -q 'JobState=PENDING.*' \
		&& scontrol show job "$jid" 2>/dev/null | grep -q 'Restarts=1'; then
		scontrol update jobid="$jid" StartTime=now 2>/dev/null && released=1
	fi
	sleep 0.2
done
scontrol show job "$jid" 2>/dev/null | grep -o 'JobState=[A-Z]*' | head -n 1 | sed 's/^/# /'
is "$(grep '^count ' requeue.out 2>/dev/null | sort | tr '\n' ' ')" "count 0 0 count 0 1 count 1 0 count 1 1 " \
	"a requeued job's step: TORCHELASTIC_RESTART_COUNT is 0, then 1 (SLURM_RESTART_COUNT)"
scancel "$jid" 2>/dev/null
done_testing
