# SPDX-License-Identifier: GPL-2.0-or-later
"""A rank that fails on purpose (tests/0032-0037, bench/run-bench.sh fail part).

    fail_rank.py HOW RANK STAMP [NODE]

HOW:
  exit1-before-init  rank RANK exits 1 before init_process_group; the others
                     init and wait there (PyTorch's timeout: 30 minutes)
  kill-after-init    every rank inits and passes a barrier; then rank RANK
                     kills itself with SIGKILL and the others "compute"
                     (sleep 600) as a step whose collective never returns would
  exit0-early        every rank inits and passes a barrier; rank RANK exits
                     0 at once, the others print "survived" 3 s later
  node-once          every rank inits; the ranks on NODE exit 1 when
                     TORCHELASTIC_RESTART_COUNT is 0 (the first attempt of
                     rdzv-retry), otherwise all all-reduce and print "trained"
  node-killed-once   the same, but the ranks on NODE are killed (SIGKILL, as
                     the OOM killer or a dying node would) instead of exiting
  bug                rank RANK raises ValueError before init_process_group,
                     at every attempt (a bug in the script)

Writes the failure's wall-clock time (time.time()) to STAMP before failing,
so a test measures from the failure to srun's exit. Every rank prints
"rank R on NODE restart=TORCHELASTIC_RESTART_COUNT".
Under torchrun, RANK is the worker's global rank.
"""
import os
import signal
import socket
import sys
import time


def stamp(path):
    with open(path + ".tmp%d" % os.getpid(), "w") as f:
        f.write("%.6f\n" % time.time())
    os.replace(path + ".tmp%d" % os.getpid(), path)


def main():
    how, bad, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    node_arg = sys.argv[4] if len(sys.argv) > 4 else ""
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "?")
    print("rank %d on %s restart=%s" % (rank, node, restart), flush=True)
    if how == "exit1-before-init" and rank == bad:
        stamp(path)
        sys.exit(1)
    if how == "bug" and rank == bad:
        stamp(path)
        raise ValueError("a bug in the script: learning rate %r" % "1e-3x")
    import torch
    import torch.distributed as dist
    if how in ("node-once", "node-killed-once") and node == node_arg and restart == "0":
        stamp(path)
        if how == "node-killed-once":
            os.kill(os.getpid(), signal.SIGKILL)
        sys.exit(1)
    dist.init_process_group("gloo")
    if how in ("node-once", "node-killed-once", "bug"):
        t = torch.tensor([rank + 1])
        dist.all_reduce(t)
        print("rank %d trained sum=%d of %d" % (rank, int(t), world * (world + 1) // 2),
              flush=True)
        # An orderly end: rank 0 hosts the store; a rank still tearing down
        # its group when rank 0 is gone can fail its exit (seen once on a
        # loaded machine: srun 143 after every rank had trained).
        dist.barrier()
        dist.destroy_process_group()
        return
    dist.barrier()
    if rank == bad:
        stamp(path)
        if how == "kill-after-init":
            os.kill(os.getpid(), signal.SIGKILL)
        sys.exit(0)
    if how == "exit0-early":
        time.sleep(3)
        print("rank %d survived" % rank, flush=True)
        return
    time.sleep(600)
    print("rank %d slept through" % rank, flush=True)


if __name__ == "__main__":
    main()
