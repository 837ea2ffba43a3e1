#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A step never outlives its failed collective. 4 real PyTorch ranks on 2
# nodes (gloo), --rdzv-collective-timeout=5 (torch.distributed's default
# timeout, which arms the plugin's sitecustomize): rank 3 never joins the
# all_reduce; the others time out after 5 s and then block for ever in
# their finally block (tests/e2e/wedge_rank.py: what a hung
# destroy_process_group or barrier does). No task exits by itself, so
# kill-on-bad-exit has nothing to act on: before, the step never ended.
# Each rank tells srun the moment its collective raises, before its
# handlers run; srun stops the step once the grace has passed and names the
# rank that never joined:
#   - the user's --rdzv-collective-grace=6s: srun ends within the timeout
#     plus the grace (a few seconds' slack), not before the grace, naming
#     rank 3 and its node; the step and every rank are gone;
#   - the site's collective_grace=4s (plugstack.conf) without the option;
#   - under --rdzv=torchrun, real torchrun's workers: the same, the worker
#     named on its node;
#   - --rdzv-collective-grace=off: the step goes on past the site's grace
#     (a program that recovers by itself), until the test cancels it;
#   - a wrong value is refused by srun, naming the valid ones.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
hang=$top_builddir/helpers/rdzv-hang
prog=$top_srcdir/tests/e2e/wedge_rank.py
[ -x "$hang" ] || skip_all "rdzv-hang not built"
site="hang_python=$top_srcdir/helpers/python hang_helper=$hang collective_grace=4s"
e2e_start RDZV_PLUGSTACK_ARGS="$site"

work=$(mktemp -d /tmp/rdzv-0121.XXXXXX) || exit 1
chmod 755 "$work"
srun_pid=
finish() {
	[ -n "$srun_pid" ] && kill "$srun_pid" 2>/dev/null
	rm -rf "$work"
	e2e_stop
}
trap finish EXIT

wait_for() {
	local end=$((SECONDS + $1 * ${E2E_TIMEOUT_SCALE:-2})); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done
}
arrived() { [ "$(ls "$1"/arrived.* 2>/dev/null | wc -l)" -ge 4 ]; }
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }'; }
gone() { # gone DIR: no rank of the step is left
	local f pid
	for f in "$1"/arrived.*; do
		read -r _ _ _ pid < "$f"
		kill -0 "$pid" 2>/dev/null && return 1
	done
	return 0
}
no_step() { ! squeue -h -s -o '%i' 2>/dev/null | grep -Fxq "$1"; }

# wedged NAME GRACE_S WHY SRUN-ARGS-AND-PROGRAM...: the wedged step (2
# nodes, 4 ranks, rank 3 stalled) to its end; checks the time, the line,
# and that nothing of the step is left.
wedged() {
	local name=$1 grace=$2 why=$3 d=$work/$1 t0 t rc node js out
	shift 3
	mkdir -m 777 "$d"
	srun -N2 --rdzv-collective-timeout=5 "$@" "$prog" "$d" 3 >"$d/out" 2>&1 &
	srun_pid=$!
	wait_for 120 arrived "$d"; ok $? "$name: 4 ranks on 2 nodes arrive; rank 3 will not join the all_reduce"
	t0=$EPOCHREALTIME
	wait "$srun_pid"; rc=$?
	t=$(ms_since "$t0")
	srun_pid=
	out=$(cat "$d/out")
	read -r _ node js _ < "$d/arrived.3"
	ok "$(not0 "$rc")" "$name: srun fails (exit $rc)"
	like "$out" "^rdzv: rank 3 \\(node $node\\) never joined the collective the other ranks left \\(first rank [012] \\(node n[12]\\): [A-Za-z]*Error: .*\\); the step was stopped $grace s after that, still running \\($why\\)\$" \
		"$name: the line names rank 3, its node $node, the first rank's error and the grace"
	unlike "$out" "^rdzv: (node )?rank [0-9]+ \\(node [^)]*\\) (was killed by signal|exited with status)" \
		"$name: ... and no rank the grace's signal ended is named after it"
	ok "$([ "$t" -lt $(( (5 + grace + 4) * 1000 )) ] && echo 0 || echo 1)" \
		"$name: srun ends $t ms after the ranks arrived: within the 5 s timeout + the ${grace} s grace (+4 s)"
	ok "$([ "$t" -ge $(( (5 + grace - 1) * 1000 )) ] && echo 0 || echo 1)" \
		"$name: ... and not before the grace had passed"
	wait_for 10 gone "$d"; ok $? "$name: every rank of the step is gone (none ended by itself)"
	wait_for 10 no_step "$js"; ok $? "$name: step $js is gone from squeue"
	printf '%s\n' "$out" | grep '^rdzv' | sed 's/^/# /'
}

# 1. The user's grace.
wedged user 6 "--rdzv-collective-grace=6s" --ntasks-per-node=2 --rdzv=torch \
	--rdzv-collective-grace=6s $PY
# 2. The site's.
wedged site 4 "collective_grace=4s in plugstack.conf" --ntasks-per-node=2 --rdzv=torch $PY
# 3. Real torchrun's workers, 2 a node: the ranks are the workers', their
# world comes with their reports, a worker's node is its agent's; SIGTERM
# lets each agent end its workers (in a session of their own under 2.x,
# where Slurm's signal to the task's process group does not reach).
wedged torchrun 5 "--rdzv-collective-grace=5s" --ntasks-per-node=1 --rdzv=torchrun \
	--rdzv-collective-grace=5s $TORCHRUN --nproc_per_node=2

# 4. off: the step goes on past the site's grace, until cancelled.
d=$work/off; mkdir -m 777 "$d"
srun -N2 --ntasks-per-node=2 --rdzv=torch --rdzv-collective-timeout=5 --rdzv-collective-grace=off \
	$PY "$prog" "$d" 3 >"$d/out" 2>&1 &
srun_pid=$!
wait_for 120 arrived "$d"; ok $? "off: 4 ranks arrive"
t0=$EPOCHREALTIME
read -r _ _ js _ < "$d/arrived.0"
ended() { ! kill -0 "$srun_pid" 2>/dev/null; }
E2E_TIMEOUT_SCALE=1 wait_for 12 ended # the 5 s timeout + the site's 4 s grace + 3 s
t=$(ms_since "$t0")
if [ "$t" -lt 12000 ]; then sleep $(( (12000 - t) / 1000 + 1 )); fi
ok "$(kill -0 "$srun_pid" 2>/dev/null && echo 0 || echo 1)" "off: the step still runs $(ms_since "$t0") ms after the ranks arrived (the site's 4 s grace would have stopped it)"
unlike "$(cat "$d/out")" "never joined" "off: srun named nobody"
scancel "$js"
wait "$srun_pid"
srun_pid=
wait_for 10 gone "$d"; ok $? "off: the test's scancel ended it"

# 5. A wrong value, refused by srun before anything runs.
run_to 60 srun -N1 --rdzv-collective-grace=soon true
ok "$(not0 "$rc")" "--rdzv-collective-grace=soon: srun refuses (exit $rc)"
like "$out" "--rdzv-collective-grace=soon: valid values are a duration of 1s to 7 days \\(N, Ns, Nm, Nh\\), off or default \\(30s\\)" \
	"... naming the valid values"
done_testing
