#!/bin/bash
# pyxis's --container-unshare=net gives the container its own network
# namespace. Tasks of one node share it, so a one-node step still meets
# over its loopback with the plugin's rendezvous; across nodes a namespace
# holding only loopback cannot reach MASTER_ADDR, and the host's NICs named
# by binding's NCCL_IB_HCA/NCCL_SOCKET_IFNAME are not in it
# (doc/containers.md). enroot 4.1.2 cannot create the namespace (pyxis 0.24
# then refuses the step): the test says so and skips.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_enter
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
ctr_start
ctr_plugstack pyxis-first
ctr_srun 240 -N1 --ntasks-per-node=2 --container-unshare=net --rdzv=torch \
	env RDZV_TEST_PG_TIMEOUT=20 $PY "$RANK_PY"
if [ "$rc" != 0 ] && printf '%s' "$out" | grep -q "container is not in a separate network namespace"; then
	skip_all "enroot $(enroot version 2>/dev/null) cannot unshare the network namespace that pyxis 0.24's --container-unshare=net asks for (pyxis: \"--container-unshare=net requested but the container is not in a separate network namespace\")"
fi
is "$rc" 0 "one node, own network namespace: srun exits 0"
verdict=$(printf '%s\n' "$out" | $PY "$top_srcdir/tests/e2e/check_reports.py" 2 --per-node n1=2)
is "$?" 0 "one node, own network namespace: the two ranks meet over the namespace's loopback ($verdict)"
done_testing
