# SPDX-License-Identifier: GPL-2.0-or-later
"""One worker of the parity test (tests/0029): dump the environment, then
meet the others through env:// and all-reduce, so that a dump is only
trusted from a run whose ranks really met.

Prints "RDZV_ENV ID [name, value]" lines, one per variable (the whole
environment; ID tells processes apart), or "RDZV_LAUNCHER ..." lines when
run with --launcher (the environment torchrun itself starts from, on each
node)."""
import json
import os
import sys
from datetime import timedelta


def emit(tag, env):
    # One write(2) per variable, each under 1 KiB: workers sharing
    # torchrun's stdout pipe cannot interleave inside a line (PIPE_BUF), nor
    # can srun, which forwards task output in messages of up to 1 KiB.
    # Longer values (PATH, LS_COLORS...) are cut, the same way in both runs.
    sys.stdout.flush()
    me = "%s:%d" % (os.uname().nodename, os.getpid())
    for k, v in sorted(env.items()):
        line = "%s %s %s\n" % (tag, me, json.dumps([k, v[:600]]))
        os.write(1, line.encode())
    os.write(1, ("%s %s %s\n" % (tag, me, json.dumps(["", "END"]))).encode())


def main():
    if sys.argv[1:] == ["--launcher"]:
        emit("RDZV_LAUNCHER", dict(os.environ))
        return 0
    emit("RDZV_ENV", dict(os.environ))
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="env://",
                            timeout=timedelta(seconds=float(os.environ.get("RDZV_TEST_PG_TIMEOUT", "30"))))
    t = torch.tensor([1.0])
    dist.all_reduce(t)
    ok = t.item() == dist.get_world_size()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
