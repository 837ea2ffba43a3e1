#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rdzv-preflight without Slurm, forced failures: a wrong MASTER_ADDR, a
# missing rank, a duplicate rank, disagreeing WORLD_SIZE or LOCAL_RANK, a
# taken port. Each must end within its timeout, with a non-zero exit on
# every rank and a message that names the rank (and node where known).
#
# The ranks run in a network namespace of their own with only loopback up,
# so the wrong MASTER_ADDR (TEST-NET-1) is unreachable by construction and
# no packet for it ever leaves this machine.
if [ -z "${RDZV_PF_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	exec unshare -n env RDZV_PF_NETNS=1 bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/preflight-local.sh"


# A wrong MASTER_ADDR (TEST-NET-1, reachable by nobody): ranks give up after
# --timeout naming the address; rank 0 says MASTER_ADDR is not its own.
if [ -z "${RDZV_PF_NETNS:-}" ]; then
	for i in 1 2 3 4 5; do
		skip "a wrong MASTER_ADDR: needs a network namespace of its own (root, unshare -n), so that nothing is sent to 192.0.2.1"
	done
else
port=$(free_port)
start=$(date +%s)
for r in 0 1 2; do launch m$r $r 3 $r 3 n1 MASTER_ADDR=192.0.2.1 -- --cpu --timeout=3; done
wait_rc m0 m1 m2
took=$(( $(date +%s) - start ))
is "$rc" "1 1 1" "wrong MASTER_ADDR: every rank exits 1"
ok $([ "$took" -le 12 ] && echo 0 || echo 1) "within the timeout and a margin (${took}s for --timeout=3)"
like "$(out_of m1)" "FAIL: rank 1 on n1: MASTER_ADDR=192.0.2.1 MASTER_PORT=$port: cannot reach 192.0.2.1:$port: .* \(gave up after 3 s\)" \
	"rank 1 names the address it could not reach and the error"
o=$(out_of m0)
like "$o" "FAIL  rendezvous  2 of 3 ranks missing" "rank 0 counts the ranks that never came"
like "$o" "MASTER_ADDR=192.0.2.1 \(192.0.2.1\) is not an address of n1, where rank 0 runs" \
	"rank 0 says MASTER_ADDR is not its host"
fi

# A missing rank: rank 2 never starts. Rank 0 names it, and where Slurm's
# block layout put it; the ranks that came are told and exit 1.
port=$(free_port)
slurm=(SLURM_STEP_NODELIST='n[1-2]' SLURM_STEP_TASKS_PER_NODE='2(x2)' SLURM_DISTRIBUTION=block)
start=$(date +%s)
for r in 0 1 3; do launch x$r $r 4 $((r % 2)) 2 n$((r / 2 + 1)) "${slurm[@]}" -- --cpu --timeout=3; done
wait_rc x0 x1 x3
took=$(( $(date +%s) - start ))
is "$rc" "1 1 1" "a missing rank: every rank that came exits 1"
ok $([ "$took" -le 12 ] && echo 0 || echo 1) "within the timeout and a margin (${took}s for --timeout=3)"
o=$(out_of x0)
like "$o" "FAIL  rendezvous  1 of 4 ranks missing at phase 1: rank 2" "rank 0: one of four missing, rank 2"
like "$o" "rank 2 never connected \(Slurm placed it on n2\)" "rank 0 names the node rank 2 should have run on"
is "$(cat "$work/out.x1" "$work/err.x1")" "" "the other ranks leave the message to rank 0"

# Two processes claim rank 1: a wrong rendezvous, refused at once; rank 2,
# starting late, is told the reason rather than left to its timeout.
port=$(free_port)
start=$(date +%s)
launch d0 0 3 0 3 n1 -- --cpu --timeout=20
launch d1 1 3 1 3 n1 -- --cpu --timeout=20
sleep 1
launch d1b 1 3 2 3 n1 -- --cpu --timeout=20
sleep 1
launch d2 2 3 2 3 n1 -- --cpu --timeout=20
wait_rc d0 d1 d1b d2
took=$(( $(date +%s) - start ))
is "$rc" "1 1 1 1" "a duplicate rank: every rank exits 1"
ok $([ "$took" -le 10 ] && echo 0 || echo 1) "long before the 20 s timeout (${took}s)"
like "$(out_of d0)" "duplicate rank 1: on n1 \(127.0.0.1\) and on n1 \(127.0.0.1:[0-9]+\)" \
	"rank 0 names the duplicate and where both came from"
like "$(out_of d1b)" "rank 0 at 127.0.0.1:$port refused rank 1: duplicate rank 1" \
	"the second rank 1 is told why"
like "$(out_of d2)" "rank 0 at 127.0.0.1:$port refused rank 2: duplicate rank 1" \
	"a rank arriving after the failure is told the same reason"

# WORLD_SIZE disagrees.
port=$(free_port)
launch w0 0 3 0 3 n1 -- --cpu --timeout=20
launch w1 1 3 1 3 n1 -- --cpu --timeout=20
launch w2 2 4 2 3 n1 -- --cpu --timeout=20
wait_rc w0 w1 w2
is "$rc" "1 1 1" "a rank with another WORLD_SIZE: every rank exits 1"
like "$(out_of w0)" "rank 2 on n1 \(127.0.0.1:[0-9]+\) has WORLD_SIZE=4, rank 0 has 3" "rank 0 names it"

# Two ranks of one node with LOCAL_RANK=0, and a wrong LOCAL_WORLD_SIZE.
port=$(free_port)
launch l0 0 3 0 2 n1 -- --cpu --timeout=20
launch l1 1 3 0 2 n1 -- --cpu --timeout=20
launch l2 2 3 0 2 n2 -- --cpu --timeout=20
wait_rc l0 l1 l2
is "$rc" "1 1 1" "LOCAL_RANK and LOCAL_WORLD_SIZE that do not match the nodes: every rank exits 1"
o=$(out_of l0)
like "$o" "rank 1 \(n1\) has LOCAL_RANK=0 like another rank of the node" "the duplicate LOCAL_RANK is named"
like "$o" "rank 2 \(n2\) has LOCAL_WORLD_SIZE=2 but the node runs 1 rank" "the wrong LOCAL_WORLD_SIZE is named"

# Rank 0 cannot host: another process holds MASTER_PORT.
# The holder says when it listens and holds until told (events, not sleeps:
# a loaded machine made a 4 s holder expire before rank 0 started).
port=$(free_port)
hold=$(mktemp -d)
python3 - "$port" "$hold" <<'PY' &
import os, socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1)
open(os.path.join(sys.argv[2], "ready"), "w").close()
for i in range(1200):
    if os.path.exists(os.path.join(sys.argv[2], "release")):
        break
    time.sleep(0.1)
