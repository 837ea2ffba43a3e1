#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A rolling upgrade: srun on a login node and slurmstepd on the compute
# nodes run different builds of the plugin. srun marks each step with its
# version and hand-over format (SLURM_RDZV_SRUN="VERSION format=N"); every
# node compares it with its own. A format the node reads runs with the right
# ranks; one it cannot read is refused by the node, naming both versions,
# before any task runs. Two builds in one cluster: srun loads one (its own
# slurm.conf copy names its own plugstack.conf), the nodes the other.
#   - the previous release (RDZV_PREVIOUS_RELEASE, default a35d098, the
#     last landed commit before the format was named; built from git, so
#     on the host leg of a git checkout) as srun against nodes of this
#     build, and the reverse: both run, ranks right;
#   - a later release that writes a format this build cannot read (this
#     tree built with RDZV_HANDOVER_FORMAT=99) as srun: refused by the
#     nodes with both versions named; its nodes under this srun run.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/releases.sh"
e2e_require
work=$(mktemp -d /tmp/rdzv-0118.XXXXXX) || exit 1
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
new=$top_builddir/spank/.libs/rdzv.so

build "$work/future" "$top_srcdir" "-DRDZV_HANDOVER_FORMAT=99"
ok "$?" "a later release's stand-in builds: this tree with hand-over format 99"
future=$work/future/spank/.libs/rdzv.so
old= why=
rev=${RDZV_PREVIOUS_RELEASE:-a35d098}
if build_release "$rev" "$work/old"; then
	ok 0 "the previous release ($rev) builds"
	old=$work/old/spank/.libs/rdzv.so
elif [ -z "$why" ]; then
	ok 1 "the previous release ($rev) builds"
fi

e2e_start
trap 'e2e_stop; rm -rf "$work"' EXIT
cd "$work" || exit 1
# srun's own plugstack: a copy of the cluster's slurm.conf naming it.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$work/srun-plugstack.conf|" "$SLURM_CONF" >"$work/srun-slurm.conf"
srun_with() { echo "required $1" >"$work/srun-plugstack.conf"; }
nodes_with() { sed -i "s|^required [^ ]*|required $1|" "$RDZV_CLUSTER_DIR/plugstack.conf"; }
step() { run_to 90 env SLURM_CONF="$work/srun-slurm.conf" srun -N2 --ntasks-per-node=2 --rdzv=torch "$@"; }
ranks='echo "R $SLURMD_NODENAME $SLURM_PROCID ${RANK-unset} ${LOCAL_RANK-unset} ${WORLD_SIZE-unset} ${MASTER_ADDR-unset}"'
# right_ranks: every task's RANK is its SLURM_PROCID, LOCAL_RANK its place
# on its node, WORLD_SIZE 4, one MASTER_ADDR.
right_ranks() {
	printf '%s\n' "$out" | awk '$1 == "R" { n++; if ($3 != $4 || $6 != 4) bad++; m[$7] = 1
			if (!((($2 " " $5)) in l)) { l[$2 " " $5] = 1; nl++ } }
		END { k = 0; for (x in m) k++; print (n == 4 && !bad && k == 1 && nl == 4) ? "right" : "wrong" }'
}

srun_with "$new"
step sh -c "$ranks"
is "$rc" 0 "this build as srun and nodes: the step runs"
is "$(right_ranks)" right "... with the right ranks"

srun_with "$future"
step sh -c "$ranks"
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "a later release's srun (format 99) against this build's nodes: refused (exit $rc)"
like "$out" "srun's spank-rdzv [0-9.]+ hands the step over in format 99, which this node's spank-rdzv [0-9.]+ \\(formats 1 to [0-9]+\\) cannot read: the step is refused rather than run with ranks read wrong" \
	"... by the nodes, naming both versions and formats"
unlike "$out" "^R " "... before any task ran"
printf '%s\n' "$out" | grep -m1 'cannot read' | sed 's/^/# /'
srun_with "$new"
nodes_with "$future"
step sh -c "$ranks"
is "$rc" 0 "this build's srun against a later release's nodes (which read format 2): the step runs"
is "$(right_ranks)" right "... with the right ranks"
nodes_with "$new"

if [ -n "$old" ]; then
	srun_with "$old"
	step sh -c "$ranks"
	is "$rc" 0 "the previous release's srun ($rev) against this build's nodes: the step runs (format 1)"
	is "$(right_ranks)" right "... with the right ranks"
	srun_with "$new"
	nodes_with "$old"
	step sh -c "$ranks"
	is "$rc" 0 "this build's srun against the previous release's nodes: the step runs"
	is "$(right_ranks)" right "... with the right ranks"
	nodes_with "$new"
elif [ -n "$why" ]; then
	skip "$why"
fi

# optional against required: a node whose plugstack names a missing rdzv.so.
nodes_with "$work/missing/rdzv.so"
sed -i 's/^required /optional /' "$RDZV_CLUSTER_DIR/plugstack.conf"
srun_with "$new"
step sh -c "$ranks"
is "$rc" 0 "optional, the nodes lack rdzv.so: the step runs without it"
is "$(printf '%s\n' "$out" | awk '$1 == "R" && $4 == "unset"' | wc -l)" 4 "... and its tasks get no RANK (no node set one)"
sed -i 's/^optional /required /' "$RDZV_CLUSTER_DIR/plugstack.conf"
step sh -c "$ranks"
# 22.05: "Plugin initialization failed" and srun exits 0 after failed
# launches; 26.05: "Unspecified error", srun exits 1.
like "$out" "task [0-3] launch failed: (Plugin initialization failed|Unspecified error)" \
	"required, the nodes lack rdzv.so: every task's launch fails (srun exits $rc)"
unlike "$out" "^R " "... and no task ran"
if e2e_slurm_at_least 23.02; then
	ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "... and srun exits non-zero (Slurm $SLURM_VERSION; exit $rc)"
fi
nodes_with "$new"
# plugstack.conf edited under a running cluster: written new, renamed in.
printf 'required %s mode=torch\n' "$new" >"$RDZV_CLUSTER_DIR/plugstack.conf.new"
mv "$RDZV_CLUSTER_DIR/plugstack.conf.new" "$RDZV_CLUSTER_DIR/plugstack.conf"
run_to 60 srun -N2 --ntasks-per-node=2 sh -c "$ranks"
is "$rc" 0 "plugstack.conf replaced by rename under the running cluster: the next step runs"
is "$(right_ranks)" right "... with the new line's mode=torch in force, ranks right"
done_testing
