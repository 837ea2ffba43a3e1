#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Warning signals reach every worker: scancel
# --signal=USR1 JOB.STEP (what #SBATCH --signal=USR1@120 and srun
# --signal do at the time limit, through the same slurmstepd path) reaches
# every training process once, and the step goes on: under --rdzv=torch
# Slurm signals the ranks themselves; under --rdzv=torchrun Slurm signals
# torchrun only (PyTorch 2.x starts each worker in its own session; torchrun
# handles TERM, INT, HUP and QUIT, and USR1 would end it), and the agent,
# armed by the plugin (RDZV_FORWARD_SIGNALS), forwards it to each worker
# Slurm did not reach. USR2 follows USR1 as a marker: a worker that got USR1
# twice (from Slurm and from the agent) has both before its USR2.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
prog=$top_srcdir/tests/e2e/signal_rank.py
e2e_start RDZV_PLUGSTACK_ARGS="hang_python=$top_srcdir/helpers/python"

tmp=$(mktemp -d /tmp/rdzv-0107.XXXXXX) || exit 1
chmod 755 "$tmp"
srun_pid=
finish() {
	[ -n "$srun_pid" ] && kill "$srun_pid" 2>/dev/null
	rm -rf "$tmp"
	e2e_stop
}
trap finish EXIT

# wait_for SECS CMD...: until CMD succeeds (0) or SECS x scale pass (1)
wait_for() {
	local i n=$(($1 * 5 * ${E2E_TIMEOUT_SCALE:-2}))
	shift
	for i in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
count_ready() { [ "$(ls "$tmp/$1"/ready-* 2>/dev/null | wc -l)" = 4 ]; }
all_got() { # all_got NAME SIG: every rank's log has SIG
	local r
	for r in 0 1 2 3; do grep -q "^$2 " "$tmp/$1/sig-$r" 2>/dev/null || return 1; done
}

# case NAME LABEL SRUN-ARGS...
case_of() {
	local name=$1 label=$2 r js n1 bad=0
	shift 2
	rm -rf "$tmp/$name" && mkdir -p "$tmp/$name" && chmod 777 "$tmp/$name"
	timeout -k 5 $((300 * ${E2E_TIMEOUT_SCALE:-2})) srun -N2 "$@" >"$tmp/$name.out" 2>&1 &
	srun_pid=$!
	if ! wait_for 300 count_ready "$name"; then
		ok 1 "$label: the 4 ranks got into place"
		diag "$(tail -n 20 "$tmp/$name.out")"
		touch "$tmp/$name/stop"
		wait "$srun_pid"
		srun_pid=
		return
	fi
	js=$(awk '{print $3}' "$tmp/$name/ready-0")
	scancel --signal=USR1 "$js"
	wait_for 60 all_got "$name" USR1; ok $? "$label: scancel --signal=USR1 $js reached all 4 ranks' handlers"
	scancel --signal=USR2 "$js"
	wait_for 60 all_got "$name" USR2; ok $? "... then USR2 reached them too"
	for r in 0 1 2 3; do
		n1=$(grep -c '^USR1 ' "$tmp/$name/sig-$r" 2>/dev/null)
		[ "$n1" = 1 ] || { bad=1; diag "rank $r got USR1 $n1 times: $(tr '\n' ' ' <"$tmp/$name/sig-$r")"; }
	done
	ok "$bad" "... each rank got USR1 exactly once (not from Slurm and again from torchrun)"
	unlike "$(awk '{print $5}' "$tmp/$name"/ready-*)" "USR" "... no rank inherited RDZV_FORWARD_SIGNALS (only torchrun's agent acts on it)"
	kill -0 "$srun_pid" 2>/dev/null; ok $? "... and the step is still running"
	touch "$tmp/$name/stop"
	wait "$srun_pid"
	rc=$?
	srun_pid=
	is "$rc" 0 "... and ends well when the ranks finish (nothing was killed by the signals)"
	[ "$rc" = 0 ] || diag "$(tail -n 20 "$tmp/$name.out")"
}

case_of torch "--rdzv=torch" --ntasks-per-node=2 --rdzv=torch $PY "$prog" "$tmp/torch"
case_of torchrun "--rdzv=torchrun (real torchrun, 2 workers a node)" --ntasks-per-node=1 --rdzv=torchrun \
	$TORCHRUN --nproc_per_node=2 "$prog" "$tmp/torchrun"

# Control: the same with the agent left alone (RDZV_FORWARD_SIGNALS=none),
# as torchrun is on its own: USR1 ends torchrun, and with it the step.
name=control
rm -rf "$tmp/$name" && mkdir -p "$tmp/$name" && chmod 777 "$tmp/$name"
RDZV_FORWARD_SIGNALS=none timeout -k 5 $((300 * ${E2E_TIMEOUT_SCALE:-2})) srun -N2 --ntasks-per-node=1 \
	--rdzv=torchrun $TORCHRUN --nproc_per_node=2 "$prog" "$tmp/$name" >"$tmp/$name.out" 2>&1 &
srun_pid=$!
if wait_for 300 count_ready "$name"; then
	js=$(awk '{print $3}' "$tmp/$name/ready-0")
	scancel --signal=USR1 "$js"
	ended() { ! kill -0 "$srun_pid" 2>/dev/null; }
	wait_for 60 ended
	wait "$srun_pid"
	rc=$?
	ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "control, RDZV_FORWARD_SIGNALS=none: USR1 ends torchrun and the step (exit $rc): what the forwarding prevents"
else
	ok 1 "control: the 4 workers got into place"
fi
touch "$tmp/$name/stop" # workers in their own sessions outlive torchrun: let them go
srun_pid=

# The agent's environment, as the plugin left it: RDZV_FORWARD_SIGNALS set
# (the user's own value wins; none turns it off).
run_to 60 srun -N1 -n1 --rdzv=torchrun printenv RDZV_FORWARD_SIGNALS
is "$out" "USR1,USR2" "--rdzv=torchrun: the agent gets RDZV_FORWARD_SIGNALS=USR1,USR2"
RDZV_FORWARD_SIGNALS=none run_to 60 srun -N1 -n1 --rdzv=torchrun printenv RDZV_FORWARD_SIGNALS
is "$out" "none" "... the user's own RDZV_FORWARD_SIGNALS=none is kept"
run_to 60 srun -N1 -n1 --rdzv=torch sh -c 'echo "${RDZV_FORWARD_SIGNALS:-unset}"'
is "$out" "unset" "--rdzv=torch: not set (Slurm signals the ranks themselves)"
done_testing
