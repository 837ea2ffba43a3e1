# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for Megatron-LM's pretrain_gpt.py (see ../README.md).

What it keeps of Megatron: the parser (argparse, allow_abbrev=False, unknown
training options ignored here), RANK / WORLD_SIZE / LOCAL_RANK from the
environment (megatron/training/arguments.py, initialize.py), validate_args'
two refusals that depend on the launch (world size divisible by
TP x PP x CP; CUDA_DEVICE_MAX_CONNECTIONS=1 for TP or CP > 1 unless FSDP), and
torch.distributed.init_process_group(env://). Then, in place of training, it
checks what the plugin's layout check promises: the ranks of each
tensor-parallel group (consecutive, TP fastest) share one node, or, with
MEGATRON_STANDIN_GROUPS_BY=block, one Slurm topology block (SLURM_TOPOLOGY_ADDR,
Slurm's own per-task answer under topology/block: an NVLink domain), and so
do the expert-parallel groups (EP ranks ETP apart, ETP = TP by default, as
Megatron core's RankGenerator forms them). Prints one RDZV_REPORT line per rank.
"""
import argparse
import json
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def parse():
    p = argparse.ArgumentParser(description="Megatron-LM Arguments (stand-in)", allow_abbrev=False)
    p.add_argument("--tensor-model-parallel-size", type=int, default=1)
    p.add_argument("--pipeline-model-parallel-size", type=int, default=1)
    p.add_argument("--context-parallel-size", type=int, default=1)
    p.add_argument("--expert-model-parallel-size", type=int, default=1)
    p.add_argument("--expert-tensor-parallel-size", type=int, default=None)
    p.add_argument("--fp8-format", default=None)
    p.add_argument("--use-torch-fsdp2", action="store_true")
    args, _ = p.parse_known_args()
    return args


def main():
    args = parse()
    rank = int(os.getenv("RANK", "0"))
    world = int(os.getenv("WORLD_SIZE", "1"))
    local_rank = int(os.getenv("LOCAL_RANK", "0"))
    tp, pp, cp = (args.tensor_model_parallel_size, args.pipeline_model_parallel_size,
                  args.context_parallel_size)
    if world % (tp * pp * cp) != 0:
        sys.exit(f"megatron stand-in: world size {world} is not divisible by tensor ({tp}) x "
                 f"pipeline ({pp}) x context ({cp}) parallel size")
    if (tp > 1 or cp > 1) and not args.use_torch_fsdp2 \
            and os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1":
        sys.exit("megatron stand-in: Using tensor model parallelism or context parallelism "
                 "require setting the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1")
    timeout = timedelta(seconds=float(os.environ.get("RDZV_TEST_PG_TIMEOUT", "60")))
    dist.init_process_group("gloo", init_method="env://", timeout=timeout)
    assert dist.get_rank() == rank and dist.get_world_size() == world
    node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
    where = node
    if os.environ.get("MEGATRON_STANDIN_GROUPS_BY") == "block":
        pattern = os.environ["SLURM_TOPOLOGY_ADDR_PATTERN"].split(".")
        where = os.environ["SLURM_TOPOLOGY_ADDR"].split(".")[pattern.index("block")]
    nodes = [None] * world
    dist.all_gather_object(nodes, where)
    split = [g for g in range(world // tp) if len(set(nodes[g * tp:(g + 1) * tp])) != 1]
    ep = args.expert_model_parallel_size
    etp = args.expert_tensor_parallel_size or tp
    ep_split = []
    for r in range(world):
        if (r // etp) % ep == 0 and len({nodes[r + k * etp] for k in range(ep)}) != 1:
            ep_split.append(r)
    split += [f"ep@{r}" for r in ep_split]
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    report = {"env": {k: os.environ.get(k) for k in
                      ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                       "MASTER_PORT", "SLURM_PROCID", "SLURM_LOCALID", "SLURMD_NODENAME",
                       "CUDA_DEVICE_MAX_CONNECTIONS", "NODE_RANK", "GROUP_RANK",
                       "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE",
                       "TORCHELASTIC_USE_AGENT_STORE", "CUDA_VISIBLE_DEVICES",
                       "SLURM_TOPOLOGY_ADDR", "RDZV_NVLINK_DOMAIN", "RDZV_NVLINK_DOMAIN_SIZE",
                       "RDZV_NVLINK_DOMAIN_RANK"]},
              "where": where, "ep": ep,
              "rank": rank, "world": world, "local_rank": local_rank, "node": node,
              "allreduce": t.item(), "expect": world * (world + 1) / 2,
              "tp": tp, "pp": pp, "cp": cp, "tp_groups_split": split,
              "nccl": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}
    sys.stdout.flush()  # one write(2) per line: lines of tasks sharing a stdout stay whole
    os.write(sys.stdout.fileno(), ("RDZV_REPORT " + json.dumps(report, sort_keys=True) + "\n").encode())
    dist.barrier()
    dist.destroy_process_group()
    if split:
        sys.exit(f"megatron stand-in: parallel groups {split} straddle {'blocks' if where != node else 'nodes'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
