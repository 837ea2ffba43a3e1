#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What srun hands the nodes (rank 0's node and the node order from the step
# layout, the failure-report address, the hang ask) reaches them under every
# --export form (lib/step/handover.h): with --export=NONE, --export=VAR
# without ALL, or inside sbatch --export=NONE, Slurm forwards only SLURM*
# variables (and, from 23.02, _SLURM_SPANK_OPTION_*) from srun's environment.
# Each form gives what --export=ALL gives: the node says the order came from
# srun's look-up of the step layout (never "no plan from srun"), every rank's
# MASTER_ADDR is task 0's node and the nodes are numbered in rank order
# (checked against where Slurm ran each task, tests/e2e/check_where.py), the
# ranks meet, a failed rank is named in srun's failure line, a timed-out
# collective names the sleeping rank, and the tasks see none of it. Under
# topology/tree (the switches list n3-n4 before n1-n2: Slurm 26.05 puts task 0
# on n3) on every leg, topology/block from 24.11 (26.05 lays its ranks n1 n3 n2 n4).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require torch
hang=$top_builddir/helpers/rdzv-hang
where="$top_srcdir/tests/e2e/where_rank0.py"
check="$PY $top_srcdir/tests/e2e/check_where.py"
prog=$top_srcdir/tests/e2e/hang_rank.py
[ -x "$hang" ] || skip_all "rdzv-hang not built"
work=$(mktemp -d /tmp/rdzv-0110.XXXXXX) || exit 1
chmod 755 "$work"
cd "$work" || exit 1
finish() {
	cancel_own_jobs
	e2e_stop
	cd /
	rm -rf "$work"
}
tree=$E2E_TREE_3412
t0=n1
e2e_slurm_at_least 26.05 && t0=n3
export RDZV_0110_VAR=kept
# Debian's PyTorch 2.x has no libuv: its env:// rendezvous needs USE_LIBUV=0,
# which e2e.sh exports and --export=NONE does not forward; the task's own
# command sets it (a user of such a build does the same).
PYT="/usr/bin/env USE_LIBUV=0 $PY"

# placed LABEL NTASKS MASTER -- CMD...: rank 0's node, node order, ranks meet,
# and the node's own word that the order came from srun's look-up.
placed() {
	local label=$1 n=$2 master=$3 verdict
	shift 4
	step 120 "$@"
	is "$rc" 0 "$label: the step exits 0"
	verdict=$(printf '%s\n' "$out" | $check torch "$n" --meet --master "$master")
	is "$?" 0 "$label: every rank's MASTER_ADDR is task 0's node ($master), nodes numbered in rank order, ranks meet ($verdict)"
	like "$out" "rank 0's node and the order from the step layout, asked of slurmctld by srun" \
		"$label: the nodes took the order from srun's hand-over"
	unlike "$out" "no plan from srun|srun handed over no" "$label: no node went without it"
	[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | grep -v RDZV_WHERE | tail -n 8)"
}

# --- topology/tree, every leg
e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/tree" RDZV_TOPOLOGY_CONF="$tree" \
	RDZV_PLUGSTACK_ARGS="hang_python=$top_srcdir/helpers/python hang_helper=$hang"
trap finish EXIT
diag "topology/tree: s1=n[3-4] before s2=n[1-2]; task 0 on $t0"
for form in --export=NONE --export=RDZV_0110_VAR --export=ALL; do
	placed "tree, srun $form" 8 "$t0" -- \
		srun "$form" -N4 --ntasks-per-node=2 --rdzv=torch --rdzv-verbose $PYT "$where" --meet
done
printf '#!/bin/bash\n#SBATCH --export=NONE -N4 --ntasks-per-node=2 --rdzv=torch -o %s/batch.out\nsrun --rdzv-verbose %s %s --meet\n' \
	"$work" "$PYT" "$where" >batch.sh
placed "tree, srun inside sbatch --export=NONE" 8 "$t0" -- \
	bash -c "sbatch -J $fail_job --wait batch.sh >/dev/null; rc=\$?; cat batch.out; exit \$rc"

# The tasks see none of the hand-over, and --export=VAR's own variable only.
step 60 srun --export=RDZV_0110_VAR -N2 -n4 --rdzv=torch --rdzv-debug=hang /usr/bin/env
is "$(printf '%s\n' "$out" | grep -c '^SLURM_RDZV_')" 0 "no task sees a SLURM_RDZV_ variable (srun's hand-over)"
is "$(printf '%s\n' "$out" | grep -Ec '^RDZV_(STEP_PLAN|STEP_REPORT|STEP_DOMAINS|DOMAIN_ASK)=')" 0 \
	"... nor the plan, report or domain variables under their old names"
