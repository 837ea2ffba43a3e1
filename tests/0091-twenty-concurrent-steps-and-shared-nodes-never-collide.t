#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Twenty steps running at once in one allocation, and several jobs sharing
# the same nodes, all rendezvous on distinct ports and finish; with
# MpiParams=ports every step's port is one Slurm reserved for it, so none
# can collide. The rendezvous is tests/harness/tcp-rendezvous.py: rank 0
# binds MASTER_ADDR:MASTER_PORT (a second step on the same port fails to
# bind) and refuses tasks of any other step, holding the port a few seconds
# so that the steps overlap.
. "$top_srcdir/tests/lib/tap.sh"
[ -f "$top_srcdir/tests/cluster/cluster.sh" ] || skip_all "tests/cluster/cluster.sh not there yet"
[ -f "$top_srcdir/tests/lib/e2e.sh" ] || skip_all "tests/lib/e2e.sh not there yet"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
py=$(command -v python3) || skip_all_missing python3 "python3 not installed"
app=$top_srcdir/tests/harness/tcp-rendezvous.py
cd "$(mktemp -d)" || exit 1
chmod 755 .
STEPS=${RDZV_TEST_STEPS:-20}

# verdict FILE... : "N ok, M ports, F failures" over rank-0 lines
rank0() { cat "$@" 2>/dev/null | grep -h '^RDZV .* rank=0 '; }
fails() { cat "$@" 2>/dev/null | grep -h '^RDZV .*FAIL'; }
ports() { rank0 "$@" | sed -n 's/.* port=\([0-9]*\) ok$/\1/p'; }
# why FILE...: the first lines of each output whose rank 0 did not say ok
why() {
	local f
	for f in "$@"; do
		rank0 "$f" | grep -q ' ok$' || { echo "$f:"; head -n 3 "$f"; }
	done | head -n 20 | sed 's/^/# /'
}

concurrent_steps() { # concurrent_steps TAG: STEPS steps in one allocation
	cat >steps.sh <<SH
#!/bin/bash
for i in \$(seq 1 $STEPS); do
	srun --overlap -N2 -n2 --rdzv=torch $py $app > $1-step\$i.out 2>&1 &
done
wait
SH
	run_to 240 salloc -N3 --rdzv=torch bash steps.sh
}

# 1. Twenty concurrent steps of one allocation (ports derived from job/step id).
e2e_start
concurrent_steps derived
is "$rc" 0 "the allocation with $STEPS concurrent steps finishes"
is "$(rank0 derived-step*.out | grep -c ' ok$')" "$STEPS" "all $STEPS steps rendezvous (rank 0 of each saw its peers)"
is "$(fails derived-step*.out | wc -l)" 0 "no task failed to bind, reach, or met a task of another step"
why derived-step*.out
is "$(ports derived-step*.out | sort -u | wc -l)" "$STEPS" "the $STEPS steps used $STEPS distinct ports"

# 2. Several jobs sharing the nodes at once.
for j in 1 2 3 4 5; do
	srun -N3 -n3 --overlap --rdzv=torch "$py" "$app" >job$j.out 2>&1 &
done
wait
is "$(rank0 job*.out | grep -c ' ok$')" 5 "five jobs sharing the same three nodes all rendezvous"
is "$(fails job*.out | wc -l)" 0 "no job's tasks collided with another job's"
why job*.out
is "$(ports job*.out | sort -u | wc -l)" 5 "the five jobs used five distinct ports"
e2e_stop

# 3. MpiParams=ports: Slurm hands each running step its own ports.
e2e_start RDZV_SLURM_EXTRA="MpiParams=ports=$E2E_RESV_PORTS"
concurrent_steps resv
is "$rc" 0 "with MpiParams=ports, the allocation with $STEPS concurrent steps finishes"
is "$(rank0 resv-step*.out | grep -c ' ok$')" "$STEPS" "with MpiParams=ports, all $STEPS steps rendezvous"
is "$(fails resv-step*.out | wc -l)" 0 "with MpiParams=ports, no collision or cross-talk"
why resv-step*.out
p=$(ports resv-step*.out | sort -u)
is "$(printf '%s\n' "$p" | grep -c .)" "$STEPS" "with MpiParams=ports, $STEPS distinct ports"
out_of=$(printf '%s\n' "$p" | awk -v lo="$E2E_RESV_LO" -v hi="$E2E_RESV_HI" '$1 < lo || $1 > hi' | wc -l)
is "$out_of" 0 "every port is inside the reserved range $E2E_RESV_PORTS"
e2e_stop
done_testing
