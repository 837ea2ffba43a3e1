#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# #SBATCH --rdzv=torch applies to every srun inside the script, an explicit
# srun option wins over it, and the batch step itself gets nothing (srun
# inside it would otherwise inherit RANK=0 as a user export). salloc's
# option reaches the sruns of the allocation the same way.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1

cat > job.sbatch <<SB
#!/bin/bash
#SBATCH -N 3
#SBATCH --ntasks-per-node=2
#SBATCH --rdzv=torch
#SBATCH -o $PWD/job.out
echo "BATCH_RANK=\${RANK:-unset} BATCH_MASTER=\${MASTER_ADDR:-unset}"
srun $PY $app
echo "OFF_STEP=\$(srun -N1 -n1 --rdzv=off bash -c 'echo \${RANK:-unset}')"
SB
run_to 120 sbatch --wait job.sbatch
is "$rc" 0 "sbatch --wait of a script with #SBATCH --rdzv=torch exits 0"
body=$(cat job.out 2>/dev/null)
verdict=$(printf '%s\n' "$body" | $check 6 --per-node n1=2,n2=2,n3=2)
is "$?" 0 "a plain srun inside the batch script gets the torch variables ($verdict)"
like "$body" "BATCH_RANK=unset BATCH_MASTER=unset" "the batch step itself gets no rendezvous variables"
like "$body" "OFF_STEP=unset" "an explicit srun --rdzv=off inside the script wins over #SBATCH --rdzv=torch"

run_to 120 salloc -N2 --ntasks-per-node=2 --rdzv=torch srun $PY "$app"
is "$rc" 0 "salloc --rdzv=torch followed by srun exits 0"
verdict=$(printf '%s\n' "$out" | $check 4 --per-node n1=2,n2=2)
is "$?" 0 "srun in a salloc --rdzv=torch allocation gets the torch variables ($verdict)"
done_testing
