# SPDX-License-Identifier: GPL-2.0-or-later
# harness.sh: source from a shell test (after tap.sh) to drive rdzv.so
# through tests/harness/rdzv-harness, under valgrind when it is installed
# and the build is not the sanitizer one (valgrind and ASan do not mix; in
# that build the harness itself carries ASan+UBSan).
#
#   h NAME HARNESS-ARGS...   one run; asserts (one TAP line) that no process
#                            of it (parent or task) had a memory error or a
#                            definite leak. Sets $out (stdout), $err (stderr), $rc.
#   envof GTID NAME          the value task GTID exec'd with
#   statuses                 the tasks' exit statuses, sorted, unique
harness=$top_builddir/tests/harness/rdzv-harness
plugin=$top_builddir/spank/.libs/rdzv.so
[ -x "$harness" ] || skip_all "tests/harness/rdzv-harness not built"
[ -f "$plugin" ] || skip_all "spank/rdzv.so not built"
h_work=$(mktemp -d) || exit 1
trap 'rm -rf "$h_work"' EXIT

h_vg=
h_vg_elsewhere=
if [ "${RDZV_SANITIZE:-no}" = yes ]; then
	diag "sanitizer build: hooks run under ASan+UBSan instead of valgrind"
elif [ "${RDZV_IN_ROOT:-0}" = 1 ] && [ "${RDZV_VALGRIND:-0}" != 1 ]; then
	# A version root: the hooks' results are checked here, their memory
	# under valgrind on the host leg (its make check and tests/hardening.sh;
	# RDZV_VALGRIND=1 checks it here too). CI's 2 cores are shared.
	h_vg_elsewhere=1
	diag "version root: hooks run without valgrind (memory checked on the host leg)"
elif command -v valgrind >/dev/null 2>&1; then
	h_vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --child-silent-after-fork=no"
else
	diag "valgrind not installed: hooks run without it"
fi

h_runs=0
h() {
	local name=$1 log reports
	shift
	h_runs=$((h_runs + 1))
	log=$h_work/vg.$h_runs
	if [ -n "$h_vg" ]; then
		$h_vg --log-file="$log.%p" "$harness" "$@" >"$h_work/out" 2>"$h_work/err"
	else
		"$harness" "$@" >"$h_work/out" 2>"$h_work/err"
	fi
	rc=$?
	out=$(cat "$h_work/out")
	err=$(cat "$h_work/err")
	if [ -n "$h_vg" ]; then
		reports=$(cat "$log".* 2>/dev/null)
		ok "$([ -z "$reports" ] && [ "$rc" != 99 ] && ! grep -q 'status=99' "$h_work/out" && echo 0 || echo 1)" \
			"$name: no memory error or leak under valgrind (parent and every task)"
		[ -z "$reports" ] || printf '%s\n' "$reports" | head -40 | sed 's/^/# /'
	elif [ "${RDZV_SANITIZE:-no}" = yes ]; then
		unlike "$err" "ERROR: AddressSanitizer|runtime error:" "$name: no ASan/UBSan report"
	elif [ -n "$h_vg_elsewhere" ]; then
		if [ "$rc" -gt 1 ]; then
			ok 1 "$name: the harness ran (no crash; exit $rc)"
		else
			skip "$name: memory checked under valgrind on the host leg, not in this version root"
		fi
	else
		# Without valgrind the memory check is not done: a skip, not a pass
		# (a crash still fails), and a failure under CI.
		if [ "$rc" -gt 1 ]; then
			ok 1 "$name: the harness ran (no crash; exit $rc)"
		else
			skip_missing valgrind "$name: memory check not done, valgrind not installed"
		fi
	fi
}
envof() { printf '%s\n' "$out" | sed -n "s/^env $1 $2=//p"; }
statuses() { printf '%s\n' "$out" | sed -n 's/^task .* status=\([0-9]*\)$/\1/p' | sort -u | tr '\n' ' '; }
