#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo-job.sh: the README's first command. On a fresh Debian 12 machine, as
# root: installs what is missing, builds rdzv.so, starts a throwaway 3-node
# Slurm cluster on this machine (tests/cluster/cluster.sh), runs ONE srun that
# starts 6 real PyTorch ranks on 3 nodes through the plugin, shows what each
# node set and what each rank saw, and stops the cluster again.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
bash tests/install-deps.sh || exit 1
build=${RDZV_BUILD_DIR:-$top/_build-demo}
if [ ! -f "$build/spank/.libs/rdzv.so" ]; then
	echo "== building rdzv.so in $build"
	autoreconf -fi >/dev/null 2>&1 || exit 1
	mkdir -p "$build" && (cd "$build" && "$top/configure" -q && make -j"$(nproc)" >build.log 2>&1) \
		|| { tail -n 30 "$build/build.log"; exit 1; }
fi
export RDZV_CLUSTER_DIR=${RDZV_CLUSTER_DIR:-/tmp/rdzv-demo}
export top_srcdir=$top top_builddir=$build
cluster=$top/tests/cluster/cluster.sh
trap 'bash "$cluster" stop >/dev/null 2>&1' EXIT
echo "== starting a 3-node Slurm cluster (n1 n2 n3, 4 fake GPUs each)"
exec 9>/tmp/rdzv-cluster.lock && flock -w 600 9
bash "$cluster" start || exit 1
. "$RDZV_CLUSTER_DIR/env.sh"
sinfo -N -o '%N %P %t %G' | sed 's/^/   /'
echo
cmd="srun -N3 --ntasks-per-node=2 --gpus-per-node=2 --rdzv=torch --rdzv-verbose /usr/bin/python3 tests/e2e/demo_rank.py"
echo "== $cmd"
out=$(timeout 120 $cmd 2>&1)
rc=$?
printf '%s\n' "$out" | grep '^rdzv:' | sort -s -t' ' -k2,2 | sed 's/^/   /'
echo
printf '%s\n' "$out" | grep '^rank ' | sort -n -k2 | sed 's/^/   /'
printf '%s\n' "$out" | grep -v -E '^(rdzv:|rank )' | sed 's/^/   /'
echo
ranks=$(printf '%s\n' "$out" | grep -c '^rank .* OK$')
if [ "$rc" = 0 ] && [ "$ranks" = 6 ]; then
	echo "== OK: 6 ranks on 3 nodes met through one srun and all-reduced correctly"
else
	echo "== FAILED: srun exit $rc, $ranks of 6 ranks OK"
	rc=1
fi
exit $rc
