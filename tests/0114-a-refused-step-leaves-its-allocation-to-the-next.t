#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A step refused after srun created it does not keep holding the
# allocation: the next srun of the same salloc or batch script starts at
# once. Slurm's srun, when a local plugin refuses in local_user_init, only
# aborts the launch: slurmctld keeps the step (squeue -s lists it, running)
# and its CPUs until the job ends, and the next srun waits with "Requested
# nodes are busy". Every refusal srun makes after the step exists goes
# through one path (spank/srun.c: refuse_step): the step launches marked
# refused, each node ends its tasks before exec, the step ends as a failed
# step does, and srun exits 1 with the reason. What the command line alone
# decides (srun -n4 --rdzv=megatron ... TP=8) is refused before any step.
#
# For each kind, inside salloc and inside sbatch (2 nodes x 2 tasks, so the
# refused step holds every CPU the job has): the refused srun fails naming
# why, runs none of its tasks' programs, leaves no step in squeue -s, and
# the next `srun -n4` starts and ends within 5 s.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
work=$(mktemp -d /tmp/rdzv-0114.XXXXXX) || exit 1
chmod 755 "$work"
mkdir -p "$work/empty" && chmod 755 "$work/empty"
e2e_start
trap 'e2e_stop; rm -rf "$work"' EXIT
cd "$work" || exit 1

# The allocation's script: the refused srun (its program would print RAN),
# the steps slurmctld still lists, then the next srun, timed.
script() { # script CMD: CMD is one line of shell
	cat <<EOF
#!/bin/bash
$1
echo "REFUSED=\$?"
# The step's completion can reach slurmctld a moment after srun exits
# (a node's message still on its way): wait for it, up to 5 s.
for i in \$(seq 50); do
	left=\$(squeue -h -s -j "\$SLURM_JOB_ID" -o %i | grep -E '\\.[0-9]+\$' | tr '\\n' ' ')
	[ -z "\$left" ] && break
	sleep 0.1
done
echo "LEFT=\$left"
t0=\$(date +%s%N)
srun -n4 true
echo "NEXT=\$? \$(( (\$(date +%s%N) - t0) / 1000000 ))"
EOF
}

# check HOW LABEL PATTERN: the script's output ($out) after one refusal.
check() {
	local how=$1 label=$2 pat=$3 next took
	ok "$(printf '%s\n' "$out" | grep -qE '^REFUSED=[1-9]' && echo 0 || echo 1)" \
		"$how, $label: srun refuses ($(printf '%s\n' "$out" | grep -m1 '^REFUSED='))"
	like "$out" "$pat" "$how, $label: naming why"
	unlike "$out" '^RAN$' "$how, $label: no task's program ran"
	is "$(printf '%s\n' "$out" | sed -n 's/^LEFT=//p')" "" \
		"$how, $label: squeue -s lists no step of the job within 5 s of srun's exit"
	read -r next took < <(printf '%s\n' "$out" | sed -n 's/^NEXT=//p')
	ok "$([ "${next:-x}" = 0 ] && [ "${took:-99999}" -lt 5000 ] && echo 0 || echo 1)" \
		"$how, $label: the next srun -n4 starts and ends at once (exit ${next:-?}, ${took:-?} ms)"
	[ "${next:-x}" = 0 ] && [ "${took:-99999}" -lt 5000 ] || diag "$(printf '%s\n' "$out" | tail -n 12)"
}

# refused LABEL PATTERN CMD: CMD inside salloc, then inside sbatch.
refused() {
	local label=$1 pat=$2 cmd=$3
	script "$cmd" >"$work/job.sh"
	chmod 755 "$work/job.sh"
	run_to 120 salloc "${alloc[@]}" "$work/job.sh"
	check salloc "$label" "$pat"
	rm -f "$work/job.out"
	run_to 120 sbatch --wait "${alloc[@]}" -o "$work/job.out" "$work/job.sh"
	out=$(cat "$work/job.out" 2>/dev/null)
	check sbatch "$label" "$pat"
}

