# SPDX-License-Identifier: GPL-2.0-or-later
"""A rank that trains until its node is killed or stopped (tests/0120).

    live_rank.py DIR TIMEOUT

Every rank joins gloo with a timeout of TIMEOUT seconds (the script's own,
so that a stopped peer is noticed without the plugin's hang machinery; 0:
none of its own, torch.distributed's default, which
--rdzv-collective-timeout sets),
writes DIR/started.RANK ("NODE PID"), then all-reduces every 0.1 s until
something ends it. On a rerun (TORCHELASTIC_RESTART_COUNT above 0, as
rdzv-retry sets it) it all-reduces once, prints "rank R on NODE trained
sum=S of W" and exits 0.
"""
import datetime
import os
import socket
import sys
import time


def main():
    out, timeout = sys.argv[1], int(sys.argv[2])
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    import torch
    import torch.distributed as dist
    if timeout > 0:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=timeout))
    else:
        dist.init_process_group("gloo")
    t = torch.tensor([rank + 1])
    dist.all_reduce(t)
    if restart != "0":
        print("rank %d on %s trained sum=%d of %d" % (rank, node, int(t), world * (world + 1) // 2),
              flush=True)
        # An orderly end (as fail_rank.py's): rank 0 hosts the store.
        dist.barrier()
        dist.destroy_process_group()
        return
    tmp = os.path.join(out, ".started.%d" % rank)
    with open(tmp, "w") as f:
        f.write("%s %d\n" % (node, os.getpid()))
    os.replace(tmp, os.path.join(out, "started.%d" % rank))
    while True:
        t = torch.tensor([1])
        dist.all_reduce(t)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
