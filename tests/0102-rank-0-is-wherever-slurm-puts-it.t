#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rank 0 is wherever Slurm puts it. Slurm 26.05 lays a step's tasks
# in topology order when a topology plugin is configured: task 0 need not run
# on node 0 of the step's node list, and SLURM_NODEID no longer follows the
# ranks. In every mode, MASTER_ADDR (PET_MASTER_ADDR, JAX's coordinator) must
# name the node that runs SLURM_PROCID 0, and GROUP_RANK, NODE_RANK,
# CROSS_RANK, PET_NODE_RANK must number the nodes in rank order. Checked
# against where Slurm really ran each task (tests/e2e/check_where.py), under
# topology/tree on every leg (the switches list n3-n4 before n1-n2), 24.11's
# TopologyParam=SwitchAsNodeRank, topology/block with --segment where Slurm
# has it, a second step of one allocation, RDZV_MODE, and -m arbitrary.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
where="$top_srcdir/tests/e2e/where_rank0.py"
check="$PY $top_srcdir/tests/e2e/check_where.py"
cd "$(mktemp -d)" || exit 1
tree=$E2E_TREE_3412

# case LABEL MODE NTASKS [--meet] [--master NODE] -- CMD...: one step, checked.
case_() {
	local label=$1 mode=$2 n=$3; shift 3
	local cargs=()
	while [ "$1" != "--" ]; do cargs+=("$1"); shift; done
	shift
	run_to 90 "$@"
	is "$rc" 0 "$label: the step exits 0"
	verdict=$(printf '%s\n' "$out" | $check "$mode" "$n" "${cargs[@]}")
	is "$?" 0 "$label: every task's rank-0 address is task 0's node, node numbers in rank order ($verdict)"
	[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | grep -v RDZV_WHERE | tail -n 6)"
}

# 26.05 puts task 0 on n3 under this tree; earlier releases on n1.
t0=n1
e2e_slurm_at_least 26.05 && t0=n3

e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/tree" RDZV_TOPOLOGY_CONF="$tree"
diag "topology/tree: s1=n[3-4] before s2=n[1-2]"
case_ "tree, --rdzv=torch, 4 nodes x 2, ranks meet" torch 8 --meet --master $t0 -- \
	srun -N4 --ntasks-per-node=2 --rdzv=torch $PY "$where" --meet
# Every mode and way of choosing it where the placement differs (26.05);
# before 26.05 torch, torchrun and the second step stand for them.
if e2e_slurm_at_least 26.05; then
case_ "tree, --rdzv=deepspeed" deepspeed 8 --master $t0 -- \
	srun -N4 --ntasks-per-node=2 --rdzv=deepspeed $PY "$where"
case_ "tree, --rdzv=megatron" megatron 8 --master $t0 -- \
	srun -N4 --ntasks-per-node=2 --rdzv=megatron $PY "$where"
case_ "tree, --rdzv=lightning" lightning 8 --master $t0 -- \
	srun -N4 --ntasks-per-node=2 --gpus-per-node=2 --rdzv=lightning $PY "$where"
case_ "tree, --rdzv=jax" jax 8 --master $t0 -- \
	srun -N4 --ntasks-per-node=2 --rdzv=jax $PY "$where"
case_ "tree, --rdzv=torchrun (the agents' PET_*)" torchrun 4 --master $t0 -- \
	srun -N4 --ntasks-per-node=1 --rdzv=torchrun $PY "$where"
case_ "tree, RDZV_MODE=torch" torch 8 --master $t0 -- \
	env RDZV_MODE=torch srun -N4 --ntasks-per-node=2 $PY "$where"
printf '#!/bin/bash\n#SBATCH -N4 --ntasks-per-node=2 --rdzv=torch -o %s/batch.out\nsrun %s %s\n' \
	"$PWD" "$PY" "$where" > batch.sh
case_ "tree, #SBATCH --rdzv=torch" torch 8 --master $t0 -- \
	bash -c 'sbatch --wait batch.sh >/dev/null && cat batch.out'
e2e_plugstack mode=torch
case_ "tree, the admin's mode=torch" torch 8 --master $t0 -- \
	srun -N4 --ntasks-per-node=2 $PY "$where"
e2e_plugstack
fi
case_ "tree, the second step of salloc --rdzv=torch" torch 4 -- \
	salloc -N4 --ntasks-per-node=1 --rdzv=torch bash -c "srun -n4 true && srun -n4 $PY $where"
case_ "tree, -m arbitrary -w n2,n4,n1,n3" torch 4 --meet --master n2 -- \
	srun -n4 -m arbitrary -w n2,n4,n1,n3 --rdzv=torch $PY "$where" --meet
