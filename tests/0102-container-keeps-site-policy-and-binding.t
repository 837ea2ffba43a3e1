#!/bin/bash
# Site policy and binding survive the container (rdzv.so after pyxis):
# an enforced profile entry beats the image's ENV, and the user's export
# even when --container-env asks pyxis to keep the host's value; the NCCL
# environment plugin the profile enforces is named as not visible inside
# the container until an enroot mounts.d line puts it there, then it is
# visible and loads; every task's GPU, NIC and CPU binding inside the image
# is what binding gives the same step outside it.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_enter
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require torch
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/../shared/topologies}
[ -d "$fixtures" ] || skip_all "no topology fixtures at $fixtures (set RDZV_TOPOLOGIES)"
envplug=$top_builddir/nccl/.libs/libnccl-env-rdzv.so
[ -f "$envplug" ] || skip_all "NCCL env plugin not built at $envplug"
pdir=/run/rdzv-ctr-profiles.$$
mkdir -p "$pdir" && chmod 755 "$pdir" || skip_all "cannot create $pdir"
cat > "$pdir/site.profile" <<EOP
description Site default
enforce NCCL_IB_HCA=mlx5_7
enforce NCCL_ENV_PLUGIN=$envplug
default NCCL_DEBUG=WARN
EOP
chmod 644 "$pdir/site.profile"
mountsd=/etc/enroot/mounts.d/50-rdzv-nccl-env.fstab
topo=$(mktemp -d /tmp/rdzv-topo.XXXXXX)
ln -s "$fixtures/aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml" "$topo/n1.xml"
ln -s "$fixtures/psmgmt__tests__hwloc__topo.jwb0004.xml" "$topo/n2.xml"
ln -s "$fixtures/flux-core__t__hwloc-data__ipa20.xml" "$topo/n3.xml"
ctr_start RDZV_NODE_GPUS="8 4 4"
trap 'rm -rf "$pdir" "$topo" "$mountsd"; ctr_cleanup' EXIT
ctr_hook on
ctr_plugstack pyxis-first profiles=$pdir profile=site
rm -f "$mountsd"

ctr_srun 240 -N3 --ntasks-per-node=2 --rdzv=torch $PY "$RANK_PY"
is "$rc" 0 "profile enforcing NCCL_IB_HCA and NCCL_ENV_PLUGIN, hook on: srun exits 0"
is "$(ctr_rank0 NCCL_IB_HCA)" "NCCL_IB_HCA=mlx5_7" "the enforced NCCL_IB_HCA beats the image's mlx5_0"
is "$(ctr_rank0 NCCL_DEBUG)" "NCCL_DEBUG=WARN" "the profile's default applies in the container"
like "$(ctr_rank0 RDZV_NCCL_POLICY)" "NCCL_IB_HCA=mlx5_7" "RDZV_NCCL_POLICY reaches the container"
is "$(ctr_rank0 nccl_env_plugin_visible)" "nccl_env_plugin_visible=False" "without a mounts.d line the NCCL env plugin is not in the container"
is "$(printf '%s\n' "$out" | grep -c "rdzv: warning: n[123]: NCCL_ENV_PLUGIN=$envplug is not visible inside the container")" 3 \
	"each node says once that NCCL_ENV_PLUGIN is not visible inside the container"
like "$out" "NCCL_IB_HCA=mlx5_0 -> mlx5_7 \\(profile site, enforced\\)" "the warning names the image's NCCL_IB_HCA replaced by the enforced entry"

NCCL_IB_HCA=mlx5_3 ctr_srun 240 -N1 -n2 --container-env=NCCL_IB_HCA --rdzv=torch $PY "$RANK_PY"
is "$rc" 0 "user exports NCCL_IB_HCA=mlx5_3 with --container-env=NCCL_IB_HCA: srun exits 0"
is "$(ctr_rank0 NCCL_IB_HCA)" "NCCL_IB_HCA=mlx5_7" "the enforced entry still wins over the user's value pyxis kept"

# The administrator's mounts.d line puts the library's directory in every container.
d=$(dirname "$envplug")
echo "$d $d none x-create=dir,bind,ro,nosuid,nodev,private" > "$mountsd"
ctr_srun 240 -N3 --ntasks-per-node=2 --rdzv=torch $PY "$RANK_PY"
is "$rc" 0 "with the mounts.d line: srun exits 0"
is "$(printf '%s\n' "$out" | grep -c '"nccl_env_plugin_loads": true')" 6 "with the mounts.d line: the NCCL env plugin is visible and loads in all 6 ranks"
unlike "$out" "is not visible inside the container" "with the mounts.d line: no warning"
rm -f "$mountsd"

# Binding: the same step inside and outside the image.
ctr_hook off
ctr_plugstack pyxis-first topology=$topo/%n.xml
fields="SLURMD_NODENAME LOCAL_RANK CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER NCCL_IB_HCA UCX_NET_DEVICES cpus"
table() { # one sorted line per task
	printf '%s\n' "$out" | /usr/bin/python3 -c '
import json, sys
keys = sys.argv[1:]
rows = []
for line in sys.stdin:
    i = line.find("RDZV_REPORT ")
    if i >= 0:
        r = json.loads(line[i + 12:])
        rows.append(" ".join("%s=%s" % (k, r["env"].get(k, r.get(k))) for k in keys))
print("\n".join(sorted(rows)))' $fields
}
run_to 120 srun -N3 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto env RDZV_TEST_NO_MEET=1 $PY "$RANK_PY"
is "$rc" 0 "binding outside the container: srun exits 0"
outside=$(table)
ctr_srun 240 -N3 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto env RDZV_TEST_NO_MEET=1 $PY "$RANK_PY"
is "$rc" 0 "binding inside the container: srun exits 0"
inside=$(table)
is "$(printf '%s\n' "$inside" | wc -l)" 6 "binding inside: six tasks reported"
like "$inside" "NCCL_IB_HCA=[^ ]*rdmap" "binding's NCCL_IB_HCA replaces the image's mlx5_0"
is "$inside" "$outside" "every task's GPUs, NICs and CPUs inside the image are binding's, as outside"
diag "inside: $(printf '%s\n' "$inside" | head -n 2 | tr '\n' '|')"
done_testing
