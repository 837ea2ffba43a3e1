# SPDX-License-Identifier: GPL-2.0-or-later
# e2e.sh: source from an end-to-end test (after tap.sh). Starts the local
# Slurm cluster for this test and stops it on exit; skips (never passes) when
# the prerequisites are missing. Tests that use the cluster are serialised
# through a lock, so `make -j check` cannot run two clusters at once.
#
#   e2e_start [VAR=value ...]   start with cluster.sh variables (RDZV_NODE_GPUS, RDZV_PLUGSTACK_ARGS, ...)
#   e2e_plugstack ARGS...       rewrite plugstack.conf (read by every new step)
#   run_to SECS CMD...          run CMD with a timeout (SECS x E2E_TIMEOUT_SCALE); output in $out, status in $rc
#   e2e_slurm_at_least X.Y      is the cluster's Slurm release X.Y or newer?
#   PY                          the interpreter with torch (/usr/bin/python3)
#   TORCHRUN                    the torchrun command line (a shim, see below)
#   SLURM_VERSION               the cluster's Slurm release (e.g. 24.11.5)
#   TORCH_VERSION               PyTorch's release (e.g. 2.6.0+debian)
# and what tests read from a step (within, run_step, field, report_field,
# megatron_refused, megatron_runs, ...): tests/lib/steps.sh, sourced here.
#
# The cluster's Slurm is chosen by RDZV_SLURM (tests/versions/run-leg.sh sets it):
#   host    (default) the host's Slurm (Debian 12: 22.05) and PyTorch 1.13
#   24.11   inside the Debian 13 root (tests/versions/in-root.sh): its Slurm
#           24.11 and PyTorch 2.6; $top_builddir was configured there
#   26.05   inside the Debian sid root (the same way): its Slurm 26.05,
#           PyTorch 2.14 and Apptainer
# Each has its own state directory, ports, first job id and lock, so the three
# clusters (and helpers using them) run at once without meeting.

: "${top_srcdir:?}" "${top_builddir:?}"
PY=/usr/bin/python3
E2E_TIMEOUT=${E2E_TIMEOUT:-60}
RDZV_SLURM=${RDZV_SLURM:-host}
case $RDZV_SLURM in
host)
	e2e_default_dir=/tmp/rdzv-cluster e2e_ports="16817 16900" e2e_first_job=1 E2E_RESV_PORTS=21000-21999 E2E_USER_PORT=29999 ;;
24.11)
	e2e_default_dir=/tmp/rdzv-cluster-24.11 e2e_ports="17817 17900" e2e_first_job=100000 E2E_RESV_PORTS=22000-22999 E2E_USER_PORT=30999 ;;
26.05)
	e2e_default_dir=/tmp/rdzv-cluster-26.05 e2e_ports="18817 18900" e2e_first_job=200000 E2E_RESV_PORTS=23000-23999 E2E_USER_PORT=31999 ;;
*)
	echo "Bail out! RDZV_SLURM=$RDZV_SLURM: expected host, 24.11 or 26.05"; exit 1 ;;
esac
export RDZV_SLURM PATH
export RDZV_CLUSTER_DIR=${RDZV_CLUSTER_DIR:-$e2e_default_dir}
export RDZV_CTLD_PORT=${RDZV_CTLD_PORT:-${e2e_ports% *}}
export RDZV_SLURMD_PORT_BASE=${RDZV_SLURMD_PORT_BASE:-${e2e_ports#* }}
export RDZV_FIRST_JOB_ID=${RDZV_FIRST_JOB_ID:-$e2e_first_job}
E2E_LOCK=${RDZV_E2E_LOCK:-$e2e_default_dir.lock} # RDZV_E2E_LOCK: a developer's own cluster beside a running suite
# MpiParams=ports ranges for tests that reserve ports, and the port a test
# exports as a user's MASTER_PORT: one per version, since the legs' clusters
# run at once in this machine's one network namespace. The ranges sit below
# both Linux's ephemeral range (32768-60999), where any client socket of a busy
# machine may already hold a port and make rank 0's bind fail (seen in CI with
# 41000-41999), and the plugin's derived range (29500-32767), as a site's would.
E2E_RESV_LO=${E2E_RESV_PORTS%-*} E2E_RESV_HI=${E2E_RESV_PORTS#*-}
SLURM_VERSION=$(slurmd -V 2>/dev/null | awk '{print $2}')
# Debian 12's torchrun (PyTorch 1.13) dies on Python 3.11: torchrun-shim.py
# mends it. PyTorch 2.x runs its own torchrun, through torchrun-nolibuv.py only
# to default use_libuv=False (see there); Debian 13's build has no libuv, and
# env:// rendezvous reads USE_LIBUV=0 (srun passes it to the tasks).
TORCH_VERSION=$($PY -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null)
if [ "${TORCH_VERSION%%.*}" -ge 2 ] 2>/dev/null; then
	TORCHRUN="$PY $top_srcdir/tests/e2e/torchrun-nolibuv.py"
	export USE_LIBUV=0
else
	TORCHRUN="$PY $top_srcdir/tests/e2e/torchrun-shim.py"
fi
cluster="$top_srcdir/tests/cluster/cluster.sh"

e2e_slurm_at_least() {
	[ -n "$SLURM_VERSION" ] && [ "$(printf '%s\n%s\n' "$1" "$SLURM_VERSION" | sort -V | head -n 1)" = "$1" ]
}

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

# The measured layouts of doc/modes.md, 4 nodes: a tree whose first leaf
# switch holds n3-n4 (26.05 puts task 0 on n3), and blocks pairing n1 with n3
# (26.05 lays ranks n1 n3 n2 n4).
E2E_TREE_3412='SwitchName=s1 Nodes=n[3-4]
SwitchName=s2 Nodes=n[1-2]
SwitchName=top Switches=s[1-2]'
E2E_BLOCK_1324='BlockName=b1 Nodes=n[1,3]
BlockName=b2 Nodes=n[2,4]
BlockSizes=2,4'

e2e_stop() {
	env "${e2e_vars[@]}" top_srcdir="$top_srcdir" top_builddir="$top_builddir" bash "$cluster" stop >/dev/null 2>&1
}

e2e_start() {
	e2e_vars=("$@")
	diag "cluster: Slurm $SLURM_VERSION ($RDZV_SLURM), PyTorch $TORCH_VERSION, $RDZV_CLUSTER_DIR, ports $RDZV_CTLD_PORT/$RDZV_SLURMD_PORT_BASE"
	exec 9>"$E2E_LOCK"
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

# run_to's limit only stops a hung command (no test expects it to be
# reached: they check rc != 124), so it is scaled up for a loaded machine:
# E2E_TIMEOUT_SCALE (default 2; 0020's 7 PyTorch ranks took over 60 s to
# start and exit on 2 cores beside two other legs' clusters).
run_to() {
	local secs=$(( $1 * ${E2E_TIMEOUT_SCALE:-2} ))
	shift
	out=$(timeout -k 5 "$secs" "$@" 2>&1)
	rc=$?
	# srun's notes when the previous step's job still holds the nodes (a
	# loaded machine: CI met them in 0021 and 0093) are not the step's output.
	case $out in
	*"srun: job "*) out=$(printf '%s\n' "$out" | grep -Ev '^srun: job [0-9]+ (queued and waiting for resources|has been allocated resources)$') ;;
	esac
	[ "$rc" = 124 ] && diag "timed out after ${secs}s: $*"
	return 0
}

. "$top_srcdir/tests/lib/steps.sh"
