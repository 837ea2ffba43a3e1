# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh: source from a container test (tests/01NN-*.t) after tests/lib/tap.sh
# and tests/lib/e2e.sh.
#
#   ctr_require          skip unless Apptainer runs here (the sid leg: Debian
#                        packages Apptainer in sid only)
#   ctr_image            build the test image (tests/containers/image.def) or
#                        find it cached; sets IMAGE (a sandbox directory)
#   ctr_exec [OPTS...]   the apptainer command line a step runs: `apptainer
#                        exec --no-privs -B tests/containers OPTS IMAGE`
#   ctr_reports FIELD... from $out, one sorted line per task: "FIELD=value ..."
#   ctr_reports_of TEXT FIELD...  the same from TEXT
#   ctr_count            from $out, the number of reports
#   RANK_PY              the rank script (tests/containers/rank.py)
#
# Facts behind this (measured on the Debian test roots): Apptainer refuses a
# chroot, so the sid root is entered with pivot_root (tests/versions/in-root.sh);
# root here lacks CAP_SYS_RESOURCE, so `apptainer exec` needs --no-privs.
# pyxis and enroot are not packaged by Debian: the plugin's pyxis rule
# (lib/modes/container.h) is unit-tested only (tests/unit/test-container).

ctr_dir=$top_srcdir/tests/containers
RANK_PY=$ctr_dir/rank.py
# Inside the root's own file system (hard links to its /usr need that); it
# goes with the root when the root is made anew.
ctr_cache=/var/cache/rdzv-apptainer

ctr_require() {
	[ "${RDZV_SKIP_E2E:-}" = 1 ] && skip_all "RDZV_SKIP_E2E=1 (make distcheck: the main build runs them)"
	command -v apptainer >/dev/null \
		|| skip_all "Apptainer is not installed in this leg (Slurm ${SLURM_VERSION:-?}, RDZV_SLURM=${RDZV_SLURM:-host}): Debian packages it in sid only, so this test runs on the sid leg (bash tests/versions/run-leg.sh 26.05 tests/$(basename "$0"))"
	[ "$(id -u)" = 0 ] || skip_all "needs root (slurmd, the image's hard links)"
}

ctr_image() {
	local key tmp log
	key=$(sha256sum < "$ctr_dir/image.def" | cut -c1-16)
	IMAGE=$ctr_cache/image-$key
	mkdir -p "$ctr_cache" || skip_all "cannot create $ctr_cache"
	(
		flock 7
		[ -f "$IMAGE/rdzv-image" ] && exit 0
		rm -rf "$ctr_cache"/image-* "$ctr_cache/skeleton" "$ctr_cache"/build-temp-*
		mkdir -p "$ctr_cache/skeleton" && cd "$ctr_cache/skeleton" \
			&& mkdir -p etc tmp proc sys dev home root run var/tmp opt || exit 1
		log=$ctr_cache/build.log
		APPTAINER_TMPDIR=$ctr_cache apptainer build --sandbox "$IMAGE" "$ctr_dir/image.def" >"$log" 2>&1 \
			&& [ -f "$IMAGE/rdzv-image" ]
	) 7>"$ctr_cache.lock" \
		|| skip_all "the test image did not build: $(tail -n 3 "$ctr_cache/build.log" 2>/dev/null | tr '\n' ' ')"
	# Does it run here at all (user namespaces, mounts)? Say why not.
	tmp=$(apptainer exec --no-privs "$IMAGE" /bin/sh -c 'echo "$RDZV_IMAGE_VAR"' 2>&1) \
		&& [ "$tmp" = from-the-image ] \
		|| skip_all "apptainer exec does not run here: $(printf '%s' "$tmp" | tail -n 2 | tr '\n' ' ')"
}

ctr_exec() {
	echo "apptainer exec --no-privs -B $ctr_dir $* $IMAGE"
}

ctr_reports() { ctr_reports_of "$out" "$@"; }
ctr_reports_of() { # ctr_reports_of TEXT FIELD...
	local text=$1
	shift
	printf '%s\n' "$text" | /usr/bin/python3 -c '
import json, sys
keys = sys.argv[1:]
rows = []
for line in sys.stdin:
    i = line.find("RDZV_REPORT ")
    if i >= 0:
        r = json.loads(line[i + 12:])
        rows.append(" ".join("%s=%s" % (k, r["env"].get(k, r.get(k))) for k in keys))
print("\n".join(sorted(rows)))' "$@"
}

ctr_count() {
	printf '%s\n' "$out" | grep -c 'RDZV_REPORT '
}
