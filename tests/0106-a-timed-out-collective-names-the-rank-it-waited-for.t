#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The end of a hang names the culprit: with
# --rdzv-collective-timeout=20 (which arms --rdzv-debug=hang), 4 real
# PyTorch ranks on 2 nodes (gloo, PyTorch's default timeout: the program
# passes none), rank 2 asleep before the all_reduce the others wait in. The
# waiting ranks time out after 20 s instead of PyTorch's 30 minutes, ask
# srun, srun runs rdzv-hang on the step once, and the failure line that ends
# the step names rank 2, its node and its line, not only the rank that gave
# up first; under --rdzv=torch and under real torchrun's workers. Also: the
# default timeout is what the option says, a timeout the program passes is
# its own, and a wrong value is refused by srun naming the valid ones.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/hang.sh"
e2e_require torch
hang=$top_builddir/helpers/rdzv-hang
prog=$top_srcdir/tests/e2e/hang_rank.py
[ -x "$hang" ] || skip_all "rdzv-hang not built"
e2e_start RDZV_PLUGSTACK_ARGS="hang_python=$top_srcdir/helpers/python hang_helper=$hang"

tmp=$(mktemp -d /tmp/rdzv-0106.XXXXXX) || exit 1
chmod 755 "$tmp"
finish() {
	rm -rf "$tmp"
	e2e_stop
}
trap finish EXIT
l_sleep=$(line_of 'time.sleep(3600)')
l_reduce=$(line_of 'dist.all_reduce(t)')

# timed NAME SRUN-ARGS...: the step to its end; $out, $rc, $took (s)
timed() {
	local name=$1 t0
	shift
	rm -rf "$tmp/$name" && mkdir -p "$tmp/$name" && chmod 777 "$tmp/$name"
	t0=$(date +%s.%N)
	run_to 300 srun -N2 "$@"
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	printf '%s\n' "$out" | grep -E '^(rdzv|  rank|step )' | sed 's/^/# /'
}

check_end() { # check_end NAME LABEL
	local name=$1 label=$2 n2
	n2=$(node_of "$name" 2)
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "$label: the step ends, failed (exit $rc), in ${took}s"
	# 20 s of timeout, the ranks' start and rdzv-hang: minutes, not 30.
	within $((150 * ${E2E_TIMEOUT_SCALE:-2})) "$took"; ok $? "... well before PyTorch's 30 minutes"
	like "$out" "^rdzv: rank [0-9]+ \\(node n[0-9]+\\) left a collective with an error: [A-Za-z]*Error: .*; asking every rank of the step where it is" \
		"... srun says which rank left a collective with an error, and that it asks every rank"
	like "$out" "Error: .*Timed out waiting 20000ms" \
		"... a rank's error: gloo waited 20000 ms (the option's 20 s, not PyTorch's default)"
	is "$(printf '%s\n' "$out" | grep -c 'asking every rank of the step where it is')" 1 \
		"... srun asked the ranks once, though 3 ranks failed"
	like "$out" "rank 2 +$n2 +hang_rank.py:$l_sleep in wait_here" "... rdzv-hang's table: rank 2 asleep in wait_here, on its node"
	re="^rdzv: (node )?rank [0-9]+ \\(node n[0-9]+[^)]*\\) exited with status 1; the step was stopped; a collective timed out: rank 2 \\($n2\\) is not where the other 3 ranks are \\(all_reduce at hang_rank.py:$l_reduce in main\\): rank 2 at hang_rank.py:$l_sleep in wait_here\$"
	like "$out" "$re" "... the failure line names rank 2, its node and line, and where the others waited"
	printf '%s\n' "$out" | grep -Eq -- "$re" || printf '%s\n' "$out" | grep -E 'Error|Timed|rdzv|exitcode|File "/work' | head -n 60 | sed 's/^/#   | /'
}

# 1. --rdzv=torch, rank 2 asleep, the others in all_reduce.
timed torch --ntasks-per-node=2 --rdzv=torch --rdzv-collective-timeout=20 \
	$PY "$prog" sleep:2 "$tmp/torch" default-timeout
check_end torch "--rdzv=torch"

# 2. --rdzv=torchrun: real torchrun, 2 workers per node; worker rank 2 asleep.
timed torchrun --ntasks-per-node=1 --rdzv=torchrun --rdzv-collective-timeout=20s \
	$TORCHRUN --nproc_per_node=2 "$prog" sleep:2 "$tmp/torchrun" default-timeout
check_end torchrun "--rdzv=torchrun"

# 3. What the option sets, and what it leaves alone.
pg='from torch.distributed import distributed_c10d as c; import inspect, os; print("default", c.default_pg_timeout, "init", inspect.signature(c.init_process_group).parameters["timeout"].default, "env", os.environ.get("RDZV_HANG_DIR", "-"))'
run_to 60 srun -N1 -n1 --rdzv-collective-timeout=5m --rdzv-debug=off $PY -c "$pg"
like "$out" "^default 0:05:00 " "--rdzv-collective-timeout=5m: torch.distributed's default timeout is 5 minutes"
like "$out" "env -\$" "... with --rdzv-debug=off nothing else is armed (no RDZV_HANG_DIR)"
run_to 60 srun -N1 -n1 $PY -c "$pg"
like "$out" "^default 0:30:00 " "without it, PyTorch's own 30 minutes"
like "$out" "env -\$" "... and nothing is armed"

# 4. A wrong value is refused by srun, naming the valid ones.
run_to 30 srun -N1 --rdzv-collective-timeout=soon true
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "--rdzv-collective-timeout=soon is refused (exit $rc)"
like "$out" "--rdzv-collective-timeout=soon: valid values are a duration of 1s to 7 days" "... naming the valid values"
done_testing
