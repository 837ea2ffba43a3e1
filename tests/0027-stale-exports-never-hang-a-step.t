#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exports left over in a batch script or a shell never hang a step: the
# step's identity (RANK, WORLD_SIZE, LOCAL_RANK, ...) always comes from
# Slurm, rank 0 prints ONE warning line naming what it replaced (without
# --rdzv-verbose); an exported MASTER_ADDR/MASTER_PORT is kept when it names
# rank 0's node, and otherwise fails every task within seconds, naming the
# variable. Each step's time is printed.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1
# A hang would last RDZV_TEST_PG_TIMEOUT (PyTorch's default is 30 minutes):
# 600 s here, far beyond a healthy step even on a loaded machine (PyTorch
# 2.6 alone takes seconds to import per rank), and beyond run_to's limit.
export RDZV_TEST_PG_TIMEOUT=600

timed() { # timed SECS CMD...: run_to, plus $took (seconds, one decimal)
	local start ns
	start=$(date +%s%N)
	run_to "$@"
	ns=$(( $(date +%s%N) - start ))
	took=$(( ns / 1000000000 )).$(( ns / 100000000 % 10 ))
}

# From the shell: srun inherits the exports.
timed 240 env RANK=0 WORLD_SIZE=16 LOCAL_RANK=0 NODE_RANK=5 TORCHELASTIC_USE_AGENT_STORE=True \
	srun -N3 -n6 --rdzv=torch $PY "$app"
diag "shell exports RANK=0 WORLD_SIZE=16 LOCAL_RANK=0 NODE_RANK=5 TORCHELASTIC_USE_AGENT_STORE=True: step took ${took}s (exit $rc)"
is "$rc" 0 "stale identity exported in the shell: the step runs"
verdict=$(printf '%s\n' "$out" | $check 6)
is "$?" 0 "the ranks are Slurm's, not the exports ($verdict)"
is "$(grep -c 'rdzv: warning: replaced exported' <<< "$out")" 1 "one warning line, from rank 0 only"
like "$out" "replaced exported RANK=0 \(now 0\)|replaced exported WORLD_SIZE=16" "it names the replaced variables"
like "$out" "WORLD_SIZE=16 \(now 6\)" "with the exported and the step's value"
like "$out" "TORCHELASTIC_USE_AGENT_STORE=True \(now False\)" "TORCHELASTIC_USE_AGENT_STORE=True is replaced (it would make rank 0 wait for an agent)"
ok "$(awk -v t="$took" 'BEGIN { exit !(t < 200) }' && echo 0 || echo 1)" "no hang (${took}s, a hang lasts 600 s)"

# From a batch script: the exports are in the job's environment.
cat > job.sh <<JOB
#!/bin/bash
export RANK=0 WORLD_SIZE=16 LOCAL_RANK=0 LOCAL_WORLD_SIZE=8 GROUP_RANK=3
srun --rdzv=torch $PY $app
JOB
start=$(date +%s)
jobid=$(sbatch --parsable -N2 --ntasks-per-node=2 -o batch.out job.sh)
for i in $(seq 1 120); do
	state=$(scontrol show job "$jobid" -o 2>/dev/null | grep -o 'JobState=[A-Z]*' | cut -d= -f2)
	case $state in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 1 ;; *) break ;; esac
done
took=$(( $(date +%s) - start ))
diag "batch script exports RANK=0 WORLD_SIZE=16 LOCAL_RANK=0 LOCAL_WORLD_SIZE=8 GROUP_RANK=3: job took ${took}s ($state)"
is "$state" COMPLETED "stale identity exported in a batch script: the job completes"
verdict=$($check 4 < batch.out)
is "$?" 0 "the ranks are Slurm's ($verdict)"
is "$(grep -c 'rdzv: warning: replaced exported' batch.out)" 1 "one warning line in the job's output"
like "$(cat batch.out)" "LOCAL_WORLD_SIZE=8 \(now 2\)" "naming LOCAL_WORLD_SIZE with both values"

# MASTER_ADDR/MASTER_PORT that name rank 0's node are kept and reported.
timed 240 env MASTER_ADDR=n1 MASTER_PORT=$E2E_USER_PORT srun -N2 -n4 -w n1,n2 --rdzv=torch $PY "$app"
diag "MASTER_ADDR=n1 MASTER_PORT=$E2E_USER_PORT (rank 0's node): step took ${took}s (exit $rc)"
is "$rc" 0 "an exported MASTER_ADDR naming rank 0's node is kept: the step runs"
like "$out" "\"MASTER_PORT\": \"$E2E_USER_PORT\"" "the exported MASTER_PORT is the one used"
like "$out" "kept exported MASTER_PORT=$E2E_USER_PORT \(rdzv would set [0-9]+\)" "and the warning line reports it"

# A stale MASTER_ADDR (the job's first node, not this step's rank 0) fails fast.
timed 90 env MASTER_ADDR=n1 srun -N1 -n2 -w n3 --rdzv=torch $PY "$app"
diag "MASTER_ADDR=n1 for a step on n3: step took ${took}s (exit $rc)"
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "a stale MASTER_ADDR fails the step (exit $rc), no hang"
ok "$(awk -v t="$took" 'BEGIN { exit !(t < 30) }' && echo 0 || echo 1)" "within seconds (${took}s)"
like "$out" "MASTER_ADDR=n1 \(exported\) is not n3, the node of rank 0" "the message names the variable and rank 0's node"
unlike "$out" "RDZV_REPORT" "no rank ran the script"

timed 90 env MASTER_ADDR=no-such-host.invalid srun -N2 -n2 --rdzv=torch $PY "$app"
diag "MASTER_ADDR=no-such-host.invalid: step took ${took}s (exit $rc)"
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "an unresolvable exported MASTER_ADDR fails the step (exit $rc)"
like "$out" "MASTER_ADDR=no-such-host.invalid \(exported\) does not resolve" "naming the variable"

timed 90 env MASTER_PORT=80 srun -N2 -n2 --rdzv=torch $PY "$app"
diag "MASTER_PORT=80: step took ${took}s (exit $rc)"
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "an exported MASTER_PORT out of range fails the step (exit $rc)"
like "$out" "MASTER_PORT=80 \(exported\) is not a port 1024-65535" "naming the variable"

timed 90 env RDZV_STEP_PLAN=garbage srun -N2 -n2 --rdzv=torch $PY "$app"
is "$rc" 0 "an exported RDZV_STEP_PLAN is overwritten by srun's own plan (exit $rc, ${took}s)"
done_testing
