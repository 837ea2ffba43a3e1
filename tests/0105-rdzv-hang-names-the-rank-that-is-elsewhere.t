#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A step that hangs says which rank holds it, and where: under
# --rdzv-debug=hang, 4 real PyTorch ranks on 2 nodes (gloo), one of them not
# in the all_reduce the other three wait in (asleep, spinning in Python, or
# blocked in read()), and rdzv-hang, run from outside the job as a user on a
# login node would, names that rank, its node and its line, within seconds,
# under --rdzv=torch and under --rdzv=torchrun (the workers of real
# torchrun). Without the option nothing is armed and rdzv-hang says so.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/hang.sh"
e2e_require torch
hang=$top_builddir/helpers/rdzv-hang
prog=$top_srcdir/tests/e2e/hang_rank.py
[ -x "$hang" ] || skip_all "rdzv-hang not built"
e2e_start RDZV_PLUGSTACK_ARGS="hang_python=$top_srcdir/helpers/python"

tmp=$(mktemp -d /tmp/rdzv-0105.XXXXXX) || exit 1
chmod 755 "$tmp"
srun_pid=
finish() {
	[ -n "$srun_pid" ] && kill "$srun_pid" 2>/dev/null
	rm -rf "$tmp"
	e2e_stop
}
trap finish EXIT
l_sleep=$(line_of 'time.sleep(3600)')
# A busy loop is seen on either of its lines (CPython's jump back is the while's).
l_spin="($(line_of 'while True:')|$(line_of 'n += 1'))"
l_read=$(line_of 'os.read(r, 1)')
l_reduce=$(line_of 'dist.all_reduce(t)')

# launch, end_step, ask (rdzv-hang on the step, timed), node_of and
# line_of: tests/lib/hang.sh.

check_case() { # check_case NAME HOW BAD LINE FUNC MODE-LABEL
	local name=$1 how=$2 bad=$3 line=$4 func=$5 label=$6 n r
	n=$(node_of "$name" "$bad")
	ask
	ok "$([ "$hang_rc" = 3 ] && echo 0 || echo 1)" "$label: rdzv-hang exits 3 (a rank named) in ${took}s"
	within 10 "$took"; ok $? "... within 10 s"
	like "$got" "rank $bad +$n +hang_rank.py:$line in $func\$" "... rank $bad's line: its node and hang_rank.py:$line in $func"
	for r in 0 1 2 3; do
		[ "$r" = "$bad" ] && continue
		like "$got" "rank $r +$(node_of "$name" "$r") +all_reduce at hang_rank.py:$l_reduce in main\$" \
			"... rank $r waits in all_reduce at hang_rank.py:$l_reduce, on its node"
	done
	like "$got" "^rdzv-hang: rank $bad \\($n\\) is not where the other 3 ranks are \\(all_reduce at hang_rank.py:$l_reduce in main\\): rank $bad at hang_rank.py:$line in $func\$" \
		"... the verdict names rank $bad, its node and line"
}

# 1. --rdzv=torch, rank 2 asleep (the issue's case).
if launch sleep --ntasks-per-node=2 --rdzv=torch --rdzv-debug=hang $PY "$prog" sleep:2 "$tmp/sleep"; then
	check_case sleep sleep 2 "$l_sleep" wait_here "--rdzv=torch, rank 2 asleep"
	# Again, as from a batch script of 64 tasks (srun reads SLURM_NTASKS
	# as -n): still one collector a node, each rank once.
	SLURM_NTASKS=64 SLURM_NTASKS_PER_NODE=32 ask
	like "$got" "rank 2 +$(node_of sleep 2) +hang_rank.py:$l_sleep in wait_here" "... asked again: the same answer (nothing was stopped)"
	is "$(printf '%s\n' "$got" | grep -c '^  rank ')" 4 "... each rank once, though the caller's SLURM_NTASKS=64"
	kill -0 "$srun_pid" 2>/dev/null; ok $? "... and the step is still running"
else
	ok 1 "--rdzv=torch: the 4 ranks got into place"
fi
end_step

# 2. rank 1 spinning in Python and rank 3 blocked in read(), in one step.
if launch busy --ntasks-per-node=2 --rdzv=torch --rdzv-debug=hang $PY "$prog" busy:1,syscall:3 "$tmp/busy"; then
	n1=$(node_of busy 1) n3=$(node_of busy 3)
	ask
	ok "$([ "$hang_rc" = 3 ] && echo 0 || echo 1)" "rank 1 busy, rank 3 in read(): rdzv-hang exits 3 in ${took}s"
	within 10 "$took"; ok $? "... within 10 s"
	like "$got" "rank 1 +$n1 +hang_rank.py:$l_spin in spin_here\$" "... rank 1 in its busy loop: hang_rank.py:$l_spin in spin_here, on its node"
	like "$got" "rank 3 +$n3 +hang_rank.py:$l_read in block_here\$" "... rank 3 blocked in read(): hang_rank.py:$l_read in block_here"
	like "$got" "^rdzv-hang: ranks 1 \\($n1\\), 3 \\($n3\\) are not where the other 2 ranks are \\(all_reduce at hang_rank.py:$l_reduce in main\\): rank 1 at hang_rank.py:$l_spin in spin_here; rank 3 at hang_rank.py:$l_read in block_here\$" \
		"... the verdict names both, their nodes and lines"
else
	ok 1 "busy/syscall: the 4 ranks got into place"
fi
end_step

# 4. --rdzv=torchrun: real torchrun, 2 workers per node; worker rank 2 asleep.
if launch torchrun --ntasks-per-node=1 --rdzv=torchrun --rdzv-debug=hang $TORCHRUN --nproc_per_node=2 "$prog" sleep:2 "$tmp/torchrun"; then
	check_case torchrun sleep 2 "$l_sleep" wait_here "--rdzv=torchrun, worker rank 2 asleep"
else
	ok 1 "--rdzv=torchrun: the 4 workers got into place"
fi
end_step

# 5. Off (the default): nothing armed, nothing in the environment.
if launch off --ntasks-per-node=2 --rdzv=torch $PY "$prog" sleep:2 "$tmp/off"; then
	ask
	is "$hang_rc" 3 "without --rdzv-debug=hang: rdzv-hang exits 3"
	like "$got" "no rank of the step answered" "... and says no rank answered (nothing armed)"
	pid=$(awk '{print $4}' "$tmp/off/rank-0")
	# rank 0's environment, read where it runs (its node's /proc)
	env0=$(srun --jobid "${js%.*}" --overlap -N1 -w "$(node_of off 0)" --gres=none -K0 \
		sh -c "tr '\\0' '\\n' </proc/$pid/environ" 2>/dev/null)
	unlike "$env0" "^(RDZV_HANG_DIR|RDZV_HANG_SIGNAL|PYTHONPATH)=" "... and no rank has RDZV_HANG_* or PYTHONPATH set"
	like "$env0" "^RANK=0\$" "... (rank 0's environment was read: RANK=0)"
else
	ok 1 "off: the 4 ranks got into place"
fi
end_step

# 6. A wrong value is refused by srun, naming the valid ones.
run_to 30 srun -N1 --rdzv-debug=bogus true
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "--rdzv-debug=bogus is refused (exit $rc)"
like "$out" "--rdzv-debug=bogus: valid values are hang, off" "... naming the valid values"
done_testing
