# SPDX-License-Identifier: GPL-2.0-or-later
"""jax.numpy stand-in: arrays are plain Python lists of floats."""


def array(values):
    return [float(v) for v in values]
