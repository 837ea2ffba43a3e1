#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What users and admins type is refused with a bounded message naming the
# thing, never truncated into something else, never crashing the hook, and
# under valgrind: oversized option values and environment fallbacks, an
# option given twice with different values (the last accepted one wins, and
# srun and slurmstepd agree on it), plugstack arguments supplied badly
# (relative paths, empty or oversized values, no '=', unknown keys).
# Profile files and binding topologies have their own tests.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/harness/harness.sh"

big=$(head -c 70000 /dev/zero | tr '\0' 'a')
bigdigits=$(head -c 70000 /dev/zero | tr '\0' '7')
maxline() { printf '%s\n' "$1" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'; }
local_step="-C local -N 2 -t 2"
remote_step="-N 1 -t 1 -l 1 -e SLURM_STEP_NODELIST=localhost"

# Oversized values, in srun (where a refusal stops the job before launch).
for opt in rdzv rdzv-port; do
	v=$big
	[ "$opt" = rdzv-port ] && v=$bigdigits
	h "srun --$opt=<70 kB>" $local_step -o "$opt=$v" "$plugin"
	like "$out" "step failed in options" "srun --$opt=<70 kB>: refused before launch"
	like "$err" "invalid --$opt value" "srun --$opt=<70 kB>: the message names the option"
	ok "$([ "$(maxline "$err")" -lt 600 ] && echo 0 || echo 1)" \
		"srun --$opt=<70 kB>: the message is bounded ($(maxline "$err") bytes), not an echo of the value"
done
for opt in rdzv-bind nccl-profile; do
	h "srun --$opt=<70 kB>" $local_step -o "$opt=$big" "$plugin"
	ok "$([ "$(maxline "$err")" -lt 600 ] && echo 0 || echo 1)" \
		"srun --$opt=<70 kB>: any message is bounded ($(maxline "$err") bytes)"
done
# A profile name is a name, never a path (it is looked up in the admin's
# directory as the job's user).
h "srun --nccl-profile=../../etc/passwd" $local_step -o nccl-profile=../../etc/passwd "$plugin"
like "$out" "step failed in options" "srun --nccl-profile=../../etc/passwd: refused before launch"
like "$err" "not paths|contains '/'" "srun --nccl-profile=../../etc/passwd: the message says profiles are names"
h "RDZV_MODE=<70 kB>" $local_step -e "RDZV_MODE=$big" "$plugin"
like "$out" "step failed in init_post_opt" "RDZV_MODE=<70 kB> (environment fallback): srun refuses it"
like "$err" "invalid RDZV_MODE" "RDZV_MODE=<70 kB>: the message names the variable"
ok "$([ "$(maxline "$err")" -lt 600 ] && echo 0 || echo 1)" "RDZV_MODE=<70 kB>: the message is bounded"

# Oversized values reaching slurmstepd anyway (a modified srun, or a
# variable srun does not check): no crash, no truncated value used.
h "slurmstepd RDZV_PORT=<70 kB>" $remote_step -e "RDZV_MODE=torch" -e "RDZV_PORT=$bigdigits" "$plugin"
is "$(envof 0 RANK)" 0 "RDZV_PORT=<70 kB> in slurmstepd: the step still gets its variables"
p=$(envof 0 MASTER_PORT)
ok "$([ -n "$p" ] && [ "$p" != 7777 ] && [ "$p" != 77777 ] && echo 0 || echo 1)" \
	"RDZV_PORT=<70 kB> in slurmstepd: not truncated into a port ($p)"
h "slurmstepd SLURM_STEP_NODELIST=<70 kB>" -N 1 -t 1 -l 1 -e "SLURM_STEP_NODELIST=n[$bigdigits]" \
	-o rdzv=torch "$plugin"
is "$(statuses)" "1 " "an oversized SLURM_STEP_NODELIST ends the task before exec"
like "$err" "SLURM_STEP_NODELIST" "the message names SLURM_STEP_NODELIST"

# The same option twice with different values: Slurm calls the callback for
# each (environment first, then command line); the last accepted one wins.
h "srun --rdzv=torch --rdzv=torchrun" -C local -N 1 -t 2 -o rdzv=torch -o rdzv=torchrun "$plugin"
like "$out" "step failed in local_user_init" "srun: --rdzv=torch then --rdzv=torchrun: torchrun's rule applies (last wins)"
h "srun --rdzv=torchrun --rdzv=torch" -C local -N 1 -t 2 -o rdzv=torchrun -o rdzv=torch "$plugin"
is "$rc" 0 "srun: --rdzv=torchrun then --rdzv=torch: torch applies (last wins)"
h "slurmstepd --rdzv=torchrun --rdzv=torch" $remote_step -o rdzv=torchrun -o rdzv=torch "$plugin"
is "$(envof 0 RANK)/$(envof 0 PET_NNODES)" "0/" "slurmstepd: the last value (torch) is the one applied"
h "srun --rdzv-port=31001 --rdzv-port=31002" $local_step -o rdzv=torch -o rdzv-port=31001 -o rdzv-port=31002 "$plugin"
is "$rc" 0 "srun: two valid --rdzv-port values are accepted"
h "slurmstepd --rdzv-port=31001 --rdzv-port=31002" $remote_step -o rdzv=torch -o rdzv-port=31001 -o rdzv-port=31002 "$plugin"
is "$(envof 0 MASTER_PORT)" 31002 "slurmstepd: MASTER_PORT is the last --rdzv-port"
h "srun --rdzv-port=31001 --rdzv-port=abc" $local_step -o rdzv=torch -o rdzv-port=31001 -o rdzv-port=abc "$plugin"
like "$out" "step failed in options" "srun: a valid then an invalid --rdzv-port: refused (no silent fallback)"
h "slurmstepd --rdzv-port=31001 --rdzv-port=abc" $remote_step -o rdzv=torch -o rdzv-port=31001 -o rdzv-port=abc "$plugin"
is "$(envof 0 MASTER_PORT)" 31001 "slurmstepd: a refused second value leaves the first in place"
h "--rdzv twice, same value" $remote_step -o rdzv=torch -o rdzv=torch "$plugin"
is "$(envof 0 RANK)" 0 "the same value twice (env, then command line) is idempotent"

# plugstack.conf supplied badly: refused in every context (the same parser
# runs in srun, sbatch and slurmstepd: srun checked for every argument,
# slurmstepd for those marked "both"), the argument named.
bad_args=(
	"topology=etc/topo.xml|must be an absolute path|both"
	"profiles=nccl.d|must be an absolute path"
	"topology=|empty value"
	"topology=/$big|longer than|both"
	"profile=$big|longer than"
	"mode|not key=value"
	"=torch|not key=value"
	"port_range=29500|port_range"
	"master_addr=dns|master_addr"
	"env=maybe|env"
	"colour=blue|unknown plugstack argument 'colour'|both"
)
for entry in "${bad_args[@]}"; do
	arg=${entry%%|*}
	msg=${entry#*|}
	ctxs=local
	case $msg in *'|both') msg=${msg%|both}; ctxs="local remote" ;; esac
	shown=$(printf '%s' "$arg" | head -c 40)
	for ctx in $ctxs; do
		if [ $ctx = local ]; then
			h "srun, plugstack '$shown'" $local_step "$plugin" "$arg"
			like "$out" "step failed in init" "$ctx, plugstack '$shown': init fails"
		else
			# In slurmstepd either init fails, or (so that a batch step
			# cannot drain the node) the step that asked for a mode ends
			# its tasks before exec with the message.
			h "slurmstepd, plugstack '$shown'" $remote_step -o rdzv=torch "$plugin" "$arg"
			ok "$(printf '%s\n' "$out" | grep -q 'step failed in init' || [ "$(statuses)" = "1 " ] && echo 0 || echo 1)" \
				"$ctx, plugstack '$shown': init fails, or every task ends before exec"
		fi
		like "$err" "$msg" "$ctx, plugstack '$shown': the message says why ($msg)"
		ok "$([ "$(maxline "$err")" -lt 600 ] && echo 0 || echo 1)" "$ctx, plugstack '$shown': the message is bounded"
	done
done
h "plugstack mode twice" $remote_step "$plugin" mode=torchrun mode=torch
is "$(envof 0 RANK)" 0 "plugstack: a repeated key takes its last value"

diag "$h_runs harness runs"
done_testing
