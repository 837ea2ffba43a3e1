#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# static-analysis.sh: cppcheck over the code that ships (lib/, spank/,
# helpers/), clean except for the suppressions in tests/cppcheck.supp, each
# justified there. Prints TAP (one test); exits non-zero on a finding.
#
#   tests/static-analysis.sh            (uses $top_builddir/config.h when set)
#
# Also checks the privilege rules of doc/privilege.md that a compiler cannot:
# the plugin never changes its credentials (no setuid/seteuid/setgid/
# setgroups calls in spank/ or lib/), never runs a program (no
# system/popen/exec*) but its named exceptions (test 2); and (test 3, the
# threat model's rules 6 and 7) never signals a bare pid: every kill( is
# of a child the same code forked and has not reaped, or the torchrun
# watcher's one fallback marked "rdzv: proven pid"; no root path reads a
# job identity (job, step, het ids, node names) from the job's environment,
# and slurmd's own SLURMD_NODENAME is read only where marked.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-}
echo "1..3"

if ! command -v cppcheck >/dev/null 2>&1; then
	# A skip, never a pass; under CI (CI=true) tests/install-deps.sh should
	# have installed it, so a failure.
	if [ "${CI:-}" = true ]; then
		echo "not ok 1 - CI=true: cppcheck not installed (tests/install-deps.sh installs cppcheck)"
		rc=1
	else
		echo "ok 1 # SKIP cppcheck not installed"
	fi
