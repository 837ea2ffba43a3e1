# SPDX-License-Identifier: GPL-2.0-or-later
"""A Lightning Fabric smoke test: launch, all-reduce one number per rank,
check the sum, and print one "LIGHTNING_REPORT {json}" line per rank (the
cluster environment Lightning chose, its ranks and master, whether its Slurm
auto-requeue handler is installed, any TORCHELASTIC_* it saw).

    srun --rdzv=lightning python lightning_tiny.py --devices 2 --num-nodes 2

--wait SECS keeps the ranks alive that long (for SIGUSR1: auto-requeue).
"""
import argparse
import json
import os
import sys
import time

import torch
import lightning as L


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--devices", default="auto")
    p.add_argument("--num-nodes", type=int, default=1)
    p.add_argument("--accelerator", default="cpu")
    p.add_argument("--wait", type=float, default=0)
    a = p.parse_args()
    fabric = L.Fabric(accelerator=a.accelerator, devices=a.devices, num_nodes=a.num_nodes)
    fabric.launch()
    total = fabric.all_reduce(torch.tensor([fabric.global_rank + 1.0]))
    n = fabric.world_size
    good = float(total[0]) == n * (n + 1) / 2
    print("LIGHTNING_REPORT " + json.dumps({
        "environment": fabric.environment, "rank": fabric.global_rank, "world": n,
        "node": os.environ.get("SLURMD_NODENAME"), "main_address": fabric.main_address,
        "main_port": fabric.main_port, "requeue_handler": fabric.requeue_handler,
        "restart_count": os.environ.get("SLURM_RESTART_COUNT", "0"),
        "torchelastic": sorted(k for k in os.environ if k.startswith("TORCHELASTIC_")),
        "ok": good}, sort_keys=True), flush=True)
    end = time.time() + a.wait
    while time.time() < end:
        time.sleep(0.2)
    fabric.barrier()
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
