#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The test cluster gives each node its own network (tests/cluster/cluster.sh:
# a network namespace per slurmd, a veth to the cluster's bridge, a second
# interface ib0 that reaches nothing), so that a rendezvous at a wrong address
# fails as it would between machines. Checked here:
#   - the nodes really are apart: each task sees its node's own address, and
#     a node's loopback is not another node's;
#   - negative control: ranks told the wrong MASTER_ADDR (by hand, with the
#     plugin off) fail to meet, within a short timeout;
#   - control: the right MASTER_ADDR without GLOO_SOCKET_IFNAME (plugin off)
#     does not meet either: Gloo binds to what the host name resolves to
#     and falls back to loopback, which no other node reaches;
#   - with the plugin, ranks meet with no interface set by hand: each task
#     gets GLOO_SOCKET_IFNAME=eth0 and NCCL_SOCKET_IFNAME==eth0, the
#     interface its node reaches MASTER_ADDR through (not ib0), and
#     --rdzv-verbose says so; a user's own value wins;
#   - stopping the cluster removes its namespaces, links and hosts files.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
e2e_start
[ "${RDZV_NODE_NETNS:-0}" = 1 ] || { echo "Bail out! the cluster has no network namespaces (RDZV_NETNS=0?)"; exit 1; }
app="$top_srcdir/tests/e2e/allreduce.py"
check="$PY $top_srcdir/tests/e2e/check_reports.py"
cd "$(mktemp -d)" || exit 1

# 1. Apart: each node's eth0 holds its own address; n2 cannot reach n1 on loopback.
run_to 60 srun -N3 -n3 bash -c 'echo "$SLURMD_NODENAME $(ip -4 -o addr show eth0 | awk "{print \$4}") $(ip -4 -o addr show ib0 | awk "{print \$4}")"'
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" \
	"n1 $RDZV_NODE_NET.1/24 198.19.$RDZV_NET_ID.1/24 n2 $RDZV_NODE_NET.2/24 198.19.$RDZV_NET_ID.2/24 n3 $RDZV_NODE_NET.3/24 198.19.$RDZV_NET_ID.3/24 " \
	"each node has its own eth0 address and a second interface ib0"
run_to 60 srun -N2 -n2 --rdzv=off $PY -c '
import os, socket, sys, time
if os.environ["SLURM_PROCID"] == "0":
    s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(1)
    open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1]); time.sleep(6)
else:
    for i in range(300):
        if os.path.exists(sys.argv[1]): break
        time.sleep(0.1)
    port = int(open(sys.argv[1]).read())
    seen = []
    for addr in ("127.0.0.1", "n1"):
        try:
            socket.create_connection((addr, port), timeout=3).close(); seen.append(addr + " reached")
        except OSError as e:
            seen.append(addr + " " + ("refused" if isinstance(e, ConnectionRefusedError) else type(e).__name__))
    print("SEEN", ", ".join(seen), flush=True)
' "$PWD/port"
is "$(printf '%s\n' "$out" | sed -n 's/^SEEN //p')" "127.0.0.1 refused, n1 reached" \
	"a listener on n1 is reached at n1's address, not on n2's loopback"

# 2. Negative control: the wrong MASTER_ADDR (n2; rank 0 runs on n1) fails to meet.
by_hand='export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS MASTER_PORT='$E2E_USER_PORT' RDZV_TEST_PG_TIMEOUT=6; exec '"$PY $app"
t0=$(date +%s)
run_to 90 srun -N2 -n2 --rdzv=off bash -c "export MASTER_ADDR=n2; $by_hand"
t=$(( $(date +%s) - t0 ))
ok "$([ "$rc" != 0 ] && [ "$rc" != 124 ] && echo 0 || echo 1)" \
	"negative control: MASTER_ADDR=n2 with rank 0 on n1 fails to meet (exit $rc in ${t}s)"
