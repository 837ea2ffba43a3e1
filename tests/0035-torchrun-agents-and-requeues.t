#!/bin/bash
# torchrun mode with real torchrun ($TORCHRUN): a worker on node 2 exits 1
# before init; node 2's agent stops its own workers and exits 1, and the
# plugin's kill-on-bad-exit ends node 1's agent and workers, which waited in
# init (issue 21). The line names the node's rank, as Slurm's "task 1" does
# not say that task 1 is torchrun with two workers. Then a requeued batch
# job: TORCHELASTIC_RESTART_COUNT follows SLURM_RESTART_COUNT.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start
cd "$(mktemp -d)" || exit 1
trap 'cancel_own_jobs; e2e_stop' EXIT

new_stamp
step 150 srun -N2 --ntasks-per-node=1 --gpus-per-node=2 --rdzv=torchrun $TORCHRUN "$FAIL_APP" exit1-before-init 3 "$stamp"
took=$(since "$stamp")
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "torchrun, worker rank 3 exits 1: srun fails (exit $rc)"
within 20 "$took"; ok $? "... the step ends ${took}s after the worker's exit (torchrun's agent notices first: its monitor interval)"
is "$(rdzv_lines)" "rdzv: node rank 1 (node n2: torchrun, 2 workers) exited with status 1; the step was stopped" \
	"... one line names node rank 1 on n2 and its two workers"
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
# Wait on the event: the second run's lines in the output (a requeued job
# waits for the controller's requeue delay before it may start again).
for _ in $(seq 1 240); do
	[ "$(grep -c '^count ' requeue.out 2>/dev/null)" -ge 4 ] && break
	sleep 1
done
scontrol show job "$jid" 2>/dev/null | grep -o 'JobState=[A-Z]*' | head -n 1 | sed 's/^/# /'
is "$(grep '^count ' requeue.out 2>/dev/null | sort | tr '\n' ' ')" "count 0 0 count 0 1 count 1 0 count 1 1 " \
	"a requeued job's step: TORCHELASTIC_RESTART_COUNT is 0, then 1 (SLURM_RESTART_COUNT)"
scancel "$jid" 2>/dev/null
done_testing
