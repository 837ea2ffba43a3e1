#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A flood at a healthy node's liveness responder never makes srun name that
# node dead (issue 45): the responder's socket in slurmstepd is connected to
# srun's address, so the kernel drops every datagram from anyone else before
# its thread reads. The flood (tests/e2e/udp_flood.py) comes from this host's
# side of the test cluster's bridge, at the node's own address (198.18/15 or
# the loopback only), and stops by itself: when the test touches its stop
# file, after 90 s or after 20 million datagrams; the test starts and reaps
# it. Faults go only into what this test started (as tests/0120).
#   - a node hangs (SIGSTOP) while another is flooded: srun names the hung
#     node alone;
#   - under salloc --no-kill with one spare node, a rank's process is killed
#     while another node is flooded: rdzv-retry excludes the killed rank's
#     node alone and training resumes.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/lib/live-nodes.sh"
e2e_require torch
app=$top_srcdir/tests/e2e/live_rank.py
flooder=$top_srcdir/tests/e2e/udp_flood.py
retry=$top_srcdir/helpers/rdzv-retry
work=$(mktemp -d /tmp/rdzv-0124.XXXXXX) || exit 1
chmod 755 "$work"
stopped= flood_pid=
stop_flood() {
	[ -n "$flood_pid" ] || return 0
	touch "$d/stop-flood"
	wait "$flood_pid"
	flood_pid=
}
cleanup() {
	stop_flood
	live_cleanup
}
trap cleanup EXIT
e2e_start
cd "$work" || exit 1

node_addr() {
	if [ "${RDZV_NODE_NETNS:-1}" = 1 ]; then echo "198.18.$RDZV_NET_ID.${1#n}"; else echo "127.0.1.${1#n}"; fi
}
# udp_of STEPD: the UDP sockets slurmstepd holds, one line each: its local
# port (decimal) and its peer ("-" when not connected), read from the node's
# own /proc/PID/net tables (its network namespace).
udp_of() {
	local ino sl lo rem st q tr re uid to inode rest
	for ino in $(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'); do
		while read -r sl lo rem st q tr re uid to inode rest; do
			[ "$inode" = "$ino" ] || continue
			if [ "${rem##*:}" = 0000 ]; then rem=-; fi
			echo "$((16#${lo##*:})) $rem"
		done < <(cat "/proc/$1/net/udp" "/proc/$1/net/udp6" 2>/dev/null)
	done
}
# silent_named FILE: the nodes srun's verdicts name as not answering (the
# verdict alone: its "(then rank R (node N) ...: a consequence)" names a
# healthy node).
silent_named() { sed -n 's/.*rdzv: nodes\{0,1\} \(.*\) do\(es\)\{0,1\} not answer (.*/\1/p' "$1"; }
# flood NODE STEPD: the flood at every UDP port of the node's slurmstepd.
flood() {
	local addr targets= port peer
	addr=$(node_addr "$1")
	while read -r port peer; do
		[ -n "$port" ] || continue
		targets="$targets $addr:$port"
		[ "$peer" != - ] && connected=1
	done <<< "$(udp_of "$2")"
	ok "$([ -n "$targets" ] && echo 0 || echo 1)" "$1's slurmstepd listens on UDP:$targets"
	ok "$([ "$connected" = 1 ] && echo 0 || echo 1)" "... its liveness responder is connected to srun's address (the kernel drops anyone else's)"
	rm -f "$d/stop-flood"
	$PY "$flooder" "$d/stop-flood" 90 20000000 $targets >"$d/flood" 2>&1 &
	flood_pid=$!
}

# 1. A node hangs while another is flooded.
d=$work/hang; mkdir -m 755 "$d"
srun -N3 --ntasks-per-node=1 --rdzv=torch $PY "$app" "$d" 10 >"$d/out" 2>&1 &
srun_pid=$!
wait_for 120 started "$d" 3; ok $? "3 ranks on 3 nodes train"
read -r node sd st rk <<< "$(node_procs "$d" 2)"
read -r fnode fsd fst frk <<< "$(node_procs "$d" 1)"
ok "$([ -n "$st" ] && [ -n "$fst" ] && echo 0 || echo 1)" "rank 2's node $node (slurmstepd $st), rank 1's node $fnode (slurmstepd $fst)"
connected=
flood "$fnode" "$fst"
hang_until_srun_ends $sd $st $rk
stop_flood
out=$(cat "$d/out")
diag "$(cat "$d/flood")"
like "$(cat "$d/flood")" "flood: [0-9]{4,} datagrams" "the flood ran until srun ended"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "srun fails (exit $rc)"
like "$out" "rdzv: node $node does not answer \\(dead or hung: last heard [0-9.]+ s before the failure\\); the step was stopped" \
	"the line names the hung node $node"
unlike "$(silent_named "$d/out")" "$fnode" "... and not the flooded node $fnode"
ok "$([ "$t" -lt 25000 ] && echo 0 || echo 1)" "srun ends $t ms after the stop: within 15 s of the ranks' 10 s timeout"
diag "$(grep '^rdzv:' "$d/out" | head -n 3)"

# 2. rdzv-retry under salloc --no-kill, one spare node: a rank's process
# killed while another node is flooded.
e2e_stop
e2e_start RDZV_NODES=4
d=$work/retry; mkdir -m 755 "$d"
salloc --no-kill -N4 "$retry" -n 1 -- srun -N3 --ntasks-per-node=1 --rdzv=torch $PY "$app" "$d" 60 >"$d/out" 2>&1 &
salloc_pid=$!
wait_for 120 started "$d" 3; ok $? "attempt 1: 3 ranks on 3 of the 4 nodes train"
read -r node sd st rk <<< "$(node_procs "$d" 1)"
read -r fnode fsd fst frk <<< "$(node_procs "$d" 2)"
connected=
flood "$fnode" "$fst"
kill -KILL "$rk"
t0=$EPOCHREALTIME
trained() { [ "$(grep -c 'trained sum=6 of 6' "$d/out")" -ge 3 ]; }
wait_for 60 trained; ok $? "attempt 2 trains: 3 ranks all-reduce"
t=$(ms_since "$t0")
stop_flood
diag "$(cat "$d/flood")"
wait "$salloc_pid"; rc=$?
out=$(cat "$d/out")
is "$rc" 0 "rdzv-retry exits 0 (training resumed $t ms after the kill)"
like "$out" "rdzv-retry: excluding $node \\(a signal it did not raise itself\\)" "rdzv-retry excluded the killed rank's node $node"
unlike "$(grep 'excluding' "$d/out")" "excluding $fnode" "... and not the flooded node $fnode"
unlike "$(silent_named "$d/out")" "$fnode" "... which no line names dead"
[ "$rc" = 0 ] || diag "$(grep -E '^(rdzv|srun|salloc)' "$d/out" | tail -n 12)"
done_testing