ok "$([ "$t" -lt 60 ] && echo 0 || echo 1)" "... within a short timeout (${t}s, 6 s rendezvous timeout)"
unlike "$out" "RDZV_REPORT" "... and no rank reports a finished all-reduce"
run_to 90 srun -N2 -n2 --rdzv=off bash -c "export MASTER_ADDR=n1 GLOO_SOCKET_IFNAME=eth0; $by_hand"
verdict=$(printf '%s\n' "$out" | grep -c '"allreduce": 3.0')
is "$rc:$verdict" "0:2" "the same ranks by hand with MASTER_ADDR=n1 and GLOO_SOCKET_IFNAME=eth0 meet (the control is fair)"

# 3. Control: the right MASTER_ADDR but no interface named: Gloo's own choice.
diag "this machine's host name $(hostname) resolves to $(getent hosts "$(hostname)" | awk '{print $1}' | head -n 1)"
run_to 90 srun -N2 -n2 --rdzv=off bash -c "export MASTER_ADDR=n1; unset GLOO_SOCKET_IFNAME; $by_hand"
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" \
	"without GLOO_SOCKET_IFNAME, Gloo's own choice does not reach the other node (exit $rc)"
like "$out" "127\.0\.0\.1|loopback|[Tt]imeout|timed out" "... it bound to loopback and timed out"

# 4. The plugin: no interface set by hand.
run_to 90 srun -N3 --ntasks-per-node=2 --rdzv=torch --rdzv-verbose $PY "$app"
is "$rc" 0 "--rdzv=torch on 3 separate networks: srun exits 0"
verdict=$(printf '%s\n' "$out" | $check 6)
is "$?" 0 "6 ranks on 3 nodes meet and all-reduce with no interface set by hand ($verdict)"
like "$out" "n2:   interface toward rank 0's node: eth0 \\(this node's $RDZV_NODE_NET\\.2\\), the kernel's route to n1" \
	"--rdzv-verbose names eth0 and the node's own address on it"
like "$out" "GLOO_SOCKET_IFNAME=eth0 \\(rdzv\\)" "GLOO_SOCKET_IFNAME=eth0 comes from the plugin"
like "$out" "NCCL_SOCKET_IFNAME==eth0 \\(rdzv\\)" "NCCL_SOCKET_IFNAME==eth0 (exact name) comes from the plugin"
run_to 60 srun -N2 -n2 --rdzv=torch bash -c 'echo "$GLOO_SOCKET_IFNAME/$NCCL_SOCKET_IFNAME"'
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "eth0/=eth0 " "every task gets eth0, never ib0"
run_to 60 env GLOO_SOCKET_IFNAME=ib0 NCCL_SOCKET_IFNAME=ib srun -N2 -n2 --rdzv=torch bash -c 'echo "$GLOO_SOCKET_IFNAME/$NCCL_SOCKET_IFNAME"'
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "ib0/ib " "a user's own values win"
run_to 90 srun -N3 --ntasks-per-node=1 --rdzv=torchrun $TORCHRUN "$app"
is "$rc" 0 "real torchrun on 3 separate networks: srun exits 0"
verdict=$(printf '%s\n' "$out" | $check 3 --launcher torchrun)
is "$?" 0 "torchrun's workers meet with no interface set by hand ($verdict)"

# 5. Stopping removes what start made.
ns_prefix="rdzv$RDZV_NET_ID-"
e2e_stop
trap - EXIT
ok "$(ip netns list 2>/dev/null | grep -q "^$ns_prefix" && echo 1 || echo 0)" "stop removed the namespaces $ns_prefix*"
ok "$(ip -o link show 2>/dev/null | grep -qE ": (rdzvbr$RDZV_NET_ID|rz$RDZV_NET_ID-|ri$RDZV_NET_ID-)" && echo 1 || echo 0)" \
	"... the bridge and the veth ends"
ok "$(ls -d /etc/netns/$ns_prefix* >/dev/null 2>&1 && echo 1 || echo 0)" "... and the hosts files"
done_testing
