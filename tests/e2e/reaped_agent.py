# SPDX-License-Identifier: GPL-2.0-or-later
"""A torchrun agent, as slurmstepd's watcher sees one, that is reaped before
the watcher's deadline and leaves the step's teardown held (tests/0130).

    reaped_agent.py DIR

The task (launched by srun --rdzv=torchrun) writes its pid to DIR/agent.pid
and forks one worker with torchrun's RANK and TORCHELASTIC_RUN_ID. The
worker waits on the FIFO DIR/go (the test opens it once it watches this
pid) and exits 1. The agent lets the watcher see the worker's zombie (its
tick is 50 ms: the zombie stays 0.3 s), reaps it, and exits 0 at once: the
watcher's 1 s deadline (RDZV_AGENT_GRACE_MS) is still ahead. Before that
it forks a process in a session of its own that keeps the step's output
open, so slurmstepd waits for it (up to 300 s) before the exit hook that
stops the watcher: the window issue 45 describes. That process ends when
the test writes to the FIFO DIR/release, or after 60 s by itself.

Real torchrun cannot stand here: PyTorch 2.x's agent reaps its worker
within 0.1 s (the watcher then stands down) and 1.x's waits 300 s.
"""
import os
import select
import sys
import time


def main():
    d = sys.argv[1]
    tmp = os.path.join(d, "agent.pid.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(tmp, os.path.join(d, "agent.pid"))
    env = dict(os.environ, RANK="0", LOCAL_RANK="0", TORCHELASTIC_RUN_ID="reaped-agent")
    worker = os.fork()
    if worker == 0:
        try:
            with open(os.path.join(d, "go"), "rb") as f:  # blocks until the test opens it
                f.read(1)
        finally:
            os._exit(1)
    # The worker's exit, its zombie kept for the watcher (WNOWAIT).
    os.waitid(os.P_PID, worker, os.WEXITED | os.WNOWAIT)
    time.sleep(0.3)
    os.waitpid(worker, 0)
    if os.fork() == 0:
        os.setsid()
        fd = os.open(os.path.join(d, "release"), os.O_RDWR)  # never EOF: only a write ends the wait
        select.select([fd], [], [], 60)
        os._exit(0)
    sys.exit(0)


if __name__ == "__main__":
    main()
