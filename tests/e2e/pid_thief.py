# SPDX-License-Identifier: GPL-2.0-or-later
"""Another user's process takes the pid of a reaped torchrun agent, and we
see whether slurmstepd's watcher signals it (tests/0130). Run as root.

    pid_thief.py DIR UID SLURMD_LOG

Waits for DIR/agent.pid (reaped_agent.py), takes a pidfd of the agent (to
hear its exit), then opens DIR/go, which lets the agent's worker fail: the
watcher reports it and gives the agent 1 s. When the agent has exited and
slurmstepd has reaped it, writes PID-1 to /proc/sys/kernel/ns_last_pid
and forks at once: the child, with UID as its uid and gid, runs sleep and
normally gets the agent's pid. Then waits for the watcher's line about that
pid in SLURMD_LOG and until 2.5 s after the worker's failure (past the
watcher's deadline, 1 s after it saw the worker's zombie), and prints
one line:

    took PID uid UID: survived      the child lived past the deadline
    took PID uid UID: killed by N   something sent signal N to it
    missed PID (got P)              another fork took the pid first: retry

The child is this script's own; it ends it (SIGTERM) and reaps it.
"""
import os
import re
import select
import signal
import sys
import time


def wait_file(path, secs):
    end = time.monotonic() + secs
    while not os.path.exists(path):
        if time.monotonic() > end:
            sys.exit("no %s after %d s" % (path, secs))
        time.sleep(0.01)


def main():
    d, uid, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    wait_file(os.path.join(d, "agent.pid"), 60)
    with open(os.path.join(d, "agent.pid")) as f:
        pid = int(f.read())
    pfd = os.pidfd_open(pid)
    with open(log, "rb") as f:
        f.seek(0, os.SEEK_END)
        log_at = f.tell()
    t_go = time.monotonic()
    with open(os.path.join(d, "go"), "wb") as f:  # the worker fails now
        f.write(b"x")
    if not select.select([pfd], [], [], 30)[0]:
        sys.exit("agent %d did not exit within 30 s" % pid)
    # Exited; slurmstepd reaps it within moments. The pid is free then.
    end = time.monotonic() + 5
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < end:
        pass
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))
    child = os.fork()
    if child == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        os.execv("/bin/sleep", ["sleep", "30"])
    if child != pid:
        os.kill(child, signal.SIGTERM)
        os.waitpid(child, 0)
        print("missed %d (got %d)" % (pid, child))
        return
    # The watcher's line about this pid, then past its deadline.
    line = re.compile(rb"torchrun \(pid %d\)" % pid)
    end = time.monotonic() + 10
    seen = False
    while not seen and time.monotonic() < end:
        with open(log, "rb") as f:
            f.seek(log_at)
            seen = any(line.search(x) for x in f)
        if not seen:
            time.sleep(0.05)
    rest = t_go + 2.5 - time.monotonic()
    if rest > 0:
        time.sleep(rest)
    got, status = os.waitpid(child, os.WNOHANG)
    if got == 0:
        print("took %d uid %d: survived%s" % (pid, uid, "" if seen else " (no watcher line)"))
        os.kill(child, signal.SIGTERM)
        os.waitpid(child, 0)
    elif os.WIFSIGNALED(status):
        print("took %d uid %d: killed by %d" % (pid, uid, os.WTERMSIG(status)))
    else:
        print("took %d uid %d: exited %d" % (pid, uid, os.WEXITSTATUS(status)))


if __name__ == "__main__":
    main()
