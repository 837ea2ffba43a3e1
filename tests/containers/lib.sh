# lib.sh: source from a container test (tests/01NN-*.t) after tests/lib/tap.sh.
#
#   ctr_enter            on the host: make (or find cached) the containers root,
#                        the image and rdzv.so built for the root's Slurm 24.11,
#                        then run this same test inside the root (in-root.sh);
#                        inside the root it returns and the test goes on.
#   ctr_start            e2e_start of a 3-node Slurm 24.11 cluster of its own
#                        (state directory, ports), enroot configured per node
#   ctr_plugstack ORDER [RDZV_ARGS...]
#                        ORDER pyxis-first (rdzv.so after spank_pyxis.so) or
#                        rdzv-first; rewrites plugstack.conf (read by every step)
#   ctr_hook on|off      enroot's 50-slurm-pytorch.sh hook installed or not
#   ctr_srun SECS ARGS... srun ARGS with the image and the tests mounted in
#                        the container; output in $out, status in $rc
#   ctr_rank0 FIELD...   from $out, rank 0's report: "NAME=value ..." of FIELDs
#   IMAGE PYXIS RANK_PY  the image, pyxis's plugin, the rank script
#
# The containers root (tests/containers/make-root.sh) holds enroot 4.1.2 and
# pyxis 0.24.0 built from ../shared/containers; it is entered with pivot_root
# because the kernel refuses user namespaces inside a chroot. The container
# tests skip, with the reason, where that cannot be done.

ctr_dir=$top_srcdir/tests/containers

