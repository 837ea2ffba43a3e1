# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for the deepspeed package (see ../README.md).

Behaviours of the real DeepSpeed 0.19.5 reproduced here (measured, see
../shared/frameworks/README.md):
- init_distributed() needs all of RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
  LOCAL_RANK; with one missing it falls back to MPI discovery (here: raises);
- the engine asserts LOCAL_RANK == OMPI_COMM_WORLD_LOCAL_RANK when the latter
  is set (a leftover of an mpirun wrapper kills the run): here too;
- on the CPU accelerator with LOCAL_SIZE == WORLD_SIZE each rank waits,
  without timeout, for the shared-memory segments of every rank: on a
  multi-node step those never come (here: raises instead of hanging);
- its launcher computes LOCAL_RANK as RANK % LOCAL_SIZE (wrong on uneven
  layouts); this stand-in takes LOCAL_RANK as given, like the engine;
- python -m deepspeed.launcher.runner and the deepspeed command: see
  launcher/runner.py.

init_distributed(): as deepspeed/comm/comm.py does, looks for RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (all present: no MPI
discovery) and calls torch.distributed.init_process_group with env://.
initialize(): wraps the model in DDP, builds the optimizer named by the
config ("type" looked up in torch.optim, as DeepSpeed does for names it
does not implement itself), and checks the launcher variables DeepSpeed's
own launcher would have set (deepspeed/launcher/launch.py): CROSS_RANK,
CROSS_SIZE, LOCAL_SIZE against where the ranks really are.
"""
import json
import os
import socket

import torch
import torch.distributed as dist

__version__ = "0.0+rdzv-stand-in"
REQUIRED = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"]
LAUNCHER = ["CROSS_RANK", "CROSS_SIZE", "LOCAL_SIZE"]


def _need(names):
    missing = [n for n in names if n not in os.environ]
    if missing:
        raise RuntimeError("deepspeed stand-in: missing " + ", ".join(missing)
                           + " (real DeepSpeed would fall back to MPI discovery and fail)")


def _check_ompi_local_rank():
    ompi = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK")
    if ompi is not None and int(ompi) != int(os.environ["LOCAL_RANK"]):
        raise AssertionError(f"deepspeed stand-in: LOCAL_RANK ({os.environ['LOCAL_RANK']}) "
                             f"!= OMPI_COMM_WORLD_LOCAL_RANK ({ompi}) (DeepSpeed's engine "
                             "asserts they are equal)")


def _check_shm_world():
    local, world = int(os.environ.get("LOCAL_SIZE", "0")), dist.get_world_size()
    nodes = [None] * world
    dist.all_gather_object(nodes, os.environ.get("SLURMD_NODENAME", socket.gethostname()))
    if local == world and len(set(nodes)) > 1:
        raise RuntimeError(f"deepspeed stand-in: LOCAL_SIZE == WORLD_SIZE == {world} on "
                           f"{len(set(nodes))} nodes: DeepSpeed's CPU path would wait without "
                           "timeout for shared-memory segments of ranks on other nodes")


def init_distributed(dist_backend="nccl", timeout=None, init_method=None, **kwargs):
    _need(REQUIRED)
    _check_ompi_local_rank()
    if not dist.is_initialized():
        kw = {"timeout": timeout} if timeout is not None else {}
        dist.init_process_group(dist_backend, init_method=init_method or "env://", **kw)


def _check_launcher_vars():
    _need(LAUNCHER)
    mine = (socket.gethostname() if "SLURMD_NODENAME" not in os.environ
            else os.environ["SLURMD_NODENAME"],
            int(os.environ["CROSS_RANK"]), int(os.environ["CROSS_SIZE"]),
            int(os.environ["LOCAL_SIZE"]), int(os.environ["LOCAL_RANK"]))
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, mine)
    nodes = {}
    for node, cross_rank, cross_size, local_size, local_rank in every:
        nodes.setdefault(node, []).append((cross_rank, cross_size, local_size, local_rank))
    bad = []
    if len({e[2] for e in every}) != 1 or every[0][2] != len(nodes):
        bad.append(f"CROSS_SIZE {sorted({e[2] for e in every})} but {len(nodes)} nodes")
    ranks = {}
    for node, rows in nodes.items():
        if len({r[0] for r in rows}) != 1:
            bad.append(f"node {node}: CROSS_RANK differs between its ranks")
        ranks[node] = rows[0][0]
        if any(r[2] != len(rows) for r in rows):
            bad.append(f"node {node}: LOCAL_SIZE {rows[0][2]} but {len(rows)} ranks there")
        if sorted(r[3] for r in rows) != list(range(len(rows))):
            bad.append(f"node {node}: LOCAL_RANKs {sorted(r[3] for r in rows)}")
    if sorted(ranks.values()) != list(range(len(nodes))):
        bad.append(f"CROSS_RANKs {sorted(ranks.values())} are not 0..{len(nodes) - 1}")
    if bad:
        raise RuntimeError("deepspeed stand-in: " + "; ".join(bad))


class _Engine:
    def __init__(self, model, optimizer):
        self.module = model
        self.ddp = torch.nn.parallel.DistributedDataParallel(model)
        self.optimizer = optimizer

    def __call__(self, *args, **kwargs):
        return self.ddp(*args, **kwargs)

    def backward(self, loss):
        loss.backward()

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


def initialize(model=None, model_parameters=None, config=None, args=None, **kwargs):
    init_distributed("gloo")
    _check_shm_world()
    _check_launcher_vars()
    if isinstance(config, str):
        with open(config) as f:
            config = json.load(f)
    if not config or not ("train_micro_batch_size_per_gpu" in config or "train_batch_size" in config):
        raise RuntimeError("deepspeed stand-in: the config needs train_batch_size or "
                           "train_micro_batch_size_per_gpu")
    opt = config.get("optimizer", {"type": "SGD", "params": {"lr": 0.01}})
    cls = getattr(torch.optim, opt["type"])
    optimizer = cls(model_parameters if model_parameters is not None else model.parameters(),
                    **opt.get("params", {}))
    return _Engine(model, optimizer), optimizer, None, None
