#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rdzv.so, loaded with dlopen as Slurm loads it and driven through its hooks
# by tests/harness/rdzv-harness (one node of a step, each task's task_init in
# a forked child), gives every task its rank variables, and runs without a
# memory error or a definite leak under valgrind, on the success paths and
# on the failure paths (unresolvable master, refused options, batch step).
# In the sanitizer build the harness itself carries ASan and valgrind is not
# used (the two cannot be combined).
. "$top_srcdir/tests/lib/tap.sh"

. "$top_srcdir/tests/harness/harness.sh"
work=$h_work

# 1. Node 1 of a two-node step, four tasks in block order: tasks 2 and 3 here.
h "torch, node 1 of 2" -j 4242 -s 7 -N 2 -n 1 -t 4 -l 2 -g 2 \
	-e SLURM_STEP_NODELIST=localhost,n2 -e SLURM_STEP_RESV_PORTS=12000-12003 \
	-e SLURM_DISTRIBUTION=block -o rdzv=torch "$plugin"
is "$rc" 0 "torch: the step runs to the end"
is "$(statuses)" "0 " "torch: every task passes task_init"
is "$(envof 2 RANK),$(envof 3 RANK)" "2,3" "torch: RANK is the global task id"
is "$(envof 2 LOCAL_RANK),$(envof 3 LOCAL_RANK)" "0,1" "torch: LOCAL_RANK is the local task id"
is "$(envof 3 WORLD_SIZE)/$(envof 3 LOCAL_WORLD_SIZE)" "4/2" "torch: WORLD_SIZE and LOCAL_WORLD_SIZE"
is "$(envof 2 GROUP_RANK)/$(envof 2 NODE_RANK)/$(envof 2 GROUP_WORLD_SIZE)" "1/1/2" "torch: node rank and node count"
is "$(envof 3 MASTER_ADDR):$(envof 3 MASTER_PORT)" "localhost:12000" \
	"torch: MASTER_ADDR is the step's first node, MASTER_PORT its first reserved port"
is "$(envof 2 TORCHELASTIC_RUN_ID)" "slurm-4242.7" "torch: run id names job and step"

# 2. The user's own MASTER_PORT wins over the plugin's; the verbose table
#    says so (printed once per node, by local task 0).
h "torch, user's MASTER_PORT" -N 1 -t 2 -l 2 -e SLURM_STEP_NODELIST=localhost \
	-e MASTER_PORT=31555 -o rdzv=torch -o rdzv-verbose "$plugin"
is "$(envof 0 MASTER_PORT) $(envof 1 MASTER_PORT)" "31555 31555" "a user-exported MASTER_PORT is kept"
is "$(printf '%s\n' "$err" | grep -c 'LOCAL_WORLD_SIZE')" 1 "the verbose table is printed once per node"
like "$err" "MASTER_PORT.*user's value" "the verbose table says the user's MASTER_PORT was kept"

# 3. torchrun: one launcher per node, its GPU count as nproc.
h "torchrun" -j 9 -s 1 -N 3 -n 2 -t 3 -l 1 -g 2 -e SLURM_STEP_NODELIST='localhost,n[2-3]' \
	-e SLURM_STEP_GPUS=0,1,2,3 -o rdzv=torchrun "$plugin" port_range=30000-30999
is "$(envof 2 PET_NODE_RANK)/$(envof 2 PET_NNODES)/$(envof 2 PET_NPROC_PER_NODE)" "2/3/4" \
	"torchrun: PET_NODE_RANK, PET_NNODES, PET_NPROC_PER_NODE"
p=$(envof 2 PET_MASTER_PORT)
ok "$([ -n "$p" ] && [ "$p" -ge 30000 ] && [ "$p" -le 30999 ] && echo 0 || echo 1)" \
	"torchrun: a derived port lies in the admin's port_range ($p)"

# 4. arbitrary distribution: rank 0's node is the hostfile's first line,
#    read as the user in user_init. The first host must resolve here (the
#    plugin checks it): this machine's own name, which is not the first
#    node of the list.
me=$(hostname -s 2>/dev/null)
getent hosts "$me" >/dev/null 2>&1 && [ "$me" != localhost ] || me=ip6-localhost
printf '# the user wrote this\n\n  %s*2\nlocalhost\n' "$me" >"$work/hosts"
h "arbitrary" -N 2 -n 0 -t 3 -l 1 -g 2 -e SLURM_STEP_NODELIST="localhost,$me" \
	-e SLURM_DISTRIBUTION=arbitrary -e SLURM_HOSTFILE="$work/hosts" -o rdzv=torch "$plugin"
is "$(envof 2 MASTER_ADDR)" "$me" "arbitrary: MASTER_ADDR is the hostfile's first host"

# 5. Failure path: rank 0's node does not resolve. Tasks end before exec
#    with a message naming the host; the step does not hang.
h "unresolvable master" -N 1 -t 2 -l 2 -e SLURM_STEP_NODELIST=no-such-host.invalid \
	-o rdzv=torch "$plugin"
is "$(statuses)" "1 " "unresolvable master: every task ends before exec (status 1)"
like "$err" "no-such-host.invalid.*does not resolve" "unresolvable master: the message names the host"

# 6. The batch step (and extern step) stay untouched.
h "batch step" -s 4294967291 -N 1 -t 1 -l 1 -e SLURM_STEP_NODELIST=localhost -o rdzv=torch "$plugin"
is "$(statuses)$(envof 0 RANK)" "0 " "batch step: no RANK, task runs"

# 7. Refused option in slurmstepd (srun refuses it first): logged, the step
#    goes on with what it had; a bad plugstack line fails init (or the
#    tasks of a step that asked for a mode), naming the
#    argument.
h "refused remote option" -N 1 -t 1 -l 1 -e SLURM_STEP_NODELIST=localhost \
	-o rdzv=torch -o rdzv-port=80 "$plugin"
like "$out" "option --rdzv-port=80 rc=-1" "a bad --rdzv-port is refused by its callback"
is "$(envof 0 RANK)" "0" "the step still runs with the options that were valid"
h "bad plugstack" -N 1 -t 1 -l 1 -e SLURM_STEP_NODELIST=localhost -o rdzv=torch "$plugin" colour=blue
ok "$(printf '%s\n' "$out" | grep -q 'step failed in init' || [ "$(statuses)" = "1 " ] && echo 0 || echo 1)" \
	"an unknown plugstack argument fails init, or ends the step's tasks before exec"
like "$err" "colour" "the message names the argument"

# 8. srun (local context): options, then local_user_init.
h "srun, torchrun with two tasks on a node" -C local -N 1 -t 2 -o rdzv=torchrun "$plugin"
like "$out" "step failed in local_user_init" "srun refuses a launcher-per-node mode with 2 tasks on 1 node"
like "$err" "ntasks-per-node=1" "srun's message tells the user what to change"
h "sbatch" -C allocator -o rdzv=torch "$plugin" mode=off
is "$rc" 0 "sbatch/salloc: init, options and init_post_opt pass"

diag "$h_runs harness runs"
done_testing
