# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for deepspeed.launcher.runner, the `deepspeed` command.

What the real runner (DeepSpeed 0.19.5) does when srun starts it as a task,
measured on 2 nodes (../shared/frameworks/README.md), reproduced here:
- it reads no SLURM_* variable and, without a hostfile, starts its workers on
  this node only: one per entry of CUDA_VISIBLE_DEVICES (int() of each entry:
  a GPU-uuid entry crashes it, here too), or one without GPUs (real: one per
  accelerator; CPU: 1 here);
- each worker gets RANK = its index, WORLD_SIZE = the workers it started,
  LOCAL_RANK, LOCAL_SIZE, CROSS_RANK=0, CROSS_SIZE=1, MASTER_ADDR=127.0.0.1,
  MASTER_PORT=29500 (its default), and --local_rank=N appended to argv: every
  task of a multi-task step trains in a world of its own;
- the runner exits with the first non-zero worker status, else 0.
Every option it would take is accepted and ignored; the first word that is
not an option is the script.
"""
import os
import subprocess
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    while argv and argv[0].startswith("-"):
        opt = argv.pop(0)
        if "=" not in opt and opt not in ("--no_python", "--no_local_rank", "--no_ssh",
                                          "--force_multi", "-m", "--module",
                                          "--elastic_training", "--bind_cores_to_rank") and argv:
            argv.pop(0)
    if not argv:
        print("deepspeed stand-in: no script", file=sys.stderr)
        return 2
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    slots = [int(v) for v in visible.split(",")] if visible else [0]
    procs = []
    for i, _ in enumerate(slots):
        env = dict(os.environ, RANK=str(i), LOCAL_RANK=str(i), WORLD_SIZE=str(len(slots)),
                   LOCAL_SIZE=str(len(slots)), CROSS_RANK="0", CROSS_SIZE="1",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
        procs.append(subprocess.Popen([sys.executable, "-u"] + argv + [f"--local_rank={i}"],
                                      env=env))
    rc = 0
    for p in procs:
        r = p.wait()
        rc = rc or r
    return rc


if __name__ == "__main__":
    sys.exit(main())
