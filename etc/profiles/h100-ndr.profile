# h100-ndr: H100 nodes with NDR InfiniBand and NVLink switches. Make it the
# default of their partition:  partition_profile=h100:h100-ndr
description H100 + NDR InfiniBand (8 rails)
include site-base

# InfiniBand HCAs, one per GPU. Replaces site-base's RoCE list; the entry
# stays enforced because this line enforces it too.
enforce NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1

# Old scripts turned NVLink SHARP off while it was new; NCCL enables it by
# itself where the NVSwitches support it, so drop any such switch.
unset NCCL_NVLS_ENABLE

# Production log level.
default NCCL_DEBUG=WARN
