# SPDX-License-Identifier: GPL-2.0-or-later
"""A wedged step (tests/0121): a rank that never joins, the others stuck in
their cleanup after their collective timed out.

    wedge_rank.py DIR STALL

Every rank initialises gloo (env://) with torch.distributed's default
timeout (what --rdzv-collective-timeout sets), passes a barrier, writes
DIR/arrived.R ("R NODE JOB.STEP PID"), then:
  rank STALL sleeps in never_joins() and never calls the all_reduce;
  the others call all_reduce in a try block whose finally calls cleanup(),
  which never returns (as a destroy_process_group or a barrier there hangs
  after the peer is gone).
No task ever exits by itself: only something outside the ranks ends the step.
"""
import os
import socket
import sys
import time


def arrived(d, rank):
    node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
    js = "%s.%s" % (os.environ.get("SLURM_JOB_ID", "?"), os.environ.get("SLURM_STEP_ID", "?"))
    tmp = os.path.join(d, ".arrived.%d" % rank)
    with open(tmp, "w") as f:
        f.write("%d %s %s %d\n" % (rank, node, js, os.getpid()))
    os.replace(tmp, os.path.join(d, "arrived.%d" % rank))


def never_joins():
    time.sleep(3600)


def cleanup():
    time.sleep(3600)


def main():
    d, stall = sys.argv[1], int(sys.argv[2])
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.barrier()
    arrived(d, rank)
    if rank == stall:
        never_joins()
    try:
        dist.all_reduce(torch.ones(1))
    finally:
        cleanup()


if __name__ == "__main__":
    main()
