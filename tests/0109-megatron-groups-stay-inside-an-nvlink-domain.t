#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# NVLink domains beyond the node. With plugstack nvlink_domain=block
# a domain is a Slurm topology block (BlockName=, one per NVL72 rack): srun
# reads the blocks once per step, and Megatron's tensor-, context- and
# expert-parallel groups may cross nodes of one block but are refused before
# launch when a group would cross blocks, naming ranks, nodes and blocks.
# Cluster: 4 nodes, topology/block b1 = n[1,3], b2 = n[2,4] (BlockSizes=2,4),
# 2 tasks per node. Where Slurm really put each rank and its block is
# Slurm's own answer in each task (SLURM_TOPOLOGY_ADDR), checked by the
# Megatron stand-in with MEGATRON_STANDIN_GROUPS_BY=block.
#   26.05: tasks in topology order (n1 n3 n2 n4): TP=4 and EP=4 groups sit in
#          one block each and run; TP=8 and EP=8 are refused naming b1 and b2;
#          nvlink_domain=node keeps the old refusal of TP above a node's tasks.
#   24.11: tasks in node list order (n1 n2 n3 n4): TP=4's first group is n1
#          (b1) and n2 (b2), refused; on n1 and n3 (one block) it runs.
#   22.05: no topology/block: nvlink_domain=block is refused by srun, named.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
tmp=$(mktemp -d) || exit 1
marker=$tmp/launched
standin="$top_srcdir/sbatch-examples/stand-ins/megatron-lm/pretrain_gpt.py"
launch=(bash -c "touch $marker; exec $PY $standin \"\$@\"" pretrain_gpt.py)
export MEGATRON_STANDIN_GROUPS_BY=block PYTHONDONTWRITEBYTECODE=1
# report_field, megatron_refused and megatron_runs (which reads this
# stand-in's group check): tests/lib/steps.sh.

# Each rank's RDZV_NVLINK_DOMAIN against Slurm's own block for it, the
# domain's size, and the ranks inside each domain numbered 0..size-1.
domains_agree() {
	printf '%s\n' "$out" | grep RDZV_REPORT | python3 -c '
import json, sys, collections
by = collections.defaultdict(list)
bad = []
for l in sys.stdin:
    r = json.loads(l.split("RDZV_REPORT ", 1)[1])["env"]
    block = r["SLURM_TOPOLOGY_ADDR"].split(".")[0]
    if r["RDZV_NVLINK_DOMAIN"] != block:
        bad.append((r["RANK"], r["RDZV_NVLINK_DOMAIN"], block))
    by[block].append((int(r["RDZV_NVLINK_DOMAIN_SIZE"]), int(r["RDZV_NVLINK_DOMAIN_RANK"])))
for b, v in by.items():
    if sorted(x[1] for x in v) != list(range(len(v))) or {x[0] for x in v} != {len(v)}:
        bad.append((b, v))
print("ok" if not bad and by else "bad %s" % bad)'
}

if ! e2e_slurm_at_least 23.11; then
	e2e_start RDZV_NODES=2 RDZV_PLUGSTACK_ARGS="nvlink_domain=block"
	trap 'e2e_stop; rm -rf "$tmp"' EXIT
	megatron_refused "Slurm $SLURM_VERSION without topology/block" \
		"nvlink_domain=block needs Slurm 23.11 or later \(topology/block\)" \
		-N2 --ntasks-per-node=1 "${launch[@]}"
	done_testing
	exit
fi

e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/block" \
	RDZV_PLUGSTACK_ARGS="nvlink_domain=block" \
	RDZV_TOPOLOGY_CONF="BlockName=b1 Nodes=n[1,3]
BlockName=b2 Nodes=n[2,4]
BlockSizes=2,4"
trap 'e2e_stop; rm -rf "$tmp"' EXIT
diag "topology/block: b1=n[1,3], b2=n[2,4]; plugstack nvlink_domain=block"
two=(-N4 --ntasks-per-node=2 --cpus-per-task=1)