else
	inc=
	[ -n "$builddir" ] && [ -f "$builddir/config.h" ] && inc="-I$builddir"
	# System headers are not parsed (see cppcheck.supp), so the version
	# macros that select code paths are given here, as the build sees them.
	hv=$(pkg-config --modversion hwloc 2>/dev/null || echo 2.0.0)
	inc="$inc -DHWLOC_API_VERSION=$(printf '0x%04x%02x%02x' $(echo "$hv" | tr '.' ' ') 2>/dev/null || echo 0x00020000)"
	libincs=; for d in "$srcdir"/lib/*/; do libincs="$libincs -I${d%/}"; done
	out=$(cd "$srcdir" && cppcheck --enable=warning,style,performance,portability \
		--std=c11 --inline-suppr --quiet --error-exitcode=1 \
		--suppressions-list=tests/cppcheck.supp \
		-D__GNUC__ $libincs -Ihelpers/preflight $inc \
		--template='{file}:{line}: {severity} ({id}): {message}' \
		lib spank helpers 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | grep -c ': \(error\|warning\|style\|performance\|portability\) (')
	if [ "$rc" -eq 0 ] && [ "$n" -eq 0 ]; then
		echo "ok 1 - cppcheck: lib/ spank/ helpers/ clean ($(grep -c '^[a-zA-Z]' "$srcdir/tests/cppcheck.supp") justified suppressions)"
	else
		echo "not ok 1 - cppcheck: $n finding(s) in lib/ spank/ helpers/"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
fi

# The rule is checked over the files that exist: none found is a failure,
# not a clean result.
nsrc=$(cd "$srcdir" && ls spank/*.c lib/*/*.c 2>/dev/null | wc -l)
[ "$nsrc" -gt 0 ] || bad="no spank/*.c or lib/*/*.c under $srcdir"
[ -n "${bad:-}" ] || bad=$(cd "$srcdir" && grep -nE '\b(setuid|seteuid|setreuid|setresuid|setgid|setegid|setregid|setresgid|setgroups|initgroups|system|popen|execl|execlp|execle|execv|execvp|execvpe|execve|fork|vfork|clone|posix_spawn|posix_spawnp)[[:space:]]*\(' \
	spank/*.c lib/*/*.c 2>/dev/null | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' \
	| grep -vE '^spank/hang\.c:[0-9]+:.*\bposix_spawn\(&pid, argv\[0\], &fa, &at, argv, environ\)' \
	| grep -vE '^spank/node_script\.c:[0-9]+:.*(\(pid = fork\(\)\) < 0|\bexecve\(RDZV_SCONTROL, argv, envp\);)' \
	| grep -vE '^lib/bind/health\.c:[0-9]+:.*\(pid = fork\(\)\) < 0')
# The one exception (rule 2): srun, the user's own process, runs the
# admin's hang_helper= (rdzv-hang) once per armed step, from spank/hang.c's
# run_helper; it must be there, and be the only one.
if [ -z "${bad:-}" ]; then
	nspawn=$(cd "$srcdir" && grep -cE '\bposix_spawn\(' spank/hang.c)
	[ "$nspawn" = 1 ] || bad="spank/hang.c: expected exactly one posix_spawn( (srun's run_helper), found $nspawn"
fi
# Rule 2's admin exceptions (job prolog, health_check=yes): one fork in the
# node check's library, one fork and one execv of scontrol in rdzv_node.so.
if [ -z "${bad:-}" ]; then
	for f in spank/node_script.c lib/bind/health.c; do
		nfork=$(cd "$srcdir" && grep -cE '\bfork\(' "$f")
		[ "$nfork" = 1 ] || bad="$f: expected exactly one fork(, found $nfork"
	done
	nexec=$(cd "$srcdir" && grep -cE '\bexecve?\(' spank/node_script.c)
	[ "$nexec" = 1 ] || bad="spank/node_script.c: expected exactly one execve( (scontrol, its environment fixed), found $nexec"
fi
if [ -z "$bad" ]; then
	echo "ok 2 - the plugin never changes credentials, and runs no program but srun's rdzv-hang and the prolog's scontrol drain ($nsrc files; doc/privilege.md)"
else
	echo "not ok 2 - credential change or program execution in plugin code"
	printf '%s\n' "$bad" | sed 's/^/# /'
fi

# Rule 6: a signal reaches the process it means. Allowed: the watcher's
# fallback (spank/failure.c, after its parent and start time were checked),
# srun's own rdzv-hang child (hang.c) and the prolog's own children
# (node_script.c's scontrol, health.c's check), each killed before the
# waitpid that reaps it, so its pid cannot have been reused.
bad3=$(cd "$srcdir" && grep -nE '(^|[^_a-z])kill[[:space:]]*\(' spank/*.c lib/*/*.c \
	| grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' \
	| grep -vE '^spank/failure\.c:[0-9]+:[[:space:]]*return kill\(a->pid, SIGKILL\); /\* rdzv: proven pid' \
	| grep -vE '^spank/hang\.c:[0-9]+:[[:space:]]*kill\(pid, SIG(TERM|KILL)\);$' \
	| grep -vE '^spank/node_script\.c:[0-9]+:[[:space:]]*kill\(pid, SIGKILL\);$' \
	| grep -vE '^lib/bind/health\.c:[0-9]+:[[:space:]]*\(void\)kill\(pid, SIGKILL\);$' \
	| sed 's/^/bare pid signalled: /')
# Rule 7: the names root writes (records, metrics, DCGM claims, %n) come
# from SPANK items and slurmd's own node name, never the job's environment:
# no lookup of an identity variable in the files of root's paths, and
# getenv("SLURMD_NODENAME") (slurmstepd's or the prolog's own environment,
# which slurmstepd or slurmd set) only on a line marked as such.
ids='SLURM_JOB_ID|SLURM_JOBID|SLURM_STEP_ID|SLURM_STEPID|SLURM_STEP_NODELIST|SLURM_JOB_NODELIST|SLURM_NODELIST|SLURMD_NODENAME|SLURM_NODEID|SLURM_HET_SIZE|SLURM_JOB_ID_HET_GROUP|SLURM_HET_JOB_ID'
look='(getenv|spank_getenv|rdzv_job_getenv|rdzv_job_getenv_dup|rdzv_envp_get)[[:space:]]*\([^)]*"'
root_files='spank/record.c spank/node.c spank/node_script.c spank/failure.c spank/bind.c lib/admin/record.c lib/admin/metrics.c lib/admin/jobmap.c'
bad3="$bad3$(cd "$srcdir" && grep -nE "$look($ids)" $root_files spank/remote.c lib/common/util.c \
	| grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' \
	| grep -vE '^spank/remote\.c:[0-9]+:.*"SLURM_STEP_NODELIST"' \
	| grep -vE 'getenv\("SLURMD_NODENAME"\); /\* rdzv: (slurmstepd|slurmd)'"'"'s own' \
	| sed 's/^/job environment read as an identity in a root path: /')"
nroot=$(cd "$srcdir" && ls $root_files 2>/dev/null | wc -l)
[ "$nroot" -gt 0 ] || bad3="none of the root files ($root_files) under $srcdir"
if [ -z "$bad3" ]; then
	echo "ok 3 - no signal by a bare pid, no job identity from the job's environment in a root path ($nroot root files; doc/privilege.md rules 6 and 7)"
else
	echo "not ok 3 - a root path signals a bare pid or takes an identity from the job's environment"
	printf '%s\n' "$bad3" | sed 's/^/# /'
fi
[ -z "$bad" ] && [ -z "$bad3" ] && { [ "${rc:-0}" -eq 0 ] && [ "${n:-0}" -eq 0 ]; }
