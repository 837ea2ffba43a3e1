# SPDX-License-Identifier: GPL-2.0-or-later
"""One rank of a container test: report what the task sees inside the
container, meet through env:// (gloo), all-reduce.

Prints "RDZV_REPORT {json}" in the format of tests/e2e/check_reports.py, with
more variables (the image's, the profile's and binding's) and whether it
ran inside the image (tests/containers/image.def leaves /rdzv-image there),
its CPU affinity, and whether the NCCL environment
plugin named by NCCL_ENV_PLUGIN is visible and loads (dlopen) in there. Exits non-zero when the collective is wrong.
"""
import ctypes
import json
import os
import socket
import sys
from datetime import timedelta

KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
        "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "NODE_RANK",
        "MASTER_ADDR", "MASTER_PORT", "SLURMD_NODENAME", "SLURM_PROCID",
        "SLURM_LOCALID", "CUDA_VISIBLE_DEVICES", "TORCHELASTIC_USE_AGENT_STORE",
        "PYTORCH_VERSION", "OMP_NUM_THREADS", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA",
        "NCCL_DEBUG", "NCCL_ENV_PLUGIN", "RDZV_NCCL_POLICY", "UCX_NET_DEVICES",
        "CUDA_DEVICE_ORDER", "USE_LIBUV", "SLURM_JOB_ID", "RDZV_IMAGE_VAR",
        "APPTAINER_CONTAINER"]


def main():
    # Only the names that are set: a report line stays under the 1 KiB srun
    # forwards in one piece (longer lines of two tasks can interleave).
    env = {k: os.environ[k] for k in KEYS if k in os.environ}
    plugin = env.get("NCCL_ENV_PLUGIN")
    loads = False
    if plugin and os.access(plugin, os.R_OK):
        try:
            ctypes.CDLL(plugin)
            loads = True
        except OSError:
            pass
    cpus = ""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                cpus = line.split()[1]
    report = {"env": env, "in_image": os.path.exists("/rdzv-image"),
              "node": os.environ.get("SLURMD_NODENAME", socket.gethostname()),
              "nccl_env_plugin_visible": bool(plugin) and os.access(plugin, os.R_OK),
              "nccl_env_plugin_loads": loads, "cpus": cpus}
    if os.environ.get("RDZV_TEST_NO_MEET"):
        os.write(1, ("RDZV_REPORT " + json.dumps(report, sort_keys=True) + "\n").encode())
        return 0
    import torch
    import torch.distributed as dist
    timeout = float(os.environ.get("RDZV_TEST_PG_TIMEOUT", "30"))
    dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    expect = world * (world + 1) / 2
    report.update({"rank": rank, "world": world, "allreduce": t.item(), "expect": expect})
    sys.stdout.flush()
    os.write(1, ("RDZV_REPORT " + json.dumps(report, sort_keys=True) + "\n").encode())
    dist.barrier()
    dist.destroy_process_group()
    return 0 if t.item() == expect else 1


if __name__ == "__main__":
    sys.exit(main())
