#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tcp-rendezvous.py: the smallest rendezvous that notices a port collision.

Each task reads RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (as the plugin
set them). Rank 0 binds MASTER_ADDR:MASTER_PORT with SO_REUSEADDR and
without SO_REUSEPORT, as torch's TCPStore does: a connection of an earlier
step left in TIME_WAIT does not block it (the test cluster restarts job ids
at 1, so earlier tests used the same derived ports), but a second step
listening on the same address and port makes the bind fail. It accepts the
other ranks, checks they all belong to its own job step (cross-talk between
steps is the other face of a collision), holds the port for HOLD seconds so
that concurrent steps overlap, and answers each. Every task prints one line:

  RDZV job=J step=S rank=R port=P ok|FAIL reason

and exits 0 only on ok. No torch: cheap enough for 20 steps on 2 cores.
"""
import os
import socket
import sys
import time

HOLD = float(os.environ.get("RDZV_TEST_HOLD", "3"))
TIMEOUT = float(os.environ.get("RDZV_TEST_TIMEOUT", "60"))


def main():
    env = os.environ
    ident = "%s.%s" % (env.get("SLURM_JOB_ID", "?"), env.get("SLURM_STEP_ID", "?"))
    head = "RDZV job=%s step=%s rank=%s port=%s" % (
        env.get("SLURM_JOB_ID", "?"), env.get("SLURM_STEP_ID", "?"),
        env.get("RANK", "?"), env.get("MASTER_PORT", "?"))
    try:
        rank = int(env["RANK"])
        world = int(env["WORLD_SIZE"])
        addr = env["MASTER_ADDR"]
        port = int(env["MASTER_PORT"])
    except (KeyError, ValueError) as e:
        print("%s FAIL missing rendezvous variable %s" % (head, e), flush=True)
        return 1
    deadline = time.time() + TIMEOUT
    if rank == 0:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((socket.gethostbyname(addr), port))
        except OSError as e:
            print("%s FAIL bind %s:%d: %s" % (head, addr, port, e), flush=True)
            return 1
        s.listen(world)
        s.settimeout(max(1.0, deadline - time.time()))
        peers = []
        try:
            while len(peers) < world - 1:
                c, _ = s.accept()
                c.settimeout(10)
                who = c.recv(128).decode(errors="replace").strip()
                if who.split(" ")[0] != ident:
                    c.sendall(b"wrong step\n")
                    c.close()
                    print("%s FAIL a task of step %s reached this step's port" % (head, who),
                          flush=True)
                    return 1
                peers.append(c)
        except socket.timeout:
            print("%s FAIL only %d of %d ranks arrived" % (head, len(peers) + 1, world), flush=True)
            return 1
        time.sleep(HOLD)
        for c in peers:
            c.sendall(b"ok\n")
            c.close()
        s.close()
        print("%s ok" % head, flush=True)
        return 0
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                print("%s FAIL cannot reach %s:%d" % (head, addr, port), flush=True)
                return 1
            time.sleep(0.2)
    c.settimeout(max(1.0, deadline - time.time()))
    c.sendall(("%s %d\n" % (ident, rank)).encode())
    try:
        answer = c.recv(64).decode(errors="replace").strip()
    except socket.timeout:
        answer = "timeout"
    print("%s %s" % (head, "ok" if answer == "ok" else "FAIL rank 0 said " + answer), flush=True)
    return 0 if answer == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
