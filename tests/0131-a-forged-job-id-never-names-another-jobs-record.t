#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 45, item 2: the names root writes come from Slurm, never from the
# step's environment, which the client assembles. A user's own srun (here
# the real srun with tests/harness/forge-launch.c preloaded: what a
# rewritten libslurm client sends) launches a heterogeneous step of the
# user's own job with SLURM_JOB_ID set to another job's id. Before the fix,
# slurmstepd named a het step's record (and its DCGM claim) after that
# variable: the record of the other job's step 0 on n1 was replaced. Now
# the record is named after S_JOB_ID (the component's own job) and slurmd's
# own node name; the victim's record is untouched. The same attack on a
# running job's DCGM claim: tests/0119, case 3b.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
forge=$top_builddir/tests/harness/.libs/forge-launch.so
[ -f "$forge" ] || skip_all "forge-launch.so not built (make check builds it)"
work=$(mktemp -d /tmp/rdzv-0131.XXXXXX) || exit 1
chmod 755 "$work"
rd=$work/records
mkdir -m 0755 "$rd"
e2e_start RDZV_PLUGSTACK_ARGS="record_dir=$rd"
trap 'e2e_stop; rm -rf "$work"' EXIT
cd "$work" || exit 1

# The victim: another job's step 0 on n1, and its record.
run_to 60 srun -w n1 -N1 -n1 --rdzv=torch sh -c 'echo "JOB=$SLURM_JOB_ID"'
victim=$(printf '%s\n' "$out" | sed -n 's/^JOB=//p' | head -n 1)
is "$rc" 0 "the victim's step ran (job ${victim:-?})"
ok "$([ -n "$victim" ] && [ -f "$rd/$victim.0.n1.json" ] && echo 0 || echo 1)" "... and left its record $victim.0.n1.json"
cp "$rd/$victim.0.n1.json" victim.json 2>/dev/null

# The attacker: a het job of its own (step 0 on n1 : n2), SLURM_JOB_ID forged.
app='echo "JOB=$SLURM_JOB_ID RUN=$TORCHELASTIC_RUN_ID"'
run_to 60 env LD_PRELOAD="$forge" RDZV_FORGE_SLURM_JOB_ID="$victim" \
	srun -w n1 -N1 -n1 --rdzv=torch sh -c "$app" : -w n2 -N1 -n1 --rdzv=torch sh -c "$app"
diag "$(printf '%s\n' "$out" | head -n 4)"
attacker=$(printf '%s\n' "$out" | sed -n 's/^JOB=\([0-9]*\) .*/\1/p' | head -n 1)
like "$out" "RUN=slurm-$victim\\.0" \
	"the forged SLURM_JOB_ID reached slurmstepd (the user's own numbering took it: run id slurm-$victim.0)"
cmp -s victim.json "$rd/$victim.0.n1.json"
ok $? "the victim's record $victim.0.n1.json is untouched"
ok "$([ ! -e "$rd/$victim.0.n2.json" ] && echo 0 || echo 1)" "... and no record is written under the victim's id on n2"
ok "$([ -n "$attacker" ] && [ -f "$rd/$attacker.0.n1.json" ] && echo 0 || echo 1)" \
	"the attacker's n1 record carries its own component's job id ($attacker.0.n1.json)"
diag "records: $(cd "$rd" && ls | tr '\n' ' ')"
done_testing