PY
holder=$!
for i in $(seq 1 600); do [ -e "$hold/ready" ] && break; sleep 0.1; done
launch p0 0 1 0 1 n1 -- --cpu --timeout=3
wait_rc p0
touch "$hold/release"
wait "$holder"
rm -rf "$hold"
is "$rc" 1 "MASTER_PORT taken: rank 0 exits 1"
like "$(out_of p0)" "rank 0 on n1 cannot host the rendezvous: cannot listen on port $port: .*in use" \
	"rank 0 says the port is taken"

# Missing variables and bad options: exit 2, before meeting anyone.
out=$(env -i PATH="$PATH" RANK=0 MASTER_PORT=x "$bin" 2>&1)
is "$?" 2 "missing variables: exit 2"
like "$out" "WORLD_SIZE is not set; LOCAL_RANK is not set; MASTER_PORT=x is not a number in 1..65535; MASTER_ADDR is not set" \
	"every missing or bad variable is named"
out=$(env -i PATH="$PATH" RANK=3 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=x MASTER_PORT=1234 "$bin" 2>&1)
is "$?" 2 "RANK >= WORLD_SIZE: exit 2"
like "$out" "RANK=3 is not below WORLD_SIZE=2" "and said so"
out=$("$bin" --timeout=0 2>&1)
is "$?" 2 "--timeout=0 is refused"
out=$("$bin" --cpu --gpu 2>&1)
is "$?" 2 "--cpu with --gpu is refused"
like "$out" "contradict" "and said so"
out=$("$bin" --help)
is "$?" 0 "--help exits 0"
like "$out" "Exit status: 0 every check passed, 1 a check failed, 2 usage or environment" "--help documents the exit status"
done_testing
