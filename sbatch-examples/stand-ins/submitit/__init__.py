# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-in for submitit (see ../README.md): only submitit.helpers."""
__version__ = "0.0+rdzv-stand-in"
