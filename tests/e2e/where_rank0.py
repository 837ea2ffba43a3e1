# SPDX-License-Identifier: GPL-2.0-or-later
"""One task of tests/0102: print where this task runs and every "where is rank
0" and "which node am I" value the plugin gave it, as one line
"RDZV_WHERE {json}"; with --meet, also meet the others through env:// and
all-reduce first (a report only from ranks that really met)."""
import json
import os
import sys
from datetime import timedelta

KEYS = ["SLURM_PROCID", "SLURM_NODEID", "SLURMD_NODENAME", "RANK", "LOCAL_RANK", "WORLD_SIZE",
        "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK", "CROSS_RANK", "PET_NODE_RANK",
        "MASTER_ADDR", "PET_MASTER_ADDR", "JAX_COORDINATOR_ADDRESS", "JAX_PROCESS_ID",
        "SLURM_TOPOLOGY_ADDR"]


def main():
    env = {k: os.environ.get(k) for k in KEYS}
    if sys.argv[1:] == ["--meet"]:
        import torch
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=30))
        t = torch.tensor([1.0])
        dist.all_reduce(t)
        env["allreduce"] = t.item()
        dist.destroy_process_group()
    sys.stdout.flush()
    os.write(1, ("RDZV_WHERE " + json.dumps(env, sort_keys=True) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