if e2e_slurm_at_least 26.05; then
	megatron_runs "TP=4 across two nodes of one block" 8 "${two[@]}" "${launch[@]}" \
		--tensor-model-parallel-size 4
	is "$(domains_agree)" ok "TP=4: RDZV_NVLINK_DOMAIN is Slurm's block of each rank, _SIZE 4, _RANK 0-3 in each"
	is "$(report_field where)" '"b1" "b2"' "TP=4: the ranks ran in both blocks"
	megatron_refused "TP=8 across the two blocks" \
		"TP=8 \(--tensor-model-parallel-size\): the group of ranks 0-7 would span NVLink domains b1 \(ranks 0-3 on n1, n3\) and b2 \(ranks 4-7 on n2, n4\)" \
		"${two[@]}" "${launch[@]}" --tensor-model-parallel-size 8
	diag "srun said: $(printf '%s\n' "$out" | grep -m1 'layout check')"
	like "$out" "more than the 2 nodes of 2 tasks the largest domain holds: lower TP" \
		"TP=8: no --segment can fit it, and the message says so"
	megatron_runs "EP=4 across two nodes of one block" 8 "${two[@]}" "${launch[@]}" \
		--expert-model-parallel-size 4
	megatron_refused "EP=8 across the two blocks" \
		"EP=8 \(--expert-model-parallel-size\): the group of ranks 0-7 would span NVLink domains b1 .* and b2 " \
		"${two[@]}" "${launch[@]}" --expert-model-parallel-size 8
	megatron_refused "EP=4 x TP=2 (expert groups of ranks 2 apart) across the blocks" \
		"EP=4 \(--expert-model-parallel-size\): the group of ranks 0..6 would span NVLink domains b1 \(ranks 0, 2 on n1, n3\) and b2 \(ranks 4, 6 on n2, n4\)" \
		"${two[@]}" "${launch[@]}" --expert-model-parallel-size 4 --tensor-model-parallel-size 2
	run_to 60 srun --rdzv=megatron --rdzv-verbose -N4 --ntasks-per-node=2 true
	like "$out" "NVLink domains \(nvlink_domain=block, Slurm's topology blocks; node ids of the step\): b1=0,2;b2=1,3" \
		"--rdzv-verbose: srun shows the step's map"
	like "$out" "n3:   NVLink domain: b1 \(nvlink_domain=block, Slurm's topology blocks\): 2 of the step's nodes, 4 tasks, this node's first task is its 2" \
		"--rdzv-verbose: each node its domain and place"
	e2e_plugstack nvlink_domain=node
	megatron_refused "nvlink_domain=node: TP=4 on nodes of 2 tasks, as before" \
		"TP=4 is larger than the 2 tasks on node" "${two[@]}" "${launch[@]}" \
		--tensor-model-parallel-size 4
	run_to 60 srun --rdzv=megatron -N4 --ntasks-per-node=2 bash -c 'echo "D=${RDZV_NVLINK_DOMAIN-unset}"'
	is "$(printf '%s\n' "$out" | sort -u)" "D=unset" "nvlink_domain=node: no RDZV_NVLINK_DOMAIN is set in any task"
	# Several topologies (topology.yaml): each partition's own. The
	# cluster default pairs n1 with n3; partition gpu's topology pairs n1
	# with n2. A step in gpu gets gpu's blocks, not the default's.
	e2e_stop
	e2e_start RDZV_NODES=4 RDZV_PART_GPU_OPTS="Topology=pairs" RDZV_PLUGSTACK_ARGS="nvlink_domain=block" \
		RDZV_TOPOLOGY_YAML="- topology: racks
  cluster_default: true
  block:
    block_sizes: [2, 4]
    blocks:
      - block: b1
        nodes: n[1,3]
      - block: b2
        nodes: n[2,4]
- topology: pairs
  cluster_default: false
  block:
    block_sizes: [2, 4]
    blocks:
      - block: c1
        nodes: n[1-2]
      - block: c2
        nodes: n[3-4]"
	dom='echo "$SLURMD_NODENAME ${RDZV_NVLINK_DOMAIN-unset}"'
	run_to 60 srun -p gpu --rdzv=torch --rdzv-verbose -N4 --ntasks-per-node=1 bash -c "$dom"
	is "$(printf '%s\n' "$out" | grep -E '^n[0-9] ' | sort | tr '\n' ' ')" "n1 c1 n2 c1 n3 c2 n4 c2 " \
		"topology.yaml: srun -p gpu (Topology=pairs): each node's domain is its block in pairs"
	like "$out" "NVLink domains from topology pairs, the step's partition's" "... and srun says which topology it read"
	[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | tail -n 5)"
	run_to 60 srun --rdzv=torch -N4 --ntasks-per-node=1 bash -c "$dom"
	is "$(printf '%s\n' "$out" | grep -E '^n[0-9] ' | sort | tr '\n' ' ')" "n1 b1 n2 b2 n3 b1 n4 b2 " \
		"... while a step of the default partition gets the cluster default's blocks (racks)"
	run_to 90 salloc -p gpu -N4 bash -c "srun --rdzv=torch --ntasks-per-node=1 bash -c '$dom'"
	is "$(printf '%s\n' "$out" | grep -E '^n[0-9] ' | sort | tr '\n' ' ')" "n1 c1 n2 c1 n3 c2 n4 c2 " \
		"... and a step inside salloc -p gpu gets pairs' blocks (the allocation's partition)"
else
	megatron_refused "TP=4 in list order (n1 b1, n2 b2)" \
		"TP=4 \(--tensor-model-parallel-size\): the group of ranks 0-3 would span NVLink domains b1 \(ranks 0-1 on n1\) and b2 \(ranks 2-3 on n2\)" \
		"${two[@]}" "${launch[@]}" --tensor-model-parallel-size 4
	megatron_runs "TP=4 on n1 and n3 (one block)" 4 -N2 -w n1,n3 --ntasks-per-node=2 --cpus-per-task=1 \
		"${launch[@]}" --tensor-model-parallel-size 4
	is "$(domains_agree)" ok "TP=4 on b1: RDZV_NVLINK_DOMAIN is Slurm's block, _SIZE 4, _RANK 0-3"
fi
done_testing
