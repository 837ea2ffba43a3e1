# SPDX-License-Identifier: GPL-2.0-or-later
"""A rank that counts the warning signals it gets (tests/0107).

    signal_rank.py DIR

Installs handlers for SIGUSR1 and SIGUSR2 that append "SIG PID" to
DIR/sig-RANK, writes DIR/ready-RANK ("RANK NODE JOB.STEP PID FWD", FWD the
RDZV_FORWARD_SIGNALS it inherited, or -), then waits until DIR/stop exists
(at most 300 s) and exits 0. Under torchrun, RANK is the worker's rank.
"""
import os
import signal
import socket
import sys
import time

d = sys.argv[1]
rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
log = os.path.join(d, "sig-%d" % rank)


def got(signum, frame):
    with open(log, "a") as f:
        f.write("%s %d\n" % (signal.Signals(signum).name[3:], os.getpid()))


signal.signal(signal.SIGUSR1, got)
signal.signal(signal.SIGUSR2, got)
node = os.environ.get("SLURMD_NODENAME", socket.gethostname())
js = "%s.%s" % (os.environ.get("SLURM_JOB_ID", "?"), os.environ.get("SLURM_STEP_ID", "?"))
tmp = os.path.join(d, ".ready-%d" % rank)
with open(tmp, "w") as f:
    f.write("%d %s %s %d %s\n" % (rank, node, js, os.getpid(), os.environ.get("RDZV_FORWARD_SIGNALS", "-")))
os.replace(tmp, os.path.join(d, "ready-%d" % rank))
end = time.time() + 300
while not os.path.exists(os.path.join(d, "stop")) and time.time() < end:
    time.sleep(0.1)
sys.exit(0 if os.path.exists(os.path.join(d, "stop")) else 1)
