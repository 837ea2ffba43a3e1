# SPDX-License-Identifier: GPL-2.0-or-later
"""The quick start's training stand-in: one rank meets the others through
torch.distributed's env:// (the variables rdzv.so set), all-reduces, and
prints what it was given. Exits non-zero when the sum is wrong."""
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
want = world * (world + 1) / 2
e = os.environ
line = (f"rank {rank}/{world} on {e.get('SLURMD_NODENAME')}: LOCAL_RANK={e['LOCAL_RANK']} "
        f"LOCAL_WORLD_SIZE={e['LOCAL_WORLD_SIZE']} NODE_RANK={e['NODE_RANK']} "
        f"MASTER_ADDR={e['MASTER_ADDR']} MASTER_PORT={e['MASTER_PORT']} "
        f"CUDA_VISIBLE_DEVICES={e.get('CUDA_VISIBLE_DEVICES', '-')} "
        f"all_reduce(sum of rank+1)={t.item():g} {'OK' if t.item() == want else 'WRONG, want %g' % want}")
sys.stdout.flush()
os.write(1, (line + "\n").encode())
dist.destroy_process_group()
sys.exit(0 if t.item() == want else 1)
