#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 6. An interactive session: salloc, then as many sruns as you like.
#
#   salloc -N2 --ntasks-per-node=8 --gpus-per-node=8 --rdzv=torch
#   srun python train_tiny.py                  # every srun gets the variables
#   srun -N1 -n4 python train_tiny.py          # a smaller step: its own world,
#                                              # master and port
#   srun --rdzv=off hostname                   # plain Slurm for this one
#
# Before: inside salloc, MASTER_ADDR/MASTER_PORT exported by hand once for the
# whole allocation, wrong as soon as a step used fewer nodes, and two steps
# at once fought over the same port.
# Now: the option given to salloc reaches every srun in the allocation (an
# srun's own --rdzv wins); each step gets its own rank-0 node and port.
#
# This file runs those steps when given to salloc:
#   salloc -N2 --ntasks-per-node=8 --gpus-per-node=8 --rdzv=torch 06-interactive-salloc.sh
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")}" || exit 1
set -e
srun ${PYTHON:-python3} train_tiny.py --steps 5
srun -N1 -n"${SMALL_STEP_TASKS:-4}" ${PYTHON:-python3} train_tiny.py --steps 5
srun --rdzv=off bash -c 'echo "rdzv=off: RANK=${RANK:-unset}"'
