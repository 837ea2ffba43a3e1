# SPDX-License-Identifier: GPL-2.0-or-later
"""deepspeed.launcher stand-in: runner.py is the deepspeed command."""
