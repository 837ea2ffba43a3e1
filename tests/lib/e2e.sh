# e2e.sh: source from an end-to-end test (after tap.sh). Starts the local
# Slurm cluster for this test and stops it on exit; skips (never passes) when
# the prerequisites are missing. Tests that use the cluster are serialised
# through a lock, so `make -j check` cannot run two clusters at once.
#
#   e2e_start [VAR=value ...]   start with cluster.sh variables (RDZV_NODE_GPUS, RDZV_PLUGSTACK_ARGS, ...)
#   e2e_plugstack ARGS...       rewrite plugstack.conf (read by every new step)
#   run_to SECS CMD...          run CMD with a timeout; output in $out, status in $rc
#   PY                          the interpreter with torch (/usr/bin/python3)

: "${top_srcdir:?}" "${top_builddir:?}"
PY=/usr/bin/python3
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
export RDZV_CLUSTER_DIR=${RDZV_CLUSTER_DIR:-/tmp/rdzv-cluster}
cluster="$top_srcdir/tests/cluster/cluster.sh"

e2e_require() {
	[ "${RDZV_SKIP_E2E:-}" = 1 ] && skip_all "RDZV_SKIP_E2E=1 (make distcheck: the main build runs them)"
	[ "$(id -u)" = 0 ] || skip_all "needs root (slurmd, mknod)"
	# Under CI=true a tool that tests/install-deps.sh installs is a failure when missing.
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v srun >/dev/null \
		|| skip_all_missing "slurmctld slurmd slurm-client" "Slurm (slurmctld, slurmd, srun) not installed"
	[ "${RDZV_SANITIZE:-no}" = yes ] && skip_all "sanitizer build: slurmstepd cannot load an ASan plugin"
	[ -f "$top_builddir/spank/.libs/rdzv.so" ] || skip_all "rdzv.so not built"
	for need in "$@"; do
		case $need in
		torch) $PY -c 'import torch.distributed' 2>/dev/null || skip_all_missing python3-torch "python3-torch not installed" ;;
		esac
	done
}

e2e_stop() {
	env "${e2e_vars[@]}" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" stop >/dev/null 2>&1
}

e2e_start() {
	e2e_vars=("$@")
	exec 9>/tmp/rdzv-cluster.lock
	flock -w 900 9 || { echo "Bail out! cluster lock not obtained in 900 s"; exit 1; }
	trap 'e2e_stop' EXIT
	if ! env "$@" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" start >"$RDZV_CLUSTER_DIR.start.log" 2>&1; then
		echo "Bail out! cluster did not start: $(tail -n 5 "$RDZV_CLUSTER_DIR.start.log" | tr '\n' ' ')"
		exit 1
	fi
	. "$RDZV_CLUSTER_DIR/env.sh"
}

e2e_plugstack() {
	env "${e2e_vars[@]}" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" plugstack "$@"
}

run_to() {
	local secs=$1
	shift
	out=$(timeout -k 5 "$secs" "$@" 2>&1)
	rc=$?
	[ "$rc" = 124 ] && diag "timed out after ${secs}s: $*"
	return 0
}
