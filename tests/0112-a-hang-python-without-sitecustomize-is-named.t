#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hang_python= directory without spank-rdzv's sitecustomize.py is named at
# step start: without it the plugin's PYTHONPATH arms nothing
# (Python loads Debian's or an image's own sitecustomize), so rdzv-hang would
# find no rank and a collective timeout would not apply, without a word.
# The user's own --rdzv-debug=hang or --rdzv-collective-timeout is refused
# before exec, once per node, with the path and the fix; a site default
# (debug=hang) runs the step with a warning, once per node; a file there that
# is not spank-rdzv's counts as missing; the installed file gives neither.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
work=$(mktemp -d /tmp/rdzv-0112.XXXXXX) || exit 1
chmod 755 "$work"
empty=$work/empty other=$work/other
mkdir -p "$empty" "$other"
printf 'import os\n' > "$other/sitecustomize.py"
chmod 755 "$empty" "$other"
chmod 644 "$other/sitecustomize.py"
good=$top_srcdir/helpers/python
e2e_start RDZV_PLUGSTACK_ARGS="hang_python=$empty"
trap 'rm -rf "$work"; e2e_stop' EXIT
count() { printf '%s\n' "$out" | grep -c -- "$1"; }

# 1. --rdzv-debug=hang: refused, once per node, naming the path and the fix.
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=torch --rdzv-debug=hang sh -c 'echo ran'
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "--rdzv-debug=hang, hang_python= without sitecustomize.py: the step is refused (exit $rc)"
unlike "$out" "^ran\$" "... before any task ran its program"
msg="rdzv: error: task [0-9]+: --rdzv-debug=hang: hang_python=$empty has no spank-rdzv sitecustomize.py \\(missing\\), so --rdzv-debug=hang would do nothing \\(no rank answers rdzv-hang, no collective timeout, no signal forwarding\\): the administrator installs spank-rdzv's helpers/python there or sets hang_python= in plugstack.conf to where it is; the step is refused: run it without --rdzv-debug=hang to run it unarmed"
like "$out" "$msg" "... naming the directory, what it costs and the fix"
is "$(printf '%s\n' "$out" | grep -cE "$msg")" 2 "... said once per node (2 nodes, 4 tasks)"
printf '%s\n' "$out" | grep 'rdzv: error' | head -n 1 | sed 's/^/# /'

# 2. --rdzv-collective-timeout: refused the same way.
run_to 60 srun -N1 -n1 --rdzv-collective-timeout=5m sh -c 'echo ran'
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "--rdzv-collective-timeout=5m: refused (exit $rc)"
like "$out" "rdzv: error: task 0: --rdzv-collective-timeout: hang_python=$empty has no spank-rdzv sitecustomize.py .*run it without --rdzv-collective-timeout to run it unarmed" \
	"... naming the option, the directory and the fix"

# 3. A sitecustomize.py there that is not spank-rdzv's counts as missing.
e2e_plugstack "hang_python=$other"
run_to 60 srun -N1 -n1 --rdzv-debug=hang sh -c 'echo ran'
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" "hang_python= holding another sitecustomize.py: --rdzv-debug=hang is refused (exit $rc)"
like "$out" "hang_python=$other has no spank-rdzv sitecustomize.py \\(the file there is not spank-rdzv's\\)" "... saying the file there is not spank-rdzv's"

# 4. The site's default (debug=hang): the step runs, with a warning per node.
e2e_plugstack "hang_python=$empty" debug=hang
run_to 60 srun -N2 --ntasks-per-node=2 sh -c 'echo ran'
is "$rc" 0 "debug=hang (plugstack.conf), hang_python= without sitecustomize.py: the step runs"
is "$(count '^ran$')" 4 "... every task ran"
wmsg="rdzv: warning: n[0-9]+: debug=hang \\(plugstack.conf\\): hang_python=$empty has no spank-rdzv sitecustomize.py \\(missing\\), so debug=hang \\(plugstack.conf\\) would do nothing .*installs spank-rdzv's helpers/python there or sets hang_python= in plugstack.conf to where it is\$"
like "$out" "$wmsg" "... with a warning naming the directory and the fix"
is "$(printf '%s\n' "$out" | grep -cE "$wmsg")" 2 "... once per node"
unlike "$out" "rdzv: error" "... and no error"
# The user's --rdzv-debug=off under the site's default: nothing armed, nothing said.
run_to 60 srun -N1 -n1 --rdzv-debug=off sh -c 'echo ran'
is "$rc" 0 "--rdzv-debug=off under debug=hang: the step runs"
unlike "$out" "sitecustomize" "... and nothing is said about hang_python="

# 5. The installed directory: no refusal, no warning.
e2e_plugstack "hang_python=$good"
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv-debug=hang --rdzv-collective-timeout=5m sh -c 'echo "ran $PYTHONPATH"'
is "$rc" 0 "hang_python= with spank-rdzv's sitecustomize.py: --rdzv-debug=hang runs"
is "$(printf '%s\n' "$out" | grep -c "^ran $good")" 4 "... every task has PYTHONPATH starting with it"
unlike "$out" "sitecustomize" "... and nothing is said about it"
done_testing
