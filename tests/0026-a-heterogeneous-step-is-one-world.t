#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A heterogeneous step (srun --het-group=0,1 in a het allocation, or srun
# A : B) runs as one world, as Slurm numbers it: RANK is SLURM_PROCID across
# the components, WORLD_SIZE all their tasks, rank 0 where Slurm put task 0
# (the first component's first node), the nodes numbered component by
# component, every rank meets the others and all-reduces (lib/step/het.h).
# The components are laid so that the first holds the later node names
# (n3-n4, one task each) and the second n1-n2 (two each): a numbering taken
# from the node list's order would put rank 0 on n1. A step of one
# component works as any other step.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start RDZV_NODES=4
work=$(mktemp -d /tmp/rdzv-0026.XXXXXX) || exit 1
chmod 755 "$work"
cd "$work" || exit 1
trap 'e2e_stop; cd /; rm -rf "$work"' EXIT
app="$PY $top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"

cat > het.sh <<SH
srun --het-group=0,1 --rdzv=torch --rdzv-verbose $app > both.out 2>&1; echo "BOTH_RC=\$?"
srun --het-group=1 --rdzv=torch printenv RANK WORLD_SIZE > one.out 2> one.err; echo "ONE_RC=\$?"
SH
run_to 120 salloc -w n3,n4 -N2 --ntasks-per-node=1 : -w n1,n2 -N2 --ntasks-per-node=2 bash het.sh
diag "$(printf '%s\n' "$out" | grep -E '_RC=')"
like "$out" "BOTH_RC=0" "a step across two het components (n3-n4 x1 : n1-n2 x2) exits 0"
verdict=$($check 6 --master n3 --per-node n3=1,n4=1,n1=2,n2=2 <both.out)
is "$?" 0 "its 6 ranks are one world: RANK = SLURM_PROCID, WORLD_SIZE 6, rank 0 on n3, nodes in rank order, all meet and all-reduce ($verdict)"
[ -z "$verdict" ] || diag "$(grep -v RDZV_REPORT both.out | tail -n 8)"
like "$(cat both.out)" "rank order .*heterogeneous step's components in order \\(1 of 2" \
	"... the second component's nodes say where their numbering came from (--rdzv-verbose)"
like "$out" "ONE_RC=0" "a step in one component of a het job runs"
is "$(sort -u one.out | tr '\n' ' ')" "0 1 2 3 4 " "... as a world of its own (RANK 0-3, WORLD_SIZE 4)"
# srun's stderr, apart from the ranks' output: on a loaded machine Slurm may
# say it waits for the first step's nodes ("step creation temporarily
# disabled, retrying" then "Step created"); anything else there fails.
is "$(grep -v -e 'srun: Job [0-9]* step creation temporarily disabled, retrying' \
	-e 'srun: Step created for job [0-9]*' one.err)" "" "... and srun says nothing on stderr but Slurm's own wait for the nodes"

# srun A : B makes the het job itself; each component its own command.
run_to 120 srun -w n3 -N1 -n1 --rdzv=torch $app : -w n1,n2 -N2 --ntasks-per-node=1 --rdzv=torch $app
is "$rc" 0 "srun -w n3 -n1 ... : -w n1,n2 -N2 ... (a het job of srun's own) exits 0"
verdict=$(printf '%s\n' "$out" | $check 3 --master n3 --per-node n3=1,n1=1,n2=1)
is "$?" 0 "... its 3 ranks are one world with rank 0 on n3 ($verdict)"
[ -z "$verdict" ] || diag "$(printf '%s\n' "$out" | grep -v RDZV_REPORT | tail -n 8)"
done_testing
