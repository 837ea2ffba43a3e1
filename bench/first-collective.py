# SPDX-License-Identifier: GPL-2.0-or-later
"""One rank of the time-to-first-collective benchmark (bench/run-bench.sh).

Imports torch, meets the other ranks through env:// (gloo), runs one
all-reduce and prints one line (a single write(2), so that torchrun's
workers sharing a pipe cannot interleave it):

  BENCH_FC rank=R world=W start=T import=T init=T allreduce=T ok=1

T are wall-clock seconds since the epoch (every "node" of the local cluster
is this machine, so they compare with the launcher's start time). The
barrier after the all-reduce keeps rank 0's store up until every rank is
done; it is not timed.
"""
import os
import sys
import time

T_START = time.time()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from datetime import timedelta  # noqa: E402


def main():
    t_import = time.time()
    timeout = float(os.environ.get("BENCH_PG_TIMEOUT", "120"))
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=timeout))
    t_init = time.time()
    x = torch.ones(1)
    dist.all_reduce(x)
    t_allreduce = time.time()
    world = dist.get_world_size()
    ok = x.item() == world
    line = ("BENCH_FC rank=%d world=%d start=%.6f import=%.6f init=%.6f allreduce=%.6f ok=%d\n"
            % (dist.get_rank(), world, T_START, t_import, t_init, t_allreduce, int(ok)))
    sys.stdout.flush()
    os.write(1, line.encode())
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
