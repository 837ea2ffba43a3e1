#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# submitit and Accelerate under the plugin, with their
# stand-ins (sbatch-examples/stand-ins/submitit, accelerate: what the real
# ones do, read from their own sources) around real torch.distributed.
# submitit's TorchDistributedEnvironment().export() raises when the plugin's
# MASTER_ADDR, RANK, ... are set (the fix: drop the call, or --rdzv=off);
# export(overwrite=True) takes the job's first node, not the step's.
# Accelerate on CPU: a plain Accelerator() and Accelerator(cpu=True) (mpi
# backend where PyTorch has MPI) leave every task 0 of 1, without a word;
# cpu=True with the gloo backend forms the step's world (doc/modes.md).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
e2e_start
ex="$top_srcdir/sbatch-examples"
tmp=$(mktemp -d) || exit 1
trap 'cancel_own_jobs; e2e_stop; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
export PYTHONPATH="$ex/stand-ins" PYTHONDONTWRITEBYTECODE=1
p5="$top_srcdir/tests/e2e/fw_point5.py"
small=(-N2 --ntasks-per-node=2)
reports() { # KEYS...: count and sorted distinct tuples of those keys over the P5 lines of $out
	printf '%s\n' "$out" | grep '^P5 ' | python3 -c '
import json, sys
r = [json.loads(l[3:]) for l in sys.stdin]
print(len(r), sorted({tuple(x.get(k) for k in sys.argv[1:]) for x in r}))' "$@"
}

step 120 srun "${small[@]}" --rdzv=torch $PY "$p5" submitit
is "$(reports error)" "4 [('Cannot export environment variables as MASTER_ADDR is already set',)]" \
	"submitit: TorchDistributedEnvironment().export() raises in every task under --rdzv=torch"
step 120 srun "${small[@]}" --rdzv=off $PY "$p5" submitit
is "$(reports error master)" "4 [(None, 'n1')]" "... and works under --rdzv=off (the documented fallback)"
step 120 salloc -N3 --ntasks-per-node=2 srun -N2 -n4 -r1 --ntasks-per-node=2 --rdzv=torch $PY "$p5" submitit-overwrite
[ "$rc" = 0 ] || diag "$out"
is "$(reports plugin_master master)" "4 [('n2', 'n1')]" \
	"export(overwrite=True) on n2-n3 of a 3-node job: the job's first node n1, not the step's n2 (why not to use it)"
is "$(reports node cuda | sed 's/[0-9] \[/N [/')" "N [('n2', '0'), ('n2', '1'), ('n3', '0'), ('n3', '1')]" \
	"... and CUDA_VISIBLE_DEVICES set to the local rank"

step 120 srun "${small[@]}" --rdzv=torch $PY "$p5" accelerate
is "$rc" 0 "Accelerator() on CPU under --rdzv=torch: exit 0 ..."
is "$(reports rank world)" "4 [(0, 1)]" "... but every task is process 0 of 1 (not distributed, no warning)"
if [ "$($PY -c 'import torch.distributed as d; print(d.is_mpi_available())')" = True ]; then
	step 120 srun "${small[@]}" --rdzv=torch $PY "$p5" accelerate-cpu
	is "$(reports rank world backend)" "4 [(0, 1, 'mpi')]" \
		"Accelerator(cpu=True): PyTorch has MPI, the mpi backend, again process 0 of 1"
else
	skip "Accelerator(cpu=True) picks mpi only where PyTorch has MPI; this PyTorch has none"
fi
step 120 srun "${small[@]}" --rdzv=torch $PY "$p5" accelerate-gloo
is "$rc" 0 "Accelerator(cpu=True) with the gloo backend: exit 0"
is "$(reports world backend sum)" "4 [(4, 'gloo', 6)]" \
	"... the step's world: 4 processes on gloo, an all_reduce of the ranks gives 0+1+2+3"
is "$(reports rank | sed 's/^4 //')" "[(0,), (1,), (2,), (3,)]" "... each task its own rank"
done_testing
