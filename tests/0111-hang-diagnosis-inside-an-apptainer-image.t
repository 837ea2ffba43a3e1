#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hang diagnosis inside an Apptainer image: the plugin points the
# task's PYTHONPATH at hang_python=, a directory of the host that no image
# has, so inside `apptainer exec IMAGE` Python loaded the image's own
# sitecustomize.py and --rdzv-debug=hang, --rdzv-collective-timeout and
# torchrun's signal forwarding did nothing, without a word. The plugin now
# appends hang_python:hang_python:ro and the step's directory to the task's
# APPTAINER_BIND and SINGULARITY_BIND (the user's binds kept), so that:
#   - rdzv-hang names the sleeping rank, its node and line, inside the image,
#     under --rdzv=torch and under real torchrun's workers;
#   - --rdzv-collective-timeout=20 ends the step and srun's failure line
#     names rank 2 (rdzv-hang run by srun), as outside (tests/0106);
#   - torch.distributed's default timeout inside the image is the option's;
#   - the user's own APPTAINER_BIND still binds, and Apptainer prints no
#     warning or notice about the two variables;
#   - under --cleanenv, with the user's --env PYTHONPATH=hang_python (the
#     one variable the plugin cannot carry), the same: the step's other
#     variables reach the image as APPTAINERENV_ copies; without it, srun
#     warns at start that the option has no effect, naming the fix.
# container_env=no (no binds, as before) gives the measured failure: the
# image's sitecustomize.py and PyTorch's 30 minutes.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/hang.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_require
e2e_require torch
hang=$top_builddir/helpers/rdzv-hang
[ -x "$hang" ] || skip_all "rdzv-hang not built"
ctr_image
diag "image: $IMAGE ($(apptainer --version))"
# The admin's directory, root-owned, where no image has it and no default
# bind of Apptainer reaches (not /tmp, $HOME or the working directory).
hp=/opt/rdzv-hang-python.$$
mkdir -p "$hp" && chmod 755 "$hp" && cp "$top_srcdir/helpers/python/sitecustomize.py" "$hp/" \
	&& chmod 644 "$hp/sitecustomize.py" || skip_all "cannot create $hp"
tmp=$(mktemp -d /tmp/rdzv-0111.XXXXXX) || exit 1
chmod 755 "$tmp"
# The program inside the image: /tmp is bound by default.
prog=$tmp/hang_rank.py
cp "$top_srcdir/tests/e2e/hang_rank.py" "$prog"
chmod 644 "$prog"
srun_pid=
finish() {
	[ -n "$srun_pid" ] && kill "$srun_pid" 2>/dev/null
	rm -rf "$tmp" "$hp"
	e2e_stop
}
trap finish EXIT
e2e_start RDZV_PLUGSTACK_ARGS="hang_python=$hp hang_helper=$hang"
trap finish EXIT
in_image() { echo "apptainer exec --no-privs $* $IMAGE"; }
l_sleep=$(line_of 'time.sleep(3600)')
l_reduce=$(line_of 'dist.all_reduce(t)')

is "$(apptainer exec --no-privs "$IMAGE" sh -c "test -e $hp/sitecustomize.py && echo there || echo absent")" absent \
	"the image has no $hp (the case of every image)"

# What Python loads inside, and torch.distributed's default timeout there.
pg='import sitecustomize, os; from torch.distributed import distributed_c10d as c; print("site", sitecustomize.__file__, "default", c.default_pg_timeout, "dir", os.environ.get("RDZV_HANG_DIR", "-"))'

# 1. Before (container_env=no: no binds, as the plugin was): armed in name only.
e2e_plugstack "hang_python=$hp" "hang_helper=$hang" container_env=no
run_to 120 srun -N1 -n1 --rdzv-collective-timeout=5m $(in_image) python3 -c "$pg"
like "$out" "^site /usr/lib/python3[.0-9]*/sitecustomize.py default 0:30:00 " \
	"container_env=no: inside the image Python loads the image's sitecustomize.py and PyTorch's 30 minutes stay (the failure)"

# 2. After: the default. The option's timeout inside the image.
e2e_plugstack "hang_python=$hp" "hang_helper=$hang"
run_to 120 srun -N1 -n1 --rdzv-collective-timeout=5m --rdzv-debug=off $(in_image) python3 -c "$pg"
is "$rc" 0 "--rdzv-collective-timeout=5m, apptainer exec: srun exits 0"
like "$out" "^site $hp/sitecustomize.py default 0:05:00 dir -\$" \
	"... inside the image Python loads hang_python='s sitecustomize.py, and torch.distributed's default timeout is 5 minutes"
unlike "$out" "(WARNING|INFO): " "... Apptainer prints no warning or notice about APPTAINER_BIND and SINGULARITY_BIND"
# The user's own binds are kept.
mkdir -p "$tmp/user-bind" && echo from-the-user > "$tmp/user-bind/marker" && chmod -R a+rX "$tmp/user-bind"
APPTAINER_BIND=$tmp/user-bind:/mnt run_to 120 srun -N1 -n1 --rdzv-collective-timeout=5m \
	$(in_image) sh -c "cat /mnt/marker; python3 -c '$pg'"
like "$out" "^from-the-user\$" "the user's own APPTAINER_BIND still binds"
like "$out" "^site $hp/sitecustomize.py default 0:05:00 " "... and hang_python= is bound beside it"
unlike "$out" "(WARNING|INFO): " "... without a warning or notice from Apptainer"
# The directory is read-only inside.
run_to 120 srun -N1 -n1 --rdzv-debug=hang $(in_image) sh -c "touch $hp/x 2>&1 || echo read-only"
like "$out" "read-only" "hang_python= is bound read-only"

