# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for submitit.helpers.TorchDistributedEnvironment (see ../README.md).

Behaviours of the real code reproduced here (submitit/helpers.py and
submitit/slurm/slurm.py's JobEnvironment; ../shared/frameworks/README.md):
- the master is the first host of the *job* (SLURM_JOB_NODELIST), not of
  the step; the port is MASTER_PORT when set, else one drawn from the job id
  in 20000-60000; rank, world size and local rank from SLURM_PROCID,
  SLURM_NTASKS and SLURM_LOCALID; LOCAL_WORLD_SIZE is tasks / nodes;
- export() raises RuntimeError when any of MASTER_ADDR, MASTER_PORT, RANK,
  WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE is already set (so under the
  plugin's --rdzv=torch it always raises); export(overwrite=True) writes
  them anyway and sets CUDA_VISIBLE_DEVICES to the local rank.
"""
import os
import random
import subprocess

_KEYS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def _hostnames(nodelist):
    out = subprocess.run(["scontrol", "show", "hostnames", nodelist], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


class TorchDistributedEnvironment:
    def __init__(self):
        env = os.environ
        self.master_addr = _hostnames(env["SLURM_JOB_NODELIST"])[0]
        port = env.get("MASTER_PORT")
        self.master_port = int(port) if port else random.Random(int(env["SLURM_JOB_ID"])).randint(20000, 60000)
        self.rank = int(env["SLURM_PROCID"])
        self.world_size = int(env["SLURM_NTASKS"])
        self.local_rank = int(env["SLURM_LOCALID"])
        self.local_world_size = self.world_size // int(env.get("SLURM_NNODES", env.get("SLURM_JOB_NUM_NODES", "1")))

    def export(self, set_cuda_visible_devices=True, overwrite=False):
        values = {"MASTER_ADDR": self.master_addr, "MASTER_PORT": str(self.master_port),
                  "RANK": str(self.rank), "WORLD_SIZE": str(self.world_size),
                  "LOCAL_RANK": str(self.local_rank),
                  "LOCAL_WORLD_SIZE": str(self.local_world_size)}
        if not overwrite:
            for key in _KEYS:
                if key in os.environ:
                    raise RuntimeError(f"Cannot export environment variables as {key} is already set")
        if set_cuda_visible_devices:
            values["CUDA_VISIBLE_DEVICES"] = str(self.local_rank)
        os.environ.update(values)
        return self
