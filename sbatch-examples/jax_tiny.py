# SPDX-License-Identifier: GPL-2.0-or-later
"""A JAX multi-process smoke test: initialize from the environment, sum one
number per process across all of them, check the answer.

    srun --rdzv=jax python jax_tiny.py
"""
import sys

import jax
import jax.numpy as jnp
from jax.experimental import multihost_utils


def main():
    jax.distributed.initialize()  # JAX_COORDINATOR_ADDRESS, JAX_LOCAL_DEVICE_IDS
    pid, n = jax.process_index(), jax.process_count()
    total = multihost_utils.process_allgather(jnp.array([pid + 1.0])).sum()
    print(f"jax_tiny: process {pid} of {n}, local devices {jax.local_devices()}, "
          f"sum {float(total)}", flush=True)
    multihost_utils.sync_global_devices("jax_tiny done")
    return 0 if float(total) == n * (n + 1) / 2 else 1


if __name__ == "__main__":
    sys.exit(main())
