#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Under `srun --rdzv=torch apptainer exec IMAGE python3 ...` the ranks meet
# inside an image whose %environment declares RANK=0 WORLD_SIZE=1
# MASTER_ADDR=localhost (tests/containers/image.def): Apptainer applies an
# image's %environment over the task's, so the plugin also gives each task
# every variable it set as APPTAINERENV_NAME (and SINGULARITYENV_NAME, equal),
# which wins over the image and survives --cleanenv. Checked with and without
# --cleanenv, through a wrapper script that runs `singularity`, under
# --rdzv-verbose (the one line saying so; Apptainer prints no warning or
# notice about the copies); an image variable the plugin does not set stays
# the image's; an enforced profile entry beats the image's value and a user's
# own APPTAINERENV_ copy, a default does not; binding's GPUs and NICs inside
# are binding's, as outside. container_env=no gives the image's values back
# (the failure the copies prevent, measured). Last, Slurm's own OCI support
# (srun --container with crun): tested where it runs, else skipped with the
# measured reason.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
. "$top_srcdir/tests/containers/lib.sh"
ctr_require
e2e_require torch
ctr_image
diag "image: $IMAGE ($(apptainer --version))"
pdir=/run/rdzv-ctr-profiles.$$
mkdir -p "$pdir" && chmod 755 "$pdir" || skip_all "cannot create $pdir"
envplug=$top_builddir/nccl/.libs/libnccl-env-rdzv.so
cat > "$pdir/site.profile" <<EOP
description Site default
enforce NCCL_IB_HCA=mlx5_7
enforce NCCL_ENV_PLUGIN=$envplug
default NCCL_DEBUG=WARN
EOP
chmod 644 "$pdir/site.profile"
work=$(mktemp -d /tmp/rdzv-ctr.XXXXXX)
chmod 755 "$work"
e2e_start
trap 'rm -rf "$pdir" "$work"; e2e_stop' EXIT
e2e_plugstack

# Every task's view: RANK LOCAL_RANK WORLD_SIZE MASTER_ADDR, in the image.
fields="RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR RDZV_IMAGE_VAR in_image"
want_meet="RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=n1 RDZV_IMAGE_VAR=from-the-image in_image=True
RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=n1 RDZV_IMAGE_VAR=from-the-image in_image=True
RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=n1 RDZV_IMAGE_VAR=from-the-image in_image=True
RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=n1 RDZV_IMAGE_VAR=from-the-image in_image=True"
met() { # every rank met and the all-reduce of 1+2+3+4 is right
	printf '%s\n' "$out" | /usr/bin/python3 -c '
import json, sys
r = [json.loads(l[l.find("RDZV_REPORT ") + 12:]) for l in sys.stdin if "RDZV_REPORT " in l]
ok = len(r) == 4 and sorted(x["rank"] for x in r) == [0, 1, 2, 3] \
    and all(x["world"] == 4 and x["allreduce"] == 10.0 for x in r)
print("yes" if ok else "no: %d reports" % len(r))'
}
# The host's own RDZV_IMAGE_VAR must not beat the image's: the plugin does
# not set it, so the image's %environment keeps it.
export RDZV_IMAGE_VAR=from-the-host

# Before: container_env=no, as the plugin was. Ranks only report (they
# would form one-rank worlds on localhost:29500 and fight over the port).
e2e_plugstack container_env=no
for opts in "" "--cleanenv"; do
	run_to 120 srun -N2 --ntasks-per-node=2 --rdzv=torch $(ctr_exec $opts --env RDZV_TEST_NO_MEET=1) python3 "$RANK_PY"
	is "$rc" 0 "container_env=no${opts:+, $opts}: srun exits 0"
	is "$(ctr_reports RANK WORLD_SIZE MASTER_ADDR | sort -u)" "RANK=0 WORLD_SIZE=1 MASTER_ADDR=localhost" \
		"container_env=no${opts:+, $opts}: every task sees the image's RANK=0 WORLD_SIZE=1 MASTER_ADDR=localhost"
done