ran="sh -c 'echo RAN'"
alloc=(-N2 --ntasks-per-node=2)
# 1. Megatron's layout with the allocation's 4 tasks (srun's line gives no
# count: only the step's real size decides, after srun created it).
refused "Megatron's layout (4 tasks, TP=8)" \
	"rdzv: --rdzv=megatron layout check: world size 4 \(the step's tasks\) is not divisible by TP x PP x CP = 8" \
	"srun --rdzv=megatron $ran --tensor-model-parallel-size 8"
like "$out" "rdzv: step [0-9]+\.0 does not run: its tasks end before they start" \
	"... and srun says the step does not run"
is "$(printf '%s\n' "$out" | grep -c 'Exited with exit code')" 1 \
	"... with one 'Exited with exit code' line, not one per node"
# 2. A launcher per node counted against the step's real tasks.
refused "--rdzv=torchrun with 4 tasks on 2 nodes" \
	"--rdzv=torchrun runs one launcher per node, but this step has 4 tasks on 2 nodes" \
	"srun --rdzv=torchrun $ran"
# 3. A framework launcher under a one-task-per-rank mode, the step's size
# from the allocation.
refused "deepspeed under --rdzv=deepspeed with 4 tasks" "deepspeed" \
	"srun --rdzv=deepspeed deepspeed x.py"
# 4. The plan srun hands the nodes: nvlink_domain=block where Slurm gives no
# topology blocks for the step.
e2e_plugstack nvlink_domain=block
refused "nvlink_domain=block without topology blocks (the plan)" "rdzv: --rdzv=torch: nvlink_domain=block" \
	"srun --rdzv=torch $ran"
# 5. hang_python= without spank-rdzv's sitecustomize.py: refused by the
# nodes, before exec.
e2e_plugstack "hang_python=$work/empty"
refused "--rdzv-debug=hang, hang_python= missing" "hang_python=$work/empty has no spank-rdzv sitecustomize.py" \
	"srun --rdzv=torch --rdzv-debug=hang $ran"
e2e_plugstack

# 6. What srun's line decides is refused before any step exists: the next
# step of the allocation is step 0.
script "srun -n4 --rdzv=megatron $ran --tensor-model-parallel-size 8" >"$work/job.sh"
printf 'srun -n1 sh -c '"'"'echo "STEP=$SLURM_STEP_ID"'"'"'\n' >>"$work/job.sh"
run_to 120 salloc -N2 --ntasks-per-node=2 "$work/job.sh"
check salloc "srun -n4 --rdzv=megatron TP=8 (the line decides)" \
	"rdzv: --rdzv=megatron layout check: world size 4 \(the step's tasks\) is not divisible by TP x PP x CP = 8"
is "$(printf '%s\n' "$out" | sed -n 's/^STEP=//p')" 1 \
	"... refused before srun created a step: the next two sruns are steps 0 and 1"
unlike "$out" "does not run|Exited with exit code" "... and nothing was launched for it"
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=megatron sh -c 'echo RAN' --tensor-model-parallel-size 2
is "$rc" 0 "srun -N2 --ntasks-per-node=2 --rdzv=megatron TP=2 (4 tasks, divisible): still runs"
is "$(printf '%s\n' "$out" | grep -c '^RAN$')" 4 "... all 4 tasks"

# 7. Megatron's groups against NVLink domains (Slurm's topology blocks,
# 23.11+): TP=8 over 4 nodes of 2 tasks spans both blocks; only srun, with
# the step's layout, can tell, after it created the step.
if e2e_slurm_at_least 23.11; then
	e2e_stop
	e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/block" \
		RDZV_PLUGSTACK_ARGS="nvlink_domain=block" \
		RDZV_TOPOLOGY_CONF="BlockName=b1 Nodes=n[1,3]
BlockName=b2 Nodes=n[2,4]
BlockSizes=2,4"
	alloc=(-N4 --ntasks-per-node=2)
	refused "Megatron's TP=8 across NVLink domains (topology/block)" \
		"TP=8 \(--tensor-model-parallel-size\): the group of ranks 0-7 would span NVLink domains b1" \
		"srun --rdzv=megatron $ran --tensor-model-parallel-size 8"
else
	skip "Megatron's NVLink domain check needs topology/block (Slurm 23.11+; this is $SLURM_VERSION): case 4 refuses nvlink_domain=block here"
fi
done_testing
