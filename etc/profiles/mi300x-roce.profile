# mi300x-roce: AMD Instinct MI300X nodes (8 GPUs joined by xGMI inside the
# node) whose RCCL traffic between nodes runs over RoCE v2 or InfiniBand
# NICs with RCCL's own verbs transport (no plugin). Make it the default of
# their partition:  partition_profile=mi300x:mi300x-roce
# Source: AMD's training launcher, AMD-AGI/Primus runner/helpers/envs/
# (common_network.sh, perf_tuning.sh, MI300X.sh).
#
# Not set here, because the plugin sets them per task:
# - NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME): the interface that reaches
#   rank 0, for RCCL's bootstrap (Primus derives the same from the node's
#   IP address by hand).
# - NCCL_IB_HCA: Primus lists /sys/class/infiniband; the plugin's binding
#   sets it (as a default) to the NICs nearest the step's GPUs
#   (doc/binding.md). To fence off storage or management NICs, enforce the
#   fabric's list here as h100-ndr.profile does.
description MI300X + RoCE/InfiniBand: RCCL over verbs (GID index 3)

# The GID of the NIC's RoCE v2 IPv4 address, usually index 3 (Primus; the
# node's show_gids lists them). NCCL picks a RoCE v2 GID itself since 2.21
# (check whether your RCCL does): keep this line only where every node's
# GID table agrees (doc/profiles.md, the seed's notes). InfiniBand ignores
# it.
default NCCL_IB_GID_INDEX=3

# Rail-optimised fabrics: each GPU's traffic stays on its own rail (Primus).
default NCCL_CROSS_NIC=0

# RCCL's MSCCL and MSCCL++ paths off, for stability (Primus); a user may
# export 1 to compare.
default RCCL_MSCCL_ENABLE=0
default RCCL_MSCCLPP_ENABLE=0

# The GPUs' DMA engines for copies (Primus perf_tuning.sh), and XNACK
# (GPU page-fault retry) off for performance (Primus MI300X.sh).
default HSA_ENABLE_SDMA=1
default HSA_XNACK=0

# Production log level.
default NCCL_DEBUG=WARN
