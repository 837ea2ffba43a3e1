# SPDX-License-Identifier: GPL-2.0-or-later
"""One rank of an end-to-end test: meet through env://, all-reduce, report.

Prints one line "RDZV_REPORT {json}" with the rank's view and the all-reduce
result; exits non-zero when the collective gives a wrong answer.
"""
import json
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
        "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "NODE_RANK",
        "MASTER_ADDR", "MASTER_PORT", "SLURMD_NODENAME", "SLURM_PROCID",
        "SLURM_LOCALID", "CUDA_VISIBLE_DEVICES", "TORCHELASTIC_USE_AGENT_STORE"]


def main():
    env = {k: os.environ.get(k) for k in KEYS}
    timeout = float(os.environ.get("RDZV_TEST_PG_TIMEOUT", "30"))
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    expect = world * (world + 1) / 2
    report = {"env": env, "rank": rank, "world": world, "allreduce": t.item(),
              "expect": expect, "node": os.environ.get("SLURMD_NODENAME", socket.gethostname())}
    # One write(2) under PIPE_BUF: workers sharing a pipe (torchrun) cannot interleave it.
    sys.stdout.flush()
    os.write(1, ("RDZV_REPORT " + json.dumps(report, sort_keys=True) + "\n").encode())
    dist.barrier()
    dist.destroy_process_group()
    return 0 if t.item() == expect else 1


if __name__ == "__main__":
    sys.exit(main())
