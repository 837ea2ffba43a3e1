#!/bin/bash
# Under Slurm 24.11 with pyxis 0.24 and enroot 4.1.2 (built from
# ../shared/containers in the containers root), srun -N3 --ntasks-per-node=2
# --container-image=IMAGE --rdzv=torch: with rdzv.so listed after pyxis, the
# six ranks run inside the image, meet and all-reduce, with and without
# enroot's PyTorch hook; with rdzv.so listed before pyxis, srun refuses the
# step and names the order that works, and nothing starts. Steps without a
# container, or containers without anything for rdzv to set, are not refused.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_enter
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
ctr_start
check="$PY $top_srcdir/tests/e2e/check_reports.py"
keys="RANK LOCAL_RANK WORLD_SIZE MASTER_ADDR MASTER_PORT OMP_NUM_THREADS PYTORCH_VERSION NCCL_SOCKET_IFNAME in_image"

for hook in off on; do
	ctr_hook $hook
	ctr_plugstack pyxis-first
	ctr_srun 240 -N3 --ntasks-per-node=2 --rdzv=torch $PY "$RANK_PY"
	is "$rc" 0 "rdzv after pyxis, hook $hook: srun exits 0"
	verdict=$(printf '%s\n' "$out" | $check 6 --per-node n1=2,n2=2,n3=2)
	is "$?" 0 "rdzv after pyxis, hook $hook: 6 ranks meet and all-reduce, MASTER_ADDR = rank 0's node ($verdict)"
	is "$(printf '%s\n' "$out" | grep -c '"in_image": true')" 6 "rdzv after pyxis, hook $hook: every rank ran inside the image"
	diag "rank 0 saw (rdzv after pyxis, hook $hook): $(ctr_rank0 $keys)"
	[ "$rc" = 0 ] || diag "$(printf '%s' "$out" | head -c 3000)"
	if [ $hook = off ]; then
		unlike "$out" "rdzv: warning" "rdzv after pyxis, hook off: nothing to replace, no warning"
	else
		# The hook's port, derived as 50-slurm-pytorch.sh does; the
		# step's is the plugin's (the same on every rank, checked above).
		job=$(ctr_rank0 SLURM_JOB_ID | cut -d= -f2)
		port=$(ctr_rank0 MASTER_PORT | cut -d= -f2)
		like "$out" "rdzv: warning: inside the container, 1 variable set by the image's ENV or an enroot hook was replaced: MASTER_PORT=$((job % 4536 + 61000)) -> $port \\(rdzv\\)" \
			"rdzv after pyxis, hook on: the hook's MASTER_PORT is replaced by the step's, with a warning (MASTER_ADDR, WORLD_SIZE, RANK agree)"
		diag "$(printf '%s\n' "$out" | grep 'rdzv: warning')"
	fi

	ctr_plugstack rdzv-first
	run_to 60 srun -N3 --ntasks-per-node=2 --container-image="$IMAGE" --rdzv=torch $PY "$RANK_PY"
	ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "rdzv before pyxis, hook $hook: srun refuses the container step (exit $rc)"
	like "$out" "loads rdzv.so before spank_pyxis.so.*List rdzv.so after spank_pyxis.so in plugstack.conf" \
		"rdzv before pyxis, hook $hook: the message names the order that works"
	unlike "$out" "RDZV_REPORT" "rdzv before pyxis, hook $hook: no task started"
	diag "srun said: $(printf '%s\n' "$out" | grep rdzv | head -n 1)"
done
ctr_hook off

# rdzv before pyxis refuses only what it cannot make right.
run_to 120 srun -N3 --ntasks-per-node=2 --rdzv=torch $PY "$RANK_PY"
is "$rc" 0 "rdzv before pyxis, no container: the step runs"
verdict=$(printf '%s\n' "$out" | $check 6 --per-node n1=2,n2=2,n3=2)
is "$?" 0 "rdzv before pyxis, no container: ranks meet ($verdict)"
ctr_srun 240 -N1 -n1 env RDZV_TEST_NO_MEET=1 $PY "$RANK_PY"
is "$rc" 0 "rdzv before pyxis, container without --rdzv: the step runs"
like "$out" '"in_image": true' "rdzv before pyxis, container without --rdzv: inside the image"
done_testing