is "$(printf '%s\n' "$out" | grep -c '^RDZV_0110_VAR=kept$')" 4 "... while --export=RDZV_0110_VAR reaches every task"
is "$(printf '%s\n' "$out" | grep -Ec "^RDZV_HANG_ASK=[0-9]+\\.[0-9]+:[0-9]+:[0-9a-f]+\$")" 4 \
	"... and every task of an armed step gets srun's hang ask address (RDZV_HANG_ASK)"
is "$(printf '%s\n' "$out" | grep -c '^SLURM_KILL_BAD_EXIT=')" 0 \
	"... and not the SLURM_KILL_BAD_EXIT srun was given by the plugin"

# A failed rank is named by srun, whatever the export.
for form in --export=NONE --export=RDZV_0110_VAR; do
	new_stamp
	step 120 srun "$form" -N2 -n4 --rdzv=torch $PY "$FAIL_APP" exit1-before-init 3 "$stamp"
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "srun $form, rank 3 exits 1: srun fails (exit $rc)"
	like "$(rdzv_lines)" "^rdzv: rank 3 \\(node n[0-9]+\\) exited with status 1; the step was stopped\$" \
		"... srun's failure line names rank 3 and its node"
	[ -n "$(rdzv_lines)" ] || diag "$(printf '%s\n' "$out" | tail -n 8)"
done

# A timed-out collective names the sleeping rank under --export=NONE.
mkdir -p hang && chmod 777 hang
step 300 srun --export=NONE -N2 --ntasks-per-node=2 --rdzv=torch --rdzv-collective-timeout=20 \
	$PYT "$prog" sleep:2 "$work/hang" default-timeout
n2=$(awk '{print $2}' hang/rank-2 2>/dev/null)
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "srun --export=NONE, rank 2 asleep, 20 s collective timeout: the step ends, failed (exit $rc)"
like "$out" "a collective timed out: rank 2 \\($n2\\) is not where the other 3 ranks are" \
	"... and srun's failure line names rank 2 on its node ($n2)"
printf '%s\n' "$out" | grep -q 'a collective timed out: rank 2' \
	|| diag "$(printf '%s\n' "$out" | grep -E 'rdzv|Error' | tail -n 10)"

# A submit host whose srun does not load the plugin (its own plugstack.conf
# is empty), the mode the site's default: no hand-over can happen, and where
# that matters (26.05 puts task 0 on n3) the refusal says which cause it is.
e2e_plugstack mode=torch "hang_python=$top_srcdir/helpers/python" "hang_helper=$hang"
: >none.conf
sed "s|^PlugStackConfig=.*|PlugStackConfig=$work/none.conf|" "$SLURM_CONF" >slurm.conf
step 120 env SLURM_CONF="$work/slurm.conf" srun --export=NONE -N4 --ntasks-per-node=2 $PYT "$where" --meet
if e2e_slurm_at_least 26.05; then
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "srun without the plugin, site mode torch, task 0 on n3: the step is refused (exit $rc)"
	like "$out" "task 0 runs on this node \(n3\).*srun on the submit host does not load the plugin .*add rdzv.so to the submit host's plugstack.conf" \
		"... by n3, saying that srun does not load the plugin and what to do, not guessing srun --async"
else
	is "$rc" 0 "srun without the plugin, site mode torch: the step runs (task 0 on n1, the list's first node)"
fi
e2e_plugstack "hang_python=$top_srcdir/helpers/python" "hang_helper=$hang"

# --- topology/block, where Slurm has it (23.11+; 26.05 lays ranks n1 n3 n2 n4, 24.11 in list order)
if e2e_slurm_at_least 24.11; then
	e2e_stop
	e2e_start RDZV_NODES=4 RDZV_SLURM_EXTRA="TopologyPlugin=topology/block" \
		RDZV_TOPOLOGY_CONF="$E2E_BLOCK_1324"
	diag "topology/block: b1=n[1,3], b2=n[2,4]"
	for form in --export=NONE --export=RDZV_0110_VAR; do
		placed "block, srun $form" 8 n1 -- \
			srun "$form" -N4 --ntasks-per-node=2 --rdzv=torch --rdzv-verbose $PYT "$where" --meet
	done
	placed "block, srun inside sbatch --export=NONE" 8 n1 -- \
		bash -c "sbatch -J $fail_job --wait batch.sh >/dev/null; rc=\$?; cat batch.out; exit \$rc"
fi
done_testing