# Real torchrun: its agents meet at PET_MASTER_ADDR, whose node hosts the store.
run_to 120 srun -N4 --ntasks-per-node=1 --rdzv=torchrun $TORCHRUN "$top_srcdir/tests/e2e/allreduce.py"
is "$rc" 0 "tree, real torchrun on 4 nodes: srun exits 0"
verdict=$(printf '%s\n' "$out" | $PY "$top_srcdir/tests/e2e/check_reports.py" 4 --launcher torchrun)
is "$?" 0 "tree, real torchrun: 4 workers meet, GROUP_RANK in rank order ($verdict)"

if e2e_slurm_at_least 24.11 && ! e2e_slurm_at_least 26.05; then
	e2e_stop
	e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/tree
TopologyParam=SwitchAsNodeRank" RDZV_TOPOLOGY_CONF="$tree"
	diag "topology/tree with TopologyParam=SwitchAsNodeRank (the node list itself is reordered)"
	case_ "SwitchAsNodeRank, --rdzv=torch, ranks meet" torch 8 --meet --master n3 -- \
		srun -N4 --ntasks-per-node=2 --rdzv=torch $PY "$where" --meet
	case_ "SwitchAsNodeRank, --rdzv=torchrun" torchrun 4 --master n3 -- \
		srun -N4 --ntasks-per-node=1 --rdzv=torchrun $PY "$where"
fi

if e2e_slurm_at_least 26.05; then
	e2e_stop
	e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/block" \
		RDZV_TOPOLOGY_CONF="$E2E_BLOCK_1324"
	diag "topology/block: b1=n[1,3], b2=n[2,4]"
	case_ "block, --rdzv=torch, 4 nodes x 2, ranks meet" torch 8 --meet --master n1 -- \
		srun -N4 --ntasks-per-node=2 --rdzv=torch $PY "$where" --meet
	case_ "block, --rdzv=deepspeed (CROSS_RANK)" deepspeed 8 -- \
		srun -N4 --ntasks-per-node=2 --rdzv=deepspeed $PY "$where"
	case_ "block, --rdzv=lightning" lightning 8 -- \
		srun -N4 --ntasks-per-node=2 --gpus-per-node=2 --rdzv=lightning $PY "$where"
	case_ "block, --rdzv=torchrun" torchrun 4 -- \
		srun -N4 --ntasks-per-node=1 --rdzv=torchrun $PY "$where"
	case_ "block, --segment=2, ranks meet" torch 4 --meet -- \
		srun -N2 --segment=2 --ntasks-per-node=2 --rdzv=torch $PY "$where" --meet
fi
# srun --async (26.05, a job with the step manager): Slurm runs no srun-side
# plugin hook for such a step, so no layout reaches the nodes. Each node falls
# back to node 0 of the node list and its SLURM_NODEID; the node that runs
# task 0 refuses the step when that is not where Slurm put rank 0.
if e2e_slurm_at_least 26.05; then
	e2e_stop
	e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="SlurmctldParameters=enable_stepmgr
PrologFlags=Contain"
	diag "srun --async, step manager enabled"
	async_step() { # async_step OUTDIR SRUN-ARGS...: run it in a 4-node salloc, wait for its files
		local o=$1; shift
		mkdir -p "$o"
		run_to 120 salloc -N4 --ntasks-per-node=1 bash -c '
			srun --async -o '"$o"'/out-%t.txt "$@" || exit 1
			# Until every task has said something: its report or the plugin refusal
			# (the step runs on without srun).
			for i in $(seq 1 300); do
				[ "$(cat '"$o"'/out-*.txt 2>/dev/null | grep -c "RDZV_WHERE\|rdzv: error: task")" -ge 4 ] && break
				sleep 0.3
			done' async "$@"
	}
	async_step "$PWD/a1" --rdzv=torch $PY "$where"
	verdict=$(cat "$PWD"/a1/out-*.txt 2>/dev/null | $check torch 4)
	is "$?" 0 "srun --async --rdzv=torch: task 0 on the node list's first node, every task agrees ($verdict)"
	async_step "$PWD/a2" -m arbitrary -w n3,n1,n2,n4 --rdzv=torch $PY "$where"
	a2=$(cat "$PWD"/a2/out-*.txt 2>/dev/null)
	like "$a2" "srun handed over no step layout: srun loads the plugin but ran no per-step hook for this step \\(srun --async\\): run the step with srun itself, not srun --async" \
		"srun --async -m arbitrary (task 0 on n3): the nodes refuse the step, saying why and what to do"
	ok "$(cat "$PWD"/a2/out-0.txt 2>/dev/null | grep -q RDZV_WHERE && echo 1 || echo 0)" \
		"... and task 0 never ran its program"
fi
done_testing
