# SPDX-License-Identifier: GPL-2.0-or-later
"""A step where one rank is not where the others are (tests/0105, rdzv-hang).

    hang_rank.py HOW:RANK[,HOW:RANK...] DIR [default-timeout]

Every rank initialises gloo (env://), passes a barrier, then:
  each rank named, by its HOW:
    sleep    sleeps in wait_here() (time.sleep: the issue's case)
    busy     spins in a Python loop in spin_here()
    syscall  blocks in read() on a pipe nobody writes, in block_here()
  the others call all_reduce, which waits for the named ranks forever.
Each rank writes DIR/rank-R ("R NODE JOB.STEP PID") just before its last
call, so a test knows when every rank is in place; the step ends when the
test cancels it. Under torchrun, RANK is the worker's global rank.
With default-timeout the process group gets torch.distributed's default
timeout (tests/0106: --rdzv-collective-timeout sets it), else 3600 s.
"""
import datetime
import os
import socket
import sys
import time


def arrived(d, rank):
    node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
    js = "%s.%s" % (os.environ.get("SLURM_JOB_ID", "?"), os.environ.get("SLURM_STEP_ID", "?"))
    tmp = os.path.join(d, ".rank-%d.%d" % (rank, os.getpid()))
    with open(tmp, "w") as f:
        f.write("%d %s %s %d\n" % (rank, node, js, os.getpid()))
    os.replace(tmp, os.path.join(d, "rank-%d" % rank))


def wait_here():
    time.sleep(3600)


def spin_here():
    n = 0
    while True:
        n += 1


def block_here():
    r, w = os.pipe()
    os.read(r, 1)


def main():
    bad = dict((int(r), how) for how, r in (x.split(":") for x in sys.argv[1].split(",")))
    d = sys.argv[2]
    import torch
    import torch.distributed as dist
    if sys.argv[3:] == ["default-timeout"]:
        dist.init_process_group("gloo")
    else:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3600))
    rank = dist.get_rank()
    dist.barrier()
    arrived(d, rank)
    if rank in bad:
        {"sleep": wait_here, "busy": spin_here, "syscall": block_here}[bad[rank]]()
    t = torch.ones(1)
    dist.all_reduce(t)
    print("rank %d: all_reduce returned %s" % (rank, t.item()), flush=True)


main()
