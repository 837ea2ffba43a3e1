#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A refusal leaves nothing behind. What srun's own command
# line decides is refused in init_post_opt, before srun asks for an
# allocation: a refusal after it (local_user_init) left the job holding its
# nodes and srun's allocation shepherd holding the terminal for about 20 s,
# and the user's next srun waited. Checked: the refused srun ends at once
# with the reason, no job id was used (the next job's id follows the one
# before), nothing is queued, and the next srun on the same nodes runs at once.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
e2e_start
cd "$(mktemp -d)" || exit 1

last_id() { sbatch --parsable -N1 -o /dev/null --wrap true 2>/dev/null; }

refused_leaving_nothing() { # refused_leaving_nothing LABEL PATTERN -- SRUN ARGS...
	local label=$1 pat=$2 before after t0 t1 took
	shift 3
	before=$(last_id)
	t0=$(date +%s%N)
	run_to 60 "$@"
	t1=$(date +%s%N)
	took=$(( (t1 - t0) / 1000000 ))
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "$label: refused (exit $rc, ${took} ms)"
	like "$out" "$pat" "$label: the reason is named"
	ok "$([ "$took" -lt 5000 ] && echo 0 || echo 1)" "$label: srun ends at once (${took} ms)"
	after=$(last_id)
	is "$((after - before))" 1 "$label: no job was allocated (job ids $before, then $after)"
	is "$(squeue -h -t PENDING,CONFIGURING,RUNNING,SUSPENDED -o '%i %j %T' | grep -v ' wrap ' | tr '\n' ' ')" "" "$label: nothing is left queued or running (a step's job still completing from the case before is neither)"
	t0=$(date +%s%N)
	run_to 60 srun -N2 -w n1,n2 true
	took=$(( ($(date +%s%N) - t0) / 1000000 ))
	ok "$([ "$rc" = 0 ] && [ "$took" -lt 10000 ] && echo 0 || echo 1)" \
		"$label: the next srun on the same nodes runs at once (exit $rc, ${took} ms)"
}

refused_leaving_nothing "srun -N2 --rdzv=deepspeed deepspeed x.py" "deepspeed" -- \
	srun -N2 -w n1,n2 --rdzv=deepspeed deepspeed x.py
refused_leaving_nothing "srun -n4 --rdzv=torch torchrun x.py" "torchrun" -- \
	srun -n4 -w n1,n2 --rdzv=torch torchrun x.py
refused_leaving_nothing "srun -N2 --ntasks-per-node=2 --rdzv=torch python -m torch.distributed.run" "torch.distributed.run" -- \
	srun -N2 -w n1,n2 --ntasks-per-node=2 --rdzv=torch $PY -m torch.distributed.run x.py
refused_leaving_nothing "srun -N2 -n4 --rdzv=torchrun" "one launcher per node" -- \
	srun -N2 -n4 -w n1,n2 --rdzv=torchrun true
refused_leaving_nothing "RDZV_MODE=deepspeed srun -N2 deepspeed x.py" "deepspeed" -- \
	env RDZV_MODE=deepspeed srun -N2 -w n1,n2 deepspeed x.py
# One task on one node still runs it (nothing to refuse), and a step whose
# size only the allocation tells is still refused, after it.
run_to 60 srun -N1 -n1 --rdzv=deepspeed true
is "$rc" 0 "one task: --rdzv=deepspeed runs the step"
run_to 60 salloc -N2 srun --rdzv=deepspeed deepspeed x.py
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "inside salloc -N2 (no -n/-N on srun): still refused, after the allocation (exit $rc)"
like "$out" "deepspeed" "... naming the launcher"
# A refusal only the step's real size decides (local_user_init: srun -n3
# gets one node of 8 CPUs, three torchrun launchers would share it) comes
# after srun made its allocation: the plugin completes that job, so the next
# srun that needs every node starts at once (--immediate: it fails unless
# the nodes are free within 10 s).
run_to 60 srun -n3 --rdzv=torchrun true
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "srun -n3 --rdzv=torchrun (one node): refused after the allocation (exit $rc)"
like "$out" "one launcher per node, but this step has 3 tasks on 1 nodes" "... naming why"
t0=$(date +%s%N)
run_to 60 srun -N3 --immediate=10 true
took=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$rc" 0 "... and the next srun -N3 --immediate=10 gets every node at once (${took} ms): the refused step's job was released"
[ "$rc" = 0 ] || diag "$out"
# Inside an allocation the user made, a refusal leaves the allocation alone.
run_to 90 salloc -N1 bash -c 'srun -n3 --rdzv=torchrun true; echo "REFUSED=$?"; srun -n1 true; echo "NEXT=$?"'
like "$out" "REFUSED=[1-9]" "inside salloc -N1: srun -n3 --rdzv=torchrun is refused"
like "$out" "NEXT=0" "... and the salloc's next step still runs in its allocation"
done_testing
