#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A framework's own launcher as the task of a multi-task step splits it into
# private worlds: DeepSpeed's `deepspeed` command reads no Slurm
# variable, so every task started workers of its own as RANK=0 WORLD_SIZE=1
# on 127.0.0.1:29500 and the step exited 0 (measured with DeepSpeed 0.19.5;
# here its stand-in, sbatch-examples/stand-ins/deepspeed/launcher/runner.py,
# does the same, and this test shows it under --rdzv=off). srun now refuses
# it before anything starts, within a second, naming the command and what to
# run instead, for deepspeed (also python -m deepspeed.launcher.runner and
# bash -c "deepspeed ..."), torchrun under --rdzv=torch and accelerate
# launch, however the mode was chosen (--rdzv, RDZV_MODE, #SBATCH); a step of
# one task on one node still runs the deepspeed command, and a torchrun given
# its own rendezvous endpoint is the user's set-up and runs.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_NODE_GPUS="2 2 2"
ex="$top_srcdir/sbatch-examples"
tmp=$(mktemp -d) || exit 1
trap 'e2e_stop; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
export PATH="$ex/stand-ins/bin:$PATH" PYTHONPATH="$ex/stand-ins" PYTHONDONTWRITEBYTECODE=1
report="$PY $top_srcdir/tests/e2e/fw_report.py"
marker=$tmp/launched
worlds() { # the distinct (RANK, WORLD_SIZE, MASTER_ADDR:MASTER_PORT) the reports in $out show
	printf '%s\n' "$out" | grep FW_REPORT | python3 -c '
import json, sys
r = [json.loads(l.split("FW_REPORT ", 1)[1])["env"] for l in sys.stdin]
print(len(r), sorted({(e["RANK"], e["WORLD_SIZE"], e["MASTER_ADDR"] + ":" + e["MASTER_PORT"]) for e in r}))'
}
refused_quickly() { # refused_quickly NAME REGEX CMD...: srun exits non-zero in under a second, before launch
	local name=$1 re=$2 t0 t1
	shift 2
	rm -f "$marker"
	t0=$(date +%s.%N)
	run_to 60 "$@"
	t1=$(date +%s.%N)
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && [ ! -e "$marker" ]; echo $?)" "$name: refused before launch (exit $rc, no task ran)"
	like "$out" "$re" "$name: the message names the command and what to run instead"
	took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') # no bc in the Debian roots
	ok "$(awk -v t="$took" 'BEGIN { exit !(t < 1.5) }'; echo $?)" "$name: srun was done in ${took}s (allocation included)"
}

# Before: what the deepspeed command does under srun without the plugin's
# refusal (--rdzv=off): 2 tasks, 2 private worlds, exit 0.
run_to 60 srun -N2 --ntasks-per-node=1 --rdzv=off deepspeed "$top_srcdir/tests/e2e/fw_report.py"
[ "$rc" = 0 ] || diag "$out"
is "$rc" 0 "before (--rdzv=off): 'srun -N2 deepspeed train.py' exits 0 ..."
is "$(worlds)" "2 [('0', '1', '127.0.0.1:29500')]" \
	"... but each of the 2 tasks is rank 0 of a world of 1 on 127.0.0.1:29500 (two models, nothing said)"

ds_fix="the step's command is DeepSpeed's launcher \('deepspeed'\).*each of the 2 tasks.*srun --rdzv=deepspeed python train.py"
refused_quickly "srun -N2 --rdzv=deepspeed deepspeed train.py" "srun: error: rdzv: --rdzv=deepspeed: $ds_fix" \
	srun -N2 --ntasks-per-node=1 --rdzv=deepspeed deepspeed train.py "$marker"
refused_quickly "one node, 2 tasks" "DeepSpeed's launcher.*each of the 2 tasks" \
	srun -N1 -n2 --rdzv=deepspeed deepspeed train.py "$marker"
refused_quickly "python -m deepspeed.launcher.runner" "DeepSpeed's launcher \('python3 -m deepspeed.launcher.runner'\)" \
	srun -N2 --ntasks-per-node=1 --rdzv=deepspeed python3 -m deepspeed.launcher.runner train.py "$marker"
refused_quickly "bash -c \"deepspeed ...\"" "DeepSpeed's launcher \('deepspeed', inside the shell's -c string\)" \
	srun -N2 --ntasks-per-node=1 --rdzv=deepspeed bash -c "touch $marker; deepspeed train.py --deepspeed_config ds_config.json"
refused_quickly "RDZV_MODE=deepspeed" "$ds_fix" \
	env RDZV_MODE=deepspeed srun -N2 --ntasks-per-node=1 deepspeed train.py "$marker"
printf '#!/bin/sh\n#SBATCH -N2 --ntasks-per-node=1\n#SBATCH --rdzv=deepspeed\nsrun deepspeed train.py %s\n' "$marker" > job.sh
rm -f "$marker"
run_to 90 sbatch --wait -o job.out job.sh
out=$(cat job.out 2>/dev/null)
ok "$([ "$rc" != 0 ] && [ ! -e "$marker" ]; echo $?)" "#SBATCH --rdzv=deepspeed: the job fails (exit $rc), no task ran"
like "$out" "$ds_fix" "#SBATCH --rdzv=deepspeed: the job's output says what to run instead"

refused_quickly "torchrun under --rdzv=torch" "--rdzv=torch: the step's command is torchrun \('torchrun'\).*srun --rdzv=torch python train.py.*srun --ntasks-per-node=1 --rdzv=torchrun torchrun" \
	srun -N2 --ntasks-per-node=1 --rdzv=torch torchrun --nproc-per-node=2 train.py "$marker"
refused_quickly "python -m torch.distributed.run under --rdzv=torch" "torchrun \('python3 -m torch.distributed.run'\)" \
	srun -N1 -n2 --rdzv=torch python3 -m torch.distributed.run train.py "$marker"
refused_quickly "accelerate launch under --rdzv=torch" "--rdzv=torch: the step's command is accelerate launch.*overwrites the plugin's RANK and WORLD_SIZE.*srun --rdzv=torch python train.py" \
	srun -N2 --ntasks-per-node=1 --rdzv=torch accelerate launch train.py "$marker"

# What still runs.
run_to 60 srun -N1 -n1 --rdzv=deepspeed deepspeed "$top_srcdir/tests/e2e/fw_report.py"
is "$rc" 0 "one task on one node: the deepspeed command runs as on a workstation"
is "$(worlds)" "1 [('0', '1', '127.0.0.1:29500')]" "... its one worker is rank 0 of 1 (the launcher's own world)"
rm -f "$marker"
run_to 60 srun -N2 --ntasks-per-node=1 --rdzv=torch bash -c "touch $marker; exit 0; torchrun --rdzv-endpoint=\$MASTER_ADDR:\$MASTER_PORT train.py"
ok "$([ "$rc" = 0 ] && [ -e "$marker" ]; echo $?)" "torchrun given --rdzv-endpoint (the user's own set-up): not refused"
run_to 60 srun -N2 --ntasks-per-node=1 --rdzv=torch $report
is "$rc" 0 "python train.py under --rdzv=torch: runs"
done_testing
