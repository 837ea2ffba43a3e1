# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for the jax package (see ../README.md): jax.distributed,
process_index, process_count, local_devices, jax.numpy.array and
jax.experimental.multihost_utils, enough for ../../jax_tiny.py."""
from . import distributed  # noqa: F401
from . import numpy  # noqa: F401


def process_index():
    return distributed.state().process_id


def process_count():
    return distributed.state().num_processes


def local_devices():
    return [f"StandInGpu(id={i})" for i in distributed.state().local_device_ids]