# After: the default (container_env=yes).
e2e_plugstack
for opts in "" "--cleanenv"; do
	# --cleanenv drops the host's USE_LIBUV=0 too (Debian's PyTorch has no libuv).
	run_to 180 srun -N2 --ntasks-per-node=2 --rdzv=torch $(ctr_exec $opts ${opts:+--env USE_LIBUV=0}) python3 "$RANK_PY"
	is "$rc" 0 "apptainer exec${opts:+ $opts}: srun exits 0"
	is "$(met)" yes "apptainer exec${opts:+ $opts}: 4 ranks meet inside the image and all-reduce to 10"
	is "$(ctr_reports $fields)" "$want_meet" \
		"apptainer exec${opts:+ $opts}: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR are the plugin's; RDZV_IMAGE_VAR stays the image's"
	[ "$rc" = 0 ] || diag "$(printf '%s\n' "$out" | tail -n 8)"
done

# A wrapper script the task runs, which runs `singularity` (Debian's is
# Apptainer): the plugin never looks at the command line.
cat > "$work/in-image" <<EOF
#!/bin/sh
exec singularity exec --no-privs --cleanenv --env USE_LIBUV=0 -B $ctr_dir $IMAGE "\$@"
EOF
chmod 755 "$work/in-image"
run_to 180 srun -N2 --ntasks-per-node=2 --rdzv=torch --rdzv-verbose "$work/in-image" python3 "$RANK_PY"
is "$rc" 0 "wrapper script running singularity exec --cleanenv, --rdzv-verbose: srun exits 0"
is "$(met)" yes "wrapper: 4 ranks meet inside the image"
is "$(ctr_reports $fields)" "$want_meet" "wrapper: the plugin's values inside, the image's RDZV_IMAGE_VAR"
like "$out" "rdzv: n1: [0-9]+ variables also set as APPTAINERENV_\\* and SINGULARITYENV_\\* \\(Apptainer applies an image's %environment over the task's\\)" \
	"--rdzv-verbose says how the values are carried into the container"
is "$(printf '%s\n' "$out" | grep -c 'also set as APPTAINERENV_')" 2 "once per node"
unlike "$out" "(WARNING|INFO): " "Apptainer prints no warning or notice about the copies"
diag "$(printf '%s\n' "$out" | grep -m1 'also set as APPTAINERENV_')"

# Site policy: the enforced entry beats the image's NCCL_IB_HCA=mlx5_0 and
# the user's own APPTAINERENV_NCCL_IB_HCA; the user's APPTAINERENV_NCCL_DEBUG
# beats the profile's default (as their NCCL_DEBUG would).
e2e_plugstack "profiles=$pdir" profile=site
APPTAINERENV_NCCL_IB_HCA=mlx5_3 APPTAINERENV_NCCL_DEBUG=INFO \
	run_to 180 srun -N2 --ntasks-per-node=2 --rdzv=torch $(ctr_exec --cleanenv --env USE_LIBUV=0) python3 "$RANK_PY"
is "$rc" 0 "profile site, user's APPTAINERENV_NCCL_IB_HCA and _NCCL_DEBUG, --cleanenv: srun exits 0"
is "$(met)" yes "profile: 4 ranks meet inside the image"
is "$(ctr_reports NCCL_IB_HCA NCCL_DEBUG | sort -u)" "NCCL_IB_HCA=mlx5_7 NCCL_DEBUG=INFO" \
	"inside: the enforced NCCL_IB_HCA beats the image's and the user's copy; the user's NCCL_DEBUG copy beats the default"
is "$(ctr_reports NCCL_ENV_PLUGIN | sort -u)" "NCCL_ENV_PLUGIN=$envplug" "the enforced NCCL_ENV_PLUGIN reaches inside"
like "$(ctr_reports RDZV_NCCL_POLICY | sort -u)" "NCCL_IB_HCA=mlx5_7" "RDZV_NCCL_POLICY (the env plugin's record of enforced entries) reaches inside"
unlike "$out" "(WARNING|INFO): " "no Apptainer warning, though the user exported APPTAINERENV_ copies"

