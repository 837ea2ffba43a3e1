# SPDX-License-Identifier: GPL-2.0-or-later
# tap.sh: TAP for shell tests. Source it; then use ok/is/like/skip_all/done_testing.
#
# A skip is a skip, never a pass: skip_all (plan 0, one SKIP) and skip (one
# "ok N # SKIP reason" line) always give their reason. Under CI (CI=true) a
# prerequisite that tests/install-deps.sh installs must be there, so
# skip_all_missing and skip_missing turn into failures naming the package.
tap_n=0
tap_failed=0
ok() { # ok STATUS NAME
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}
is() { # is GOT WANT NAME
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; printf '#   got:  %s\n#   want: %s\n' "$1" "$2"; fi
}
like() { # like TEXT REGEX NAME
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else ok 1 "$3"; printf '#   text: %s\n#   no match for: %s\n' "$(printf '%s' "$1" | head -c 600)" "$2"; fi
}
unlike() { # unlike TEXT REGEX NAME
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 1 "$3"; printf '#   unexpected match for: %s\n' "$2"; else ok 0 "$3"; fi
}
diag() { printf '# %s\n' "$*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
skip() { # skip REASON: one test skipped
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP $*"
}
tap_ci() { [ "${CI:-}" = true ]; }
# host_leg_only WHY: a test whose result does not depend on the leg's Slurm or
# PyTorch runs on the host leg only; in a version root (RDZV_IN_ROOT=1) it
# skips, saying so (CI's 90 minutes on 2 cores are shared by three legs).
host_leg_only() {
	[ "${RDZV_IN_ROOT:-0}" = 1 ] && skip_all "runs on the host leg only: $*"
	return 0
}
# main_build_only WHY: the same for the host's second and third runs of make
# check, distcheck's (RDZV_SKIP_E2E=1) and the sanitizer build's
# (RDZV_SANITIZE=yes), where the test would only repeat the main build's.
main_build_only() {
	host_leg_only "$@"
	[ "${RDZV_SKIP_E2E:-}" = 1 ] && skip_all "runs in the main build's make check only (this is make distcheck's): $*"
	[ "${RDZV_SANITIZE:-no}" = yes ] && skip_all "runs in the main build's make check only (this is the sanitizer build's): $*"
	return 0
}
skip_all_missing() { # skip_all_missing PACKAGE REASON: skip the file, or fail it under CI
	if tap_ci; then
		echo "1..1"
		echo "not ok 1 - CI=true: $2 (tests/install-deps.sh installs $1)"
		exit 1
	fi
	skip_all "$2"
}
skip_missing() { # skip_missing PACKAGE REASON: skip one test, or fail it under CI
	if tap_ci; then
		ok 1 "CI=true: $2 (tests/install-deps.sh installs $1)"
	else
		skip "$2"
	fi
}
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
