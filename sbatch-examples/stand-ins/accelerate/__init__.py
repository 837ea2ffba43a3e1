# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for Accelerate's Accelerator on CPU (accelerate 1.15; see ../README.md).

Behaviours of the real code reproduced here (accelerate/state.py
PartialState, utils/dataclasses.py InitProcessGroupKwargs;
../shared/frameworks/README.md):
- the world comes from RANK, WORLD_SIZE, LOCAL_RANK first, then PMI_* and
  OMPI_COMM_WORLD_*;
- on a host without GPUs a plain Accelerator() does not go distributed:
  every task is process 0 of 1, without a warning;
- Accelerator(cpu=True) picks the mpi backend whenever PyTorch has MPI
  (Debian's has): under srun, without mpirun, every task is again 0 of 1;
- Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(
  backend="gloo")]) (or ACCELERATE_USE_CPU=1 with backend gloo) initialises
  torch.distributed on gloo at MASTER_ADDR:MASTER_PORT: the step's world.
MPI is not started here: the mpi case reports the world of 1 the real one
forms. The gloo case is a real rendezvous, so a wrong address, port or rank
still breaks the run.
"""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

__version__ = "0.0+rdzv-stand-in"


class InitProcessGroupKwargs:
    def __init__(self, backend=None, init_method=None, timeout=None):
        self.backend = backend
        self.init_method = init_method
        self.timeout = timeout


def _first_int(names, default):
    for n in names:
        if os.environ.get(n):
            return int(os.environ[n])
    return default


class Accelerator:
    def __init__(self, cpu=False, kwargs_handlers=None):
        pg = next((k for k in kwargs_handlers or () if isinstance(k, InitProcessGroupKwargs)), None)
        cpu = cpu or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes")
        world = _first_int(("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE"), 1)
        rank = _first_int(("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK"), 0)
        self.backend = None
        self.num_processes, self.process_index = 1, 0
        self.local_process_index = 0
        if torch.cuda.is_available() and not cpu:  # not on the test machines
            raise RuntimeError("accelerate stand-in: no GPU path")
        if not cpu or world <= 1:
            self.distributed_type = "NO"  # plain Accelerator() on CPU: 0 of 1, no warning
            return
        self.distributed_type = "MULTI_CPU"
        backend = pg.backend if pg and pg.backend else ("mpi" if dist.is_mpi_available() else "gloo")
        self.backend = backend
        if backend == "mpi":
            return  # mpi without mpirun: a world of 1 per task
        dist.init_process_group(backend, init_method=(pg.init_method if pg else None) or "env://",
                                rank=rank, world_size=world,
                                timeout=(pg.timeout if pg else None) or timedelta(seconds=60))
        self.num_processes, self.process_index = dist.get_world_size(), dist.get_rank()
        self.local_process_index = _first_int(("LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"), 0)

    @property
    def is_main_process(self):
        return self.process_index == 0

    def wait_for_everyone(self):
        if dist.is_initialized():
            dist.barrier()

    def end_training(self):
        if dist.is_initialized():
            dist.destroy_process_group()