# Binding: the same step inside and outside the image (the image declares
# NCCL_IB_HCA=mlx5_0 and UCX_NET_DEVICES=mlx5_0:1).
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
if [ -d "$fixtures" ]; then
	topo=$work/topo
	mkdir -p "$topo"
	ln -s "$fixtures/aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml" "$topo/n1.xml"
	ln -s "$fixtures/psmgmt__tests__hwloc__topo.jwb0004.xml" "$topo/n2.xml"
	e2e_stop
	e2e_start RDZV_NODE_GPUS="8 4 4"
	e2e_plugstack topology=$topo/%n.xml
	bfields="LOCAL_RANK CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER NCCL_IB_HCA UCX_NET_DEVICES"
	run_to 120 srun -N2 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto \
		env RDZV_TEST_NO_MEET=1 python3 "$RANK_PY"
	is "$rc" 0 "binding outside the image: srun exits 0"
	outside=$(ctr_reports SLURMD_NODENAME $bfields)
	outside_out=$out
	run_to 120 srun -N2 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto \
		$(ctr_exec --env RDZV_TEST_NO_MEET=1) python3 "$RANK_PY"
	is "$rc" 0 "binding inside the image: srun exits 0"
	inside=$(ctr_reports SLURMD_NODENAME $bfields)
	like "$inside" "NCCL_IB_HCA=[^ ]*(rdmap|mlx5_[0-9]:1,)" "binding's NCCL_IB_HCA replaces the image's mlx5_0"
	is "$inside" "$outside" "every task's GPUs and NICs inside the image are binding's, as outside"
	# --cleanenv keeps only what the plugin set (Slurm's own CUDA_VISIBLE_DEVICES
	# and SLURM_* go, as Apptainer means it): binding's NICs still reach inside.
	run_to 120 srun -N2 --ntasks-per-node=2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto \
		$(ctr_exec --cleanenv --env RDZV_TEST_NO_MEET=1) python3 "$RANK_PY"
	is "$rc" 0 "binding inside the image, --cleanenv: srun exits 0"
	is "$(ctr_reports RANK CUDA_DEVICE_ORDER NCCL_IB_HCA UCX_NET_DEVICES | sed 's/^RANK=[0-9]* //')" \
		"$(ctr_reports_of "$outside_out" SLURMD_NODENAME LOCAL_RANK CUDA_DEVICE_ORDER NCCL_IB_HCA UCX_NET_DEVICES | sed 's/^SLURMD_NODENAME=[^ ]* LOCAL_RANK=[^ ]* //')" \
		"--cleanenv: binding's NCCL_IB_HCA, UCX_NET_DEVICES, CUDA_DEVICE_ORDER inside are binding's"
	diag "inside: $(printf '%s\n' "$inside" | head -n 2 | tr '\n' '|')"
else
	for i in 1 2 3 4 5 6; do ok 1 "topology fixtures at $fixtures (they belong to the repository: tests/topo/fixtures)"; done
fi

# Multi-node NVLink: under a profile that requires it, the IMEX
# channels the node holds reach the task inside the image as
# NVIDIA_IMEX_CHANNELS (with the profile's NCCL_MNNVL_ENABLE), --cleanenv
# included. The node's fabric comes from the NVML double, its /dev from a
# fixture tree (identity_root=); the channel number 3 is the tree's.
double=$top_builddir/tests/nvml-double/.libs/libnvml-double.so
if [ -f "$double" ]; then
	mroot=$work/mroot
	mkdir -p "$mroot/dev/nvidia-caps-imex-channels"
	mknod "$mroot/dev/nvidia-caps-imex-channels/channel3" c 234 3
	cp "$double" "$work/libnvml.so"
	printf 'gpu GPU-0 00000000:1B:00.0 3 3f2a0c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b 7 completed 0 0x1aa 1\n' \
		> "$work/nvml-double.txt"
	printf 'description GB200 test\nrequire mnnvl\ndefault NCCL_MNNVL_ENABLE=1\n' > "$pdir/mnnvl.profile"
	chmod 644 "$pdir/mnnvl.profile"
	e2e_plugstack "profiles=$pdir" "identity_root=$mroot" "nvml_library=$work/libnvml.so"
	for opts in "" --cleanenv; do
		run_to 120 srun -N2 --ntasks-per-node=1 --rdzv=torch --nccl-profile=mnnvl \
			$(ctr_exec $opts) sh -c 'echo "IMEX=${NVIDIA_IMEX_CHANNELS-unset} MNNVL=${NCCL_MNNVL_ENABLE-unset}"'
		is "$rc" 0 "require mnnvl, apptainer exec${opts:+ $opts}: srun exits 0"
		is "$(printf '%s\n' "$out" | grep '^IMEX=' | sort -u)" "IMEX=3 MNNVL=1" \
			"require mnnvl, apptainer exec${opts:+ $opts}: every task sees NVIDIA_IMEX_CHANNELS=3 inside the image"
	done
else
	for i in 1 2 3 4; do ok 1 "the NVML double at $double (make check builds it)"; done
fi

# Slurm's OCI support: srun --container=BUNDLE, oci.conf running crun.
. "$top_srcdir/tests/containers/oci.sh"
oci_points
done_testing