ctr_enter() {
	local root image bdir lock rc
	[ -n "${RDZV_CTR_INSIDE:-}" ] && return 0
	[ "${RDZV_SKIP_E2E:-}" = 1 ] && skip_all "RDZV_SKIP_E2E=1 (make distcheck: the main build runs them)"
	[ "$(id -u)" = 0 ] || skip_all "needs root (pivot_root, slurmd)"
	[ "${RDZV_SANITIZE:-no}" = yes ] && skip_all "sanitizer build: slurmstepd cannot load an ASan plugin"
	[ -f "$top_srcdir/../shared/containers/enroot-4.1.2.tar.gz" ] \
		|| skip_all "../shared/containers (enroot, pyxis sources) not found"
	case $top_builddir/ in
	"$top_srcdir"/*) ;;
	*) skip_all "build tree $top_builddir is outside the checkout (only the checkout is mounted in the root)" ;;
	esac
	command -v unshare >/dev/null && command -v debootstrap >/dev/null \
		|| { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1 || :; }
	root=$(bash "$ctr_dir/make-root.sh" 2>"$top_builddir/containers-root.err") \
		|| skip_all "containers root not built: $(tail -n 3 "$top_builddir/containers-root.err" | tr '\n' ' ')"
	image=$(bash "$ctr_dir/make-image.sh" 2>"$top_builddir/containers-image.err") \
		|| skip_all "container image not built: $(tail -n 3 "$top_builddir/containers-image.err" | tr '\n' ' ')"
	# The image inside the root (only the checkout and ../shared are mounted).
	if [ ! -f "$root/srv/rdzv-images/$(basename "$image")" ]; then
		mkdir -p "$root/srv/rdzv-images"
		rm -f "$root"/srv/rdzv-images/*.sqsh
		cp "$image" "$root/srv/rdzv-images/" || skip_all "cannot copy the image into the root"
	fi
	image=/srv/rdzv-images/$(basename "$image")
	# rdzv.so for the root's Slurm 24.11 (a SPANK plugin loads only into the
	# major it was built for), built inside the root, once per tree change.
	bdir=$top_builddir/containers-24.11
	mkdir -p "$bdir"
	lock=$bdir.lock
	(
		flock 7
		RDZV_PASS_ENV="bdir top_srcdir" bdir=$bdir top_srcdir=$top_srcdir \
			bash "$ctr_dir/in-root.sh" "$root" bash -c '
			set -e
			cd "$bdir"
			[ -f Makefile ] || "$top_srcdir/configure" --enable-werror >configure.log 2>&1
			make -j2 spank/rdzv.la nccl/libnccl-env-rdzv.la >make.log 2>&1' 
	) 7>"$lock" || skip_all "rdzv.so did not build inside the root: $(tail -n 5 "$bdir/make.log" "$bdir/configure.log" 2>/dev/null | tr '\n' ' ')"
	RDZV_CTR_INSIDE=1 RDZV_CTR_IMAGE=$image top_builddir=$bdir \
		RDZV_PASS_ENV="RDZV_CTR_INSIDE RDZV_CTR_IMAGE top_srcdir top_builddir E2E_TIMEOUT RDZV_CTR_KEEP" \
		exec bash "$ctr_dir/in-root.sh" "$root" bash "$0"
}

IMAGE=${RDZV_CTR_IMAGE:-}
PYXIS=/usr/local/lib/slurm/spank_pyxis.so
RANK_PY=$top_srcdir/tests/containers/rank.py
CTR_HOOK=/etc/enroot/hooks.d/50-slurm-pytorch.sh
# pyxis's runtime directory is made by its slurmd hook; the test cluster's
# slurmd started before plugstack.conf named pyxis, so the test makes it.
CTR_PYXIS_ARGS="runtime_path=/tmp/rdzv-pyxis"
# A cluster of its own: the root shares the host's network and PID
# namespaces with the host's and the other versions' test clusters.
export RDZV_CLUSTER_DIR=/tmp/rdzv-cluster-containers
export RDZV_CTLD_PORT=19817 RDZV_SLURMD_PORT_BASE=19900
# Debian 13's PyTorch has no libuv: env:// reads USE_LIBUV (srun passes it).
export USE_LIBUV=0

ctr_start() {
	[ -x /usr/local/bin/enroot ] && [ -f "$PYXIS" ] || skip_all "enroot or pyxis not installed in this root"
	[ -f "$IMAGE" ] || skip_all "no container image"
	install -D -m 644 "$ctr_dir/enroot.conf" /etc/enroot/enroot.conf.d/50-rdzv-tests.conf
	rm -f "$CTR_HOOK"
	rm -rf /tmp/rdzv-enroot /tmp/rdzv-pyxis
	mkdir -p /tmp/rdzv-pyxis
	# Slurm 24.11 initialises cgroups unless told not to (../shared/slurm/README.md).
	mkdir -p "$RDZV_CLUSTER_DIR"
	echo "CgroupPlugin=disabled" > "$RDZV_CLUSTER_DIR/cgroup.conf"
	e2e_start "$@"
	trap 'rm -f "$CTR_HOOK"; e2e_stop' EXIT
}

ctr_plugstack() {
	local order=$1 plugin=$top_builddir/spank/.libs/rdzv.so
	shift
	case $order in
	pyxis-first) printf 'required %s %s\nrequired %s %s\n' "$PYXIS" "$CTR_PYXIS_ARGS" "$plugin" "$*" ;;
	rdzv-first) printf 'required %s %s\nrequired %s %s\n' "$plugin" "$*" "$PYXIS" "$CTR_PYXIS_ARGS" ;;
	*) echo "Bail out! ctr_plugstack: order $order"; exit 1 ;;
	esac > "$RDZV_CLUSTER_DIR/plugstack.conf"
}

ctr_hook() {
	if [ "$1" = on ]; then
		install -m 755 /usr/local/share/enroot/hooks.d/50-slurm-pytorch.sh "$CTR_HOOK"
	else
		rm -f "$CTR_HOOK"
	fi
}

ctr_srun() {
	local secs=$1
	shift
	run_to "$secs" srun --container-image="$IMAGE" \
		--container-mounts="$top_srcdir/tests:$top_srcdir/tests:ro" "$@"
}

# ctr_rank0 FIELD... -> "FIELD=value ..." of the report whose RANK is 0
ctr_rank0() {
	printf '%s\n' "$out" | /usr/bin/python3 -c '
import json, sys
keys = sys.argv[1:]
for line in sys.stdin:
    i = line.find("RDZV_REPORT ")
    if i < 0:
        continue
    r = json.loads(line[i + 12:])
    if r["env"].get("RANK") == "0" or r.get("rank") == 0:
        print(" ".join("%s=%s" % (k, r["env"].get(k, r.get(k))) for k in keys))
        break
' "$@"
}
