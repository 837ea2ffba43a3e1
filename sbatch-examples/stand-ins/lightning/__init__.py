# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for Lightning's Fabric (lightning 2.x; see ../README.md).

Behaviours of the real code reproduced here (lightning/fabric/connector.py
_choose_cluster_environment, plugins/environments/slurm.py and
torchelastic.py, pytorch/trainer/connectors/signal_connector.py; measured with
real Fabric on 2 nodes x 2 ranks, ../shared/frameworks/README.md):
- the cluster environment, first match wins: TorchElastic when
  TORCHELASTIC_RUN_ID is set; SLURM when SLURM_NTASKS is set and the job is
  not named bash or interactive; else Lightning's own (one process here);
- SLURM: ranks from SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, world size
  SLURM_NTASKS; MASTER_ADDR/MASTER_PORT when set, else the first node of
  SLURM_NODELIST and 15000 + the job id's last 4 digits; RuntimeError for
  SLURM_NTASKS > 1 without SLURM_NTASKS_PER_NODE ("You set --ntasks=N ...");
  ValueError when SLURM_NTASKS_PER_NODE differs from devices or SLURM_NNODES
  from num_nodes;
- auto-requeue (#SBATCH --signal=SIGUSR1@90) exists under SLURM only: a
  SIGUSR1 handler that, on global rank 0, runs `scontrol requeue JOBID`;
- TorchElastic: ranks from RANK, LOCAL_RANK, GROUP_RANK; devices x num_nodes
  must equal WORLD_SIZE; no SIGUSR1 handler;
- devices="auto" is the GPUs the task sees on a GPU accelerator, 1 on CPU.
Then torch.distributed on gloo at the master, so a wrong address, port or
rank still breaks the run.
"""
import os
import signal
import subprocess
from datetime import timedelta

import torch.distributed as dist

__version__ = "0.0+rdzv-stand-in"


def _slurm_first_node(nodelist):
    import re
    m = re.match(r"([^,\[]*)(\[([0-9]+))?", nodelist)
    return m.group(1) + (m.group(3) or "")


class Fabric:
    def __init__(self, accelerator="auto", devices="auto", num_nodes=1, strategy="ddp"):
        self.accelerator = accelerator
        if devices == "auto":
            vis = os.environ.get("CUDA_VISIBLE_DEVICES", "")
            devices = len([v for v in vis.split(",") if v]) if accelerator == "gpu" else 1
        self.devices, self.num_nodes = int(devices), int(num_nodes)
        self.requeue_handler = False
        self.environment = self._choose()

    def _choose(self):
        if "TORCHELASTIC_RUN_ID" in os.environ:
            self.global_rank = int(os.environ["RANK"])
            self.local_rank = int(os.environ["LOCAL_RANK"])
            self.node_rank = int(os.environ["GROUP_RANK"])
            self.world_size = int(os.environ["WORLD_SIZE"])
            if self.devices * self.num_nodes != self.world_size:
                raise ValueError(f"lightning stand-in: devices ({self.devices}) x num_nodes "
                                 f"({self.num_nodes}) != WORLD_SIZE ({self.world_size})")
            self.main_address = os.environ["MASTER_ADDR"]
            self.main_port = int(os.environ["MASTER_PORT"])
            return "TorchElasticEnvironment"
        if "SLURM_NTASKS" in os.environ and os.environ.get("SLURM_JOB_NAME") not in ("bash", "interactive"):
            ntasks = int(os.environ["SLURM_NTASKS"])
            if ntasks > 1 and "SLURM_NTASKS_PER_NODE" not in os.environ:
                raise RuntimeError(f"You set `--ntasks={ntasks}` in your SLURM bash script, but "
                                   "this variable is not supported. HINT: Use "
                                   f"`--ntasks-per-node={ntasks}` instead.")
            tpn = os.environ.get("SLURM_NTASKS_PER_NODE")
            if tpn is not None and int(tpn) != self.devices:
                raise ValueError(f"You set `devices={self.devices}` in Lightning, but the number "
                                 "of tasks per node configured in SLURM "
                                 f"`--ntasks-per-node={tpn}` does not match.")
            nn = os.environ.get("SLURM_NNODES")
            if nn is not None and int(nn) != self.num_nodes:
                raise ValueError(f"You set `num_nodes={self.num_nodes}` in Lightning, but the "
                                 f"number of nodes configured in SLURM `--nodes={nn}` does not "
                                 "match.")
            self.global_rank = int(os.environ["SLURM_PROCID"])
            self.local_rank = int(os.environ["SLURM_LOCALID"])
            self.node_rank = int(os.environ["SLURM_NODEID"])
            self.world_size = ntasks
            self.main_address = os.environ.get("MASTER_ADDR") or _slurm_first_node(os.environ["SLURM_NODELIST"])
            self.main_port = int(os.environ.get("MASTER_PORT") or 15000 + int(os.environ["SLURM_JOB_ID"][-4:]))
            self._register_requeue()
            return "SLURMEnvironment"
        self.global_rank = self.local_rank = self.node_rank = 0
        self.world_size = 1
        self.main_address, self.main_port = "127.0.0.1", 29500
        return "LightningEnvironment"

    def _register_requeue(self):
        def handler(signum, frame):
            if self.global_rank == 0:
                job = os.environ.get("SLURM_ARRAY_JOB_ID", os.environ["SLURM_JOB_ID"])
                if "SLURM_ARRAY_TASK_ID" in os.environ:
                    job += "_" + os.environ["SLURM_ARRAY_TASK_ID"]
                # Said before the call, as Lightning logs "handling auto-requeue
                # signal" first: Slurm may end this process as soon as the
                # requeue is accepted, before the result line is written.
                print(f"lightning stand-in: auto-requeue: rank 0 got SIGUSR1, scontrol requeue "
                      f"{job}", flush=True)
                r = subprocess.run(["scontrol", "requeue", job], capture_output=True, text=True)
                print(f"lightning stand-in: auto-requeue: scontrol requeue {job}: "
                      f"{'ok' if r.returncode == 0 else r.stderr.strip()}", flush=True)
        signal.signal(signal.SIGUSR1, handler)
        self.requeue_handler = True

    def launch(self):
        if self.world_size > 1:
            extra = {}
            dist.init_process_group("gloo", init_method=f"tcp://{self.main_address}:{self.main_port}",
                                    rank=self.global_rank, world_size=self.world_size,
                                    timeout=timedelta(seconds=60), **extra)

    def all_reduce(self, tensor):
        if self.world_size > 1:
            dist.all_reduce(tensor)
        return tensor

    def barrier(self):
        if self.world_size > 1:
            dist.barrier()
