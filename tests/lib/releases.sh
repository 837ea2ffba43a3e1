# SPDX-License-Identifier: GPL-2.0-or-later
# releases.sh: source after e2e.sh (tests/0118, tests/0125): another
# release of the plugin built beside this one, for srun and nodes of two
# releases in one cluster.
#
#   build DIR SRC [CPPFLAGS]   the plugin alone (spank/rdzv.la) from SRC,
#                              configured like the main build, in DIR
#   build_release REV DIR      REV of this git checkout, built in DIR;
#                              0, or 1 where it cannot be (a version root
#                              or a release tarball has no git: the
#                              reason in $why)
jobs=$(nproc 2>/dev/null || echo 2)
build() {
	local dir=$1 src=$2 flags=${3:-}
	mkdir -p "$dir" && (cd "$dir" && "$src/configure" -q CPPFLAGS="$flags" >configure.log 2>&1 \
		&& make -j"$jobs" spank/rdzv.la >build.log 2>&1)
}
build_release() {
	local rev=$1 dir=$2
	if [ "${RDZV_IN_ROOT:-0}" = 1 ]; then
		why="the previous release is built from git on the host leg (a version root has no git)"
		return 1
	fi
	if ! command -v git >/dev/null || ! git -C "$top_srcdir" cat-file -e "$rev^{commit}" 2>/dev/null; then
		why="no git checkout with $rev here (a release tarball): the previous release cannot be built"
		return 1
	fi
	mkdir -p "$dir-src"
	git -C "$top_srcdir" archive "$rev" | tar -x -C "$dir-src"
	(cd "$dir-src" && autoreconf -fi >/dev/null 2>&1)
	build "$dir" "$dir-src"
}