# launch, end_step and ask: tests/lib/hang.sh, as in tests/0105.
check_ask() { # check_ask NAME LABEL
	local n2
	n2=$(node_of "$1" 2)
	ask
	is "$hang_rc" 3 "$2: rdzv-hang exits 3 (a rank named)"
	like "$got" "rank 2 +$n2 +hang_rank.py:$l_sleep in wait_here\$" "... rank 2 asleep in wait_here, on its node"
	like "$got" "^rdzv-hang: rank 2 \\($n2\\) is not where the other 3 ranks are \\(all_reduce at hang_rank.py:$l_reduce in main\\): rank 2 at hang_rank.py:$l_sleep in wait_here\$" \
		"... the verdict names rank 2, its node and line"
}

# 3. --rdzv-debug=hang inside the image: rdzv-hang names rank 2.
if launch sleep --ntasks-per-node=2 --rdzv=torch --rdzv-debug=hang $(in_image) python3 "$prog" sleep:2 "$tmp/sleep"; then
	check_ask sleep "--rdzv=torch --rdzv-debug=hang, apptainer exec, rank 2 asleep"
else
	ok 1 "--rdzv=torch in the image: the 4 ranks got into place"
fi
end_step

# 3b. --cleanenv: Apptainer drops the task's PYTHONPATH (the plugin does
# not give APPTAINERENV_PYTHONPATH: it would replace an image's own), so the
# user passes it with --env; the step's other variables (RDZV_HANG_*, the
# timeout, and the SLURM_* ids rdzv-hang's collector reads) reach the image
# as APPTAINERENV_ copies.
cl="--cleanenv --env PYTHONPATH=$hp --env USE_LIBUV=0"
run_to 120 srun -N1 -n1 --rdzv-collective-timeout=5m --rdzv-debug=off $(in_image $cl) python3 -c "$pg"
like "$out" "^site $hp/sitecustomize.py default 0:05:00 " "--cleanenv --env PYTHONPATH=hang_python: the option's timeout inside the image"
unlike "$out" "has no effect inside" "... and srun warns of nothing"
# 3c. --cleanenv without it: the image's Python runs without the plugin's
# sitecustomize, and srun says so at start, with the fix.
run_to 120 srun -N1 -n1 --rdzv-collective-timeout=5m --rdzv-debug=off $(in_image --cleanenv --env USE_LIBUV=0) python3 -c "$pg"
like "$out" "rdzv: warning: --rdzv-collective-timeout has no effect inside 'apptainer exec --cleanenv'.* add --env PYTHONPATH=$hp to the apptainer line" \
	"--cleanenv without --env PYTHONPATH: srun warns that the timeout has no effect, naming the fix"
unlike "$out" "^site $hp/sitecustomize.py" "... as indeed the image's Python ran without it"
if launch clean --ntasks-per-node=2 --rdzv=torch --rdzv-debug=hang $(in_image $cl) python3 "$prog" sleep:2 "$tmp/clean"; then
	check_ask clean "--rdzv-debug=hang, apptainer exec --cleanenv --env PYTHONPATH=hang_python, rank 2 asleep"
else
	ok 1 "--cleanenv: the 4 ranks got into place"
fi
end_step

# 4. Real torchrun inside the image (its script bound), 2 workers a node.
if launch torchrun --ntasks-per-node=1 --rdzv=torchrun --rdzv-debug=hang \
	$(in_image -B "$top_srcdir/tests/e2e") $TORCHRUN --nproc_per_node=2 "$prog" sleep:2 "$tmp/torchrun"; then
	check_ask torchrun "--rdzv=torchrun --rdzv-debug=hang, apptainer exec, worker rank 2 asleep"
else
	ok 1 "--rdzv=torchrun in the image: the 4 workers got into place"
fi
end_step

# 5. --rdzv-collective-timeout=20 inside the image: the step ends, and srun's
# failure line names rank 2 (as tests/0106 outside); also under --cleanenv
# (RDZV_HANG_ASK, srun's address, reaches the ranks as an APPTAINERENV_ copy).
for opts in "" "$cl"; do
	label="--rdzv-collective-timeout=20, apptainer exec${opts:+ --cleanenv --env PYTHONPATH=hang_python}"
	rm -rf "$tmp/torch" && mkdir -p "$tmp/torch" && chmod 777 "$tmp/torch"
	t0=$(date +%s)
	run_to 300 srun -N2 --ntasks-per-node=2 --rdzv=torch --rdzv-collective-timeout=20 \
		$(in_image $opts) python3 "$prog" sleep:2 "$tmp/torch" default-timeout
	took=$(($(date +%s) - t0))
	printf '%s\n' "$out" | grep -E '^(rdzv|  rank)' | sed 's/^/# /'
	n2=$(node_of torch 2)
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "$label: the step ends, failed (exit $rc), in ${took}s"
	within $((150 * ${E2E_TIMEOUT_SCALE:-2})) "$took"; ok $? "... well before PyTorch's 30 minutes"
	like "$out" "Error: .*Timed out waiting 20000ms" "... a rank's error: gloo waited 20000 ms (the option's 20 s)"
	like "$out" "rank 2 +$n2 +hang_rank.py:$l_sleep in wait_here" "... rdzv-hang's table: rank 2 asleep in wait_here, on its node"
	re="^rdzv: (node )?rank [0-9]+ \\(node n[0-9]+[^)]*\\) exited with status 1; the step was stopped; a collective timed out: rank 2 \\($n2\\) is not where the other 3 ranks are \\(all_reduce at hang_rank.py:$l_reduce in main\\): rank 2 at hang_rank.py:$l_sleep in wait_here\$"
	like "$out" "$re" "... srun's failure line names rank 2, its node and line"
done
done_testing
