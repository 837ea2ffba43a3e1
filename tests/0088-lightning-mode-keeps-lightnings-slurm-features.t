#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --rdzv=lightning. Lightning picks its TorchElastic environment
# whenever TORCHELASTIC_RUN_ID is set, which --rdzv=torch sets (torchrun
# parity): it trains, but without its SLURM environment and so without its
# auto-requeue on #SBATCH --signal=SIGUSR1@90 (measured with real Fabric,
# 2 nodes x 2 ranks). Lightning is replaced by its stand-in
# (sbatch-examples/stand-ins/lightning: Lightning's environment choice, its
# SLURM environment's reads and start-up refusals, its SIGUSR1 requeue
# handler) around real torch.distributed on gloo. Here: the before under
# --rdzv=torch; --rdzv=lightning, RDZV_MODE=lightning and #SBATCH
# --rdzv=lightning give the SLURM environment, the plugin's master and port
# and no TORCHELASTIC_*; example 12's auto-requeue really requeues the job on
# SIGUSR1; what Lightning rejects at start-up is refused by srun before
# launch; a failed rank stops the step.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start RDZV_NODE_GPUS="2 2 2"
ex="$top_srcdir/sbatch-examples"
tmp=$(mktemp -d) || exit 1
trap 'cancel_own_jobs; e2e_stop; rm -rf "$tmp"' EXIT
cd "$ex" || exit 1
export PYTHON=$PY PYTHONPATH="$ex/stand-ins" PYTHONDONTWRITEBYTECODE=1
tiny=(lightning_tiny.py --devices 2 --num-nodes 2)
small=(-N2 --ntasks-per-node=2 --gpus-per-node=2 --cpus-per-task=1)
reports() { # KEYS...: sorted distinct tuples of those keys over the LIGHTNING_REPORT lines of $out
	printf '%s\n' "$out" | grep LIGHTNING_REPORT | python3 -c '
import json, sys
r = [json.loads(l.split("LIGHTNING_REPORT ", 1)[1]) for l in sys.stdin]
print(len(r), sorted({tuple(x[k] if not isinstance(x[k], list) else ",".join(x[k]) for k in sys.argv[1:]) for x in r}))' "$@"
}
port_of() { printf '%s\n' "$out" | sed -n 's/.* port \([0-9]*\) from .*/\1/p' | head -n 1; }

step 120 srun "${small[@]}" --rdzv=torch $PY "${tiny[@]}"
is "$rc" 0 "before: srun --rdzv=torch lightning_tiny.py trains (exit 0) ..."
is "$(reports environment requeue_handler ok)" "4 [('TorchElasticEnvironment', False, True)]" \
	"... but Lightning picks TorchElastic (TORCHELASTIC_RUN_ID is set): no auto-requeue handler"

step 120 srun "${small[@]}" --rdzv=lightning --rdzv-verbose $PY "${tiny[@]}"
is "$rc" 0 "--rdzv=lightning: 4 ranks meet (exit 0)"
is "$(reports environment requeue_handler ok torchelastic)" "4 [('SLURMEnvironment', True, True, '')]" \
	"... Lightning picks its SLURM environment, installs its requeue handler, sees no TORCHELASTIC_*"
is "$(reports main_address main_port)" "4 [('n1', $(port_of))]" \
	"... master from MASTER_ADDR/MASTER_PORT: rank 0's node and the plugin's port, not 15000 + job id"
like "$out" "TORCHELASTIC_RUN_ID unset \(rdzv\)" "... --rdzv-verbose says TORCHELASTIC_RUN_ID is unset"

step 120 env RDZV_MODE=lightning TORCHELASTIC_RUN_ID=left-over srun "${small[@]}" $PY "${tiny[@]}"
is "$(reports environment ok torchelastic)" "4 [('SLURMEnvironment', True, '')]" \
	"RDZV_MODE=lightning, a TORCHELASTIC_RUN_ID left over in the environment: removed, SLURM environment"

