# debug: for chasing a hang or a slow collective, chosen explicitly with
# --nccl-profile=debug. The site default's enforce/unset entries still
# apply on top (users cannot opt out of them by choosing this).
description Verbose NCCL logs, one log file per host and process
include site-base
default NCCL_DEBUG=INFO
default NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV
default NCCL_DEBUG_FILE=nccl.%h.%p.log
