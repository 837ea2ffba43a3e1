#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two concurrent steps of one allocation on the same nodes, and two jobs
# sharing a node, rendezvous on different ports and all finish; with
# MpiParams=ports the step's reserved port is the one used.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1
port_of() { sed -n 's/.*master [^:]*:\([0-9]*\).*/\1/p' <<<"$1"; }

cat > steps.sh <<SH
#!/bin/bash
srun --overlap -N3 -n3 $PY $app > a.out 2>&1 &
srun --overlap -N3 -n3 $PY $app > b.out 2>&1 &
wait
SH
run_to 120 salloc -N3 --ntasks-per-node=2 --rdzv=torch bash steps.sh
is "$rc" 0 "an allocation running two steps at once finishes"
va=$($check 3 < a.out); ra=$?
vb=$($check 3 < b.out); rb=$?
is "$ra" 0 "first concurrent step meets ($va)"
is "$rb" 0 "second concurrent step meets ($vb)"
pa=$(port_of "$va"); pb=$(port_of "$vb")
ok "$([ -n "$pa" ] && [ -n "$pb" ] && [ "$pa" != "$pb" ] && echo 0 || echo 1)" "the two steps use different ports ($pa, $pb)"

srun -w n1 -N1 -n2 --rdzv=torch $PY "$app" > j1.out 2>&1 &
srun -w n1 -N1 -n2 --rdzv=torch $PY "$app" > j2.out 2>&1 &
wait
v1=$($check 2 < j1.out); r1=$?
v2=$($check 2 < j2.out); r2=$?
is "$r1" 0 "first of two jobs sharing n1 meets ($v1)"
is "$r2" 0 "second of two jobs sharing n1 meets ($v2)"
p1=$(port_of "$v1"); p2=$(port_of "$v2")
ok "$([ -n "$p1" ] && [ "$p1" != "$p2" ] && echo 0 || echo 1)" "jobs sharing a node use different ports ($p1, $p2)"

e2e_stop
e2e_start RDZV_SLURM_EXTRA="MpiParams=ports=$E2E_RESV_PORTS"
run_to 60 srun -N2 -n2 --rdzv=torch bash -c 'echo "P=$MASTER_PORT R=$SLURM_STEP_RESV_PORTS"'
first=$(sed -n 's/.*R=\([0-9]*\).*/\1/p' <<<"$out" | sort -u)
ports=$(sed -n 's/.*P=\([0-9]*\).*/\1/p' <<<"$out" | sort -u)
ok "$([ -n "$first" ] && [ "$first" -ge "$E2E_RESV_LO" ] && [ "$first" -le "$E2E_RESV_HI" ] && echo 0 || echo 1)" "MpiParams=ports gives the step reserved ports ($first)"
is "$ports" "$first" "MASTER_PORT is the step's first reserved port"
run_to 60 srun -N2 -n4 --rdzv=torch $PY "$app"
verdict=$(printf '%s\n' "$out" | $check 4)
is "$?" 0 "ranks meet on the reserved port ($verdict)"
run_to 60 srun -N1 -n1 --rdzv=torch --rdzv-verbose bash -c 'echo "R=$SLURM_STEP_RESV_PORTS"'
first=$(sed -n 's/^R=\([0-9]*\).*/\1/p' <<<"$out")
like "$out" "port $first from SLURM_STEP_RESV_PORTS" "--rdzv-verbose names the step's first reserved port ($first) and its source"
unlike "$out" "ephemeral" "a reserved range below the ephemeral range draws no note"

# A site whose MpiParams range lies inside the kernel's ephemeral range: any
# outgoing connection may hold a step's port. No rank binds here (a one-task
# step runs true), so nothing can fail by chance; the verbose line says it.
read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range
in_lo=$((E2E_RESV_LO + 20000)) in_hi=$((E2E_RESV_LO + 20009))
e2e_stop
if [ "$in_lo" -ge "$eph_lo" ] && [ "$in_hi" -le "$eph_hi" ]; then
	e2e_start RDZV_SLURM_EXTRA="MpiParams=ports=$in_lo-$in_hi"
	run_to 60 srun -N1 -n1 --rdzv=torch --rdzv-verbose true
	p=$(sed -n 's/.* port \([0-9]*\) from SLURM_STEP_RESV_PORTS.*/\1/p' <<<"$out" | head -n 1)
	ok "$([ -n "$p" ] && [ "$p" -ge "$in_lo" ] && [ "$p" -le "$in_hi" ] && echo 0 || echo 1)" \
		"MpiParams=ports=$in_lo-$in_hi: the step's port $p is reserved"
	like "$out" "from SLURM_STEP_RESV_PORTS, inside this node's ephemeral range $eph_lo-$eph_hi" \
		"--rdzv-verbose notes the reserved port lies in the ephemeral range ($eph_lo-$eph_hi, read from /proc)"
else
	why="$in_lo-$in_hi is not inside this machine's ephemeral range $eph_lo-$eph_hi"
	skip "$why"; skip "$why"
fi
done_testing
