#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --rdzv=jax computes JAX_LOCAL_DEVICE_IDS from the task's FINAL
# CUDA_VISIBLE_DEVICES, after --rdzv-bind=isolate narrowed it to the task's
# one GPU: every id must be a position in the list the task sees. Node n2
# loads a real 4-GPU topology (JUWELS Booster jwb0004) so binding runs.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$fixtures" ] || { echo "Bail out! no topology fixtures at $fixtures: they belong to the repository (tests/topo/fixtures)"; exit 1; }
topo=$(mktemp -d /tmp/rdzv-topo.XXXXXX)
ln -s "$fixtures/psmgmt__tests__hwloc__topo.jwb0004.xml" "$topo/n2.xml"
e2e_start RDZV_NODE_GPUS="4 4 4" RDZV_PLUGSTACK_ARGS="topology=$topo/%n.xml"
cd "$topo" || exit 1
report='echo "JAXIDS $SLURM_LOCALID cvd=${CUDA_VISIBLE_DEVICES-} ids=${JAX_LOCAL_DEVICE_IDS-}"'

# Each id must name a position of the task's own CUDA_VISIBLE_DEVICES; the
# expected ids are derived here from what each task saw, not from the plugin.
check_ids() { # check_ids MODE: prints "bad" lines, or nothing
	printf '%s\n' "$out" | grep '^JAXIDS ' | while read -r _ lid cvd ids; do
		cvd=${cvd#cvd=}; ids=${ids#ids=}
		n=$(awk -F, '{ print NF }' <<< "$cvd")
		case $1 in
		isolate) want=0 ;;                    # one GPU seen: position 0
		shared) want=$(( lid * n / 4 )) ;;    # 4 tasks share n=4 GPUs: blocks of one
		esac
		[ "$n" -ge 1 ] && [ "$ids" = "$want" ] || echo "bad: task $lid sees '$cvd', ids '$ids' (want $want)"
	done
}

run_to 60 srun -N1 -w n2 -n4 --gres=gpu:4 --rdzv=jax --rdzv-bind=isolate bash -c "$report"
is "$rc" 0 "jax + isolate on 4 GPUs: srun exits 0"
is "$(printf '%s\n' "$out" | grep -c '^JAXIDS [0-3] cvd=[0-9]* ids=')" 4 "isolate: each of the 4 tasks sees one GPU"
bad=$(check_ids isolate)
is "$bad" "" "isolate: JAX_LOCAL_DEVICE_IDS=0, the one GPU each task sees (not its local rank)"
[ "$rc" = 0 ] || diag "$out"

run_to 60 srun -N1 -w n2 -n4 --gres=gpu:4 --rdzv=jax --rdzv-bind=cpu bash -c "$report"
is "$rc" 0 "jax without GPU narrowing: srun exits 0"
bad=$(check_ids shared)
is "$bad" "" "4 tasks sharing 4 visible GPUs: each takes the block of its local rank"
rm -rf "$topo"
done_testing