# What Lightning rejects at start-up, refused by srun before launch.
marker=$tmp/launched
step_refused_quickly() { # NAME REGEX SRUN-ARGS...: srun, through failure.sh's step, exits non-zero before launch within 1.5 s
	local name=$1 re=$2 t0
	shift 2
	rm -f "$marker"
	t0=$EPOCHREALTIME
	step 60 srun "$@"
	took=$(awk -v a="$t0" -v b="$t_end" 'BEGIN { printf "%.2f", b - a }')
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && [ ! -e "$marker" ]; echo $?)" "$name: refused before launch (exit $rc)"
	like "$out" "$re" "$name: the message names what to do"
	within 1.5 "$took"; ok $? "$name: srun was done in ${took}s (allocation included)"
}
step_refused_quickly "srun -N2 -n4 --rdzv=lightning" "srun: error: rdzv: --rdzv=lightning: Lightning refuses a step of 4 tasks without --ntasks-per-node.*use srun -N2 --ntasks-per-node=2" \
	-N2 -n4 --cpus-per-task=1 --rdzv=lightning bash -c "touch $marker"
step_refused_quickly "4 tasks per node, 2 GPUs per node" "--rdzv=lightning: 4 tasks per node \(--ntasks-per-node\) but 2 GPUs per node.*--ntasks-per-node=2" \
	-N2 --ntasks-per-node=4 --gpus-per-node=2 --cpus-per-task=1 --rdzv=lightning bash -c "touch $marker"
step 60 srun -N1 -n1 --rdzv=lightning $PY lightning_tiny.py
is "$(reports environment world ok)" "1 [('SLURMEnvironment', 1, True)]" "one task without --ntasks-per-node: Lightning accepts it, so does srun"

# Example 12: #SBATCH --rdzv=lightning and Lightning's auto-requeue on SIGUSR1.
out_file=$tmp/12.out
# --open-mode=append: the requeued run must not truncate the first run's
# output before the test reads the handler's line (seen under load).
jid=$(sbatch --parsable -J "$fail_job" --cpus-per-task=1 -o "$out_file" --open-mode=append \
	--export=ALL,ACCELERATOR=cpu,WAIT=60 12-lightning-requeue.sbatch 2>&1)
ok "$([[ $jid =~ ^[0-9]+$ ]]; echo $?)" "example 12 submitted (job $jid)"
timeout 90 bash -c "until [ \"\$(grep -c LIGHTNING_REPORT '$out_file' 2>/dev/null)\" = 4 ]; do sleep 0.5; done"
out=$(cat "$out_file" 2>/dev/null)
is "$(reports environment requeue_handler ok)" "4 [('SLURMEnvironment', True, True)]" \
	"example 12 (#SBATCH --rdzv=lightning): SLURM environment with its requeue handler in every rank"
scancel --signal=USR1 "$jid"
timeout 30 bash -c "until grep -q 'auto-requeue' '$out_file' 2>/dev/null; do sleep 0.5; done"
timeout 30 bash -c "until scontrol show job $jid 2>/dev/null | grep -q 'Restarts=1'; do sleep 0.5; done"
out=$(cat "$out_file" 2>/dev/null)
like "$out" "auto-requeue: rank 0 got SIGUSR1, scontrol requeue $jid" "SIGUSR1 (what --signal=SIGUSR1@90 sends): Lightning's handler requeues the job"
unlike "$out" "auto-requeue: scontrol requeue $jid: [^o]" "... and scontrol did not refuse it (its result line, when written before Slurm ended the task, says ok)"
like "$(scontrol show job "$jid" 2>/dev/null)" "Restarts=1" "... Slurm counts the restart (Restarts=1)"
scancel "$jid" 2>/dev/null

# Issue 21: under lightning a failed rank stops the step and is named.
cd "$tmp" || exit 1
new_stamp
prog='if [ "$SLURM_PROCID" = 3 ]; then date +%s.%N > '"$stamp"'; exit 1; fi; sleep 120; echo "task $SLURM_PROCID survived"'
# -w: rank 3 is on n2 whichever nodes a previous job still holds.
step 150 srun -N2 -w n1,n2 --ntasks-per-node=2 --rdzv=lightning sh -c "$prog"
took=$(since "$stamp")
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ]; echo $?)" "--rdzv=lightning, rank 3 exits 1: the step fails (exit $rc)"
within 10 "$took"; ok $? "... ${took}s after rank 3's exit (the others were to sleep 120 s)"
is "$(rdzv_lines)" "rdzv: rank 3 (node n2) exited with status 1; the step was stopped" "... rank 3 is named"
done_testing
