#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Wrong values are refused by srun/sbatch before anything launches, with the
# valid values named; a user's own MASTER_PORT wins; plugstack.conf errors
# name the argument.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
e2e_start
cd "$(mktemp -d)" || exit 1
marker=$PWD/launched
jobs_before() { scontrol show jobs -o 2>/dev/null | grep -c JobId; }

n0=$(jobs_before)
run_to 30 srun -N1 --rdzv=bogus touch "$marker"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "--rdzv=bogus: srun exits non-zero ($rc)"
like "$out" "valid modes are off, torch, torchrun, deepspeed, megatron, jax, lightning" "--rdzv=bogus: the message names the valid modes"
run_to 30 srun --help
out=$(printf '%s' "$out" | tr -s ' \n' '  ') # srun wraps the plugins' help at 80 columns
like "$out" "rendezvous variables for each task: off, torch, torchrun, deepspeed, megatron, jax, lightning" "srun --help names every mode of --rdzv"
run_to 30 srun -N1 --rdzv=torch --rdzv-port=99999 touch "$marker"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "--rdzv-port=99999: srun exits non-zero ($rc)"
like "$out" "1024-65535" "--rdzv-port=99999: the message names the valid range"
run_to 30 srun -N1 --rdzv=torch --rdzv-port=80 touch "$marker"
like "$out" "invalid --rdzv-port value '80'" "--rdzv-port=80 (privileged) is refused"
run_to 30 env RDZV_MODE=nope srun -N1 touch "$marker"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "RDZV_MODE=nope (environment fallback): srun exits non-zero"
like "$out" "invalid RDZV_MODE 'nope'" "RDZV_MODE=nope: the message names the variable"
printf '#!/bin/bash\n#SBATCH --rdzv=bogus\ntouch %s\n' "$marker" > bad.sbatch
run_to 30 sbatch bad.sbatch
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "#SBATCH --rdzv=bogus: sbatch refuses the script"
like "$out" "valid modes are" "sbatch's refusal names the valid modes"
is "$(jobs_before)" "$n0" "no job was created by any refused command"
ok "$([ ! -e "$marker" ] && echo 0 || echo 1)" "nothing was launched"

run_to 30 srun -N2 -n2 --rdzv=torch --export=ALL,MASTER_PORT=31555 printenv MASTER_PORT
is "$(printf '%s\n' "$out" | grep -v '^rdzv: warning: kept exported MASTER_PORT=31555' | sort -u | tr '\n' ' ')" "31555 " "a user-exported MASTER_PORT is honoured on every task"
is "$(printf '%s\n' "$out" | grep -c '^rdzv: warning: kept exported MASTER_PORT=31555')" 1 "and reported once, by rank 0"
run_to 30 srun -N1 -n2 --rdzv=torch --rdzv-verbose --export=ALL,MASTER_PORT=31555 true
like "$out" "MASTER_PORT=31555 \(the user's value; rdzv would set [0-9]+\)" "--rdzv-verbose says the user's MASTER_PORT won"
is "$(printf '%s\n' "$out" | grep -c 'node 0 of 1')" 1 "--rdzv-verbose prints its table once per node, not once per task"
run_to 30 srun -N2 -n2 --rdzv=torch --rdzv-port=31666 printenv MASTER_PORT
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "31666 " "--rdzv-port sets MASTER_PORT on every task"
run_to 30 env RDZV_MODE=torch srun -N2 -n2 printenv RANK
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "0 1 " "RDZV_MODE=torch (for wrappers that cannot add flags) works like --rdzv=torch"
run_to 30 env RDZV_MODE=torch srun -N1 -n1 --rdzv=off printenv RANK
is "$rc" 1 "--rdzv=off beats RDZV_MODE=torch: no RANK set"
run_to 30 srun -N1 -n1 printenv RANK
is "$rc" 1 "the site default mode (off) sets nothing"
e2e_plugstack mode=torch
run_to 30 srun -N2 -n2 printenv RANK
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "0 1 " "plugstack mode=torch makes torch the site default"

e2e_plugstack mode=torch master_addr=ip
run_to 30 srun -N2 -n2 printenv MASTER_ADDR
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "$RDZV_NODE_NET.1 " "plugstack master_addr=ip gives rank 0's node as an address"
e2e_plugstack mode=torch colour=blue
run_to 30 srun -N1 true
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "an unknown plugstack argument stops srun"
like "$out" "unknown plugstack argument 'colour'" "the message names the unknown key"
e2e_plugstack port_range=30000-20000
run_to 30 srun -N1 --rdzv=torch true
like "$out" "port_range=30000-20000" "a bad port_range is named"
e2e_plugstack
is "$(scontrol show nodes -o | grep -c -E 'State=(DRAIN|DOWN)')" 0 "no node was drained or downed"
done_testing
