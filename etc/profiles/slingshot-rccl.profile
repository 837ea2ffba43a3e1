# slingshot-rccl: AMD GPU nodes on HPE Slingshot 11 (HPE Cray EX with
# Cassini NICs: Frontier, LUMI-G, Setonix, El Capitan), RCCL with the
# libfabric (OFI) net plugin, aws-ofi-nccl built for ROCm (librccl-net.so,
# often called aws-ofi-rccl). Make it the default of their partition:
#   partition_profile=gpu:slingshot-rccl
# Sources: HPE's RCCL tuning guide (HewlettPackard/shs-ccl-docs,
# rccl/rccl_tuning_guide.md); OLCF's "PyTorch on Frontier"
# (olcf/olcf-user-docs, software/analytics/pytorch_frontier.rst); fi_cxi(7).
#
# NCCL_SOCKET_IFNAME is deliberately not set: the plugin gives every task
# NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) naming the interface that
# reaches rank 0 (an hsn or hsi interface here), which is what RCCL's
# bootstrap needs; the hsn0,hsn1,hsn2,hsn3 list sites write by hand would
# replace that with a guess, and the data path does not use it (the OFI
# plugin opens the CXI domains itself).
description Slingshot 11 + RCCL over the OFI plugin (HPE and OLCF settings)

# Where the site installed the plugin. Without it RCCL searches
# LD_LIBRARY_PATH for librccl-net.so (some versions for libnccl-net.so) and
# quietly falls back to TCP sockets when it finds neither.
#default NCCL_NET_PLUGIN=/opt/aws-ofi-rccl/lib/librccl-net.so

# Only steps on several nodes insist on the plugin: RCCL then fails instead
# of falling back to sockets. On one node the plugin does not initialise
# (OLCF: "the network is not configured for single node jobs"), so there
# the line does not apply and RCCL uses xGMI and shared memory as usual.
# The value is the name the plugin reports ("Loaded net plugin NAME" under
# NCCL_DEBUG=INFO): OFI for aws-ofi-nccl 1.19 (OLCF), "AWS Libfabric" for
# older builds (HPE). NCCL lists NCCL_NET under "Debugging", so the
# checker warns; forcing it is the point here.
multinode default NCCL_NET=OFI

# GPU memory registered with the NIC for RDMA (HPE: "required to enable
# RDMA between GPUs"), and rings free to cross NICs (HPE, OLCF).
default NCCL_NET_GDR_LEVEL=PHB
default NCCL_CROSS_NIC=1

# Peer access through the large PCIe BAR (HPE, OLCF).
default HSA_FORCE_FINE_GRAIN_PCIE=1

# libfabric's registration cache monitor: kdreg2 (Frontier's default, a
# kernel module) or userfaultfd; never memhooks, which deadlocks the
# plugin (OLCF; the checker warns about it).
default FI_MR_CACHE_MONITOR=kdreg2

# The provider must not register its host buffers with the GPU: ROCm
# allocation calls from inside libfabric can deadlock RCCL (HPE). Enforced:
# a job that inherited 0 would hang rather than run slower.
enforce FI_CXI_DISABLE_HOST_REGISTER=1

# Sizes for large jobs (HPE, OLCF).
default FI_CXI_DEFAULT_CQ_SIZE=131072
default FI_CXI_DEFAULT_TX_SIZE=2048
# Hardware matching that moves to software when NIC resources run out.
default FI_CXI_RX_MATCH_MODE=hybrid

# The alternative rendezvous protocol, better for RCCL at scale (OLCF: it
# may slow MPI). It needs the CXI driver's rdzv_get_en at 0, which Slurm's
# switch/hpe_slingshot does per job only when the job asks for it:
#   sbatch --network=disable_rdzv_get   (or salloc/srun)
# The checker prints that note on this line. With it go the eager and Get
# thresholds at 0 (HPE, OLCF).
default FI_CXI_RDZV_PROTO=alt_read
default FI_CXI_RDZV_EAGER_SIZE=0
default FI_CXI_RDZV_THRESHOLD=0
default FI_CXI_RDZV_GET_MIN=0
