#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 45, item 1: slurmstepd's torchrun watcher (spank/failure.c) kills an
# agent still alive 1 s after its worker failed. Once slurmstepd has reaped
# the agent, its pid can belong to anyone's new process; a step whose
# teardown is held (here: a process of the job in a session of its own that
# keeps the step's output open) leaves the watcher running past its
# deadline. The attack: the agent's worker fails, the agent exits and is
# reaped before the deadline, and a process of another uid (65533) takes its
# pid (ns_last_pid, as root: tests/e2e/pid_thief.py). The watcher holds a
# pidfd of the task taken at task_post_fork, so its SIGKILL reaches nobody.
# The test signals only what it started: the thief's own child, and the
# job's held process through the FIFO it waits on.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/failure.sh"
e2e_require
e2e_start
work=$(mktemp -d)
cd "$work" || exit 1
chmod 755 "$work"
trap 'cancel_own_jobs; e2e_stop' EXIT
log=$RDZV_CLUSTER_DIR/log/slurmd-n1.log

# One try: the step, the thief beside it, and the held process released.
attack() {
	local d=$work/try.$1 thief_out
	mkdir -p "$d"
	mkfifo "$d/go" "$d/release"
	timeout -k 5 120 $PY "$top_srcdir/tests/e2e/pid_thief.py" "$d" 65533 "$log" >"$d/thief" 2>&1 &
	local thief=$!
	step 60 srun -w n1 -N1 -n1 --rdzv=torchrun $PY "$top_srcdir/tests/e2e/reaped_agent.py" "$d" &
	local srun_pid=$!
	wait "$thief"
	thief_out=$(cat "$d/thief")
	# The held process ends; the step can end. (A FIFO's open waits for
	# its reader: bounded, in case the agent never ran.)
	timeout 10 sh -c 'printf x >"$1"' sh "$d/release"
	wait "$srun_pid"
	result=$thief_out
}

result=
for try in 1 2 3; do
	attack "$try"
	diag "try $try: $result"
	case $result in missed*) continue ;; esac
	break
done
like "$result" '^took [0-9]+ uid 65533' "a process of uid 65533 took the reaped agent's pid (try $try: $result)"
like "$result" ': survived$' "... and lived past the watcher's deadline: no root signal reached it"
pid=$(printf '%s\n' "$result" | sed -n 's/^took \([0-9]*\) .*/\1/p')
like "$(grep -a "torchrun (pid ${pid:-none})" "$log" | tail -n 1)" 'ended before its deadline: not signalled' \
	"slurmd's log: the watcher says the agent ended before its deadline, not signalled"
done_testing
