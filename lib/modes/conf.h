/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* conf.h: plugstack.conf arguments and the users' option values.
 *
 * plugstack.conf:  required /usr/lib/slurm/rdzv.so mode=off port_range=29500-32767
 * Arguments are key=value; an unknown key or a bad value is refused with the
 * argument named. Defaults live in rdzv_conf_defaults(). */
#ifndef RDZV_CONF_H
#define RDZV_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "domain.h"
#include "master.h"
#include "modes.h"
#include "port.h"

#define RDZV_PATH_MAX 1024
#define RDZV_NAME_MAX 64

struct rdzv_conf {
	const struct rdzv_mode *mode;          /* site default mode (mode=) */
	struct rdzv_port_range port_range;     /* port_range= */
	enum rdzv_addr_form addr_form;         /* master_addr=name|ip */
	int env_fallback;                      /* env=yes|no: honour RDZV_* variables */
	int kill_on_bad_exit;                  /* kill_on_bad_exit=yes|no: a failed rank stops the step */
	char bind[RDZV_NAME_MAX];              /* bind=: site default binding mode */
	char topology[RDZV_PATH_MAX];          /* topology=PATH, %n = node name */
	char profiles[RDZV_PATH_MAX];          /* profiles=DIR */
	char profile[RDZV_NAME_MAX];           /* profile=: site default profile */
	char partition_profiles[RDZV_PATH_MAX];/* partition_profile=PART:NAME[,...] */
	int strict;                            /* strict=yes: binding failure fails */
	char topology_cache[RDZV_PATH_MAX];    /* topology_cache=DIR|no: root's model cache */
	char gres_conf[RDZV_PATH_MAX];         /* gres_conf=PATH: for GPU identity */
	char identity_root[RDZV_PATH_MAX];     /* identity_root=DIR: prefix of /proc, /sys, /dev */
	int container_env;                     /* container_env=yes|no: APPTAINERENV_* copies */
	int debug_hang;                        /* debug=hang|off: arm rdzv-hang by default */
	char hang_python[RDZV_PATH_MAX];       /* hang_python=DIR: our sitecustomize.py */
	uint32_t collective_timeout;           /* collective_timeout=: seconds, 0 PyTorch's */
	uint32_t collective_grace;             /* collective_grace=: seconds, 0 off */
	int collective_grace_set;              /* collective_grace= was written */
	char hang_helper[RDZV_PATH_MAX];       /* hang_helper=PATH: rdzv-hang, run by srun */
	enum rdzv_nvlink_domain nvlink_domain; /* nvlink_domain=node|block|nvml */
	char nvml_library[RDZV_PATH_MAX];      /* nvml_library=PATH (%n = node name): NVML to
	                                          dlopen; "" the soname */
	char record_dir[RDZV_PATH_MAX];        /* record_dir=DIR: each node's step record
	                                          (record.h); "" none */
	int record_syslog;                     /* record_syslog=FACILITY: syslog's LOG_*
	                                          facility for the record; -1 none */
	char metrics_dir[RDZV_PATH_MAX];       /* metrics_dir=DIR: node_exporter's textfile
	                                          directory (metrics.h); "" none */
	char dcgm_job_map_dir[RDZV_PATH_MAX];  /* dcgm_job_map_dir=DIR (%n = node name):
	                                          DCGM-exporter's job-mapping files
	                                          (jobmap.h); "" none */
	int health_check;                      /* health_check=yes: the node check in
	                                          the job's prolog (health.h) */
	uint32_t health_timeout;               /* health_timeout=: seconds the check may
	                                          take */
	int health_timeout_drain;              /* health_timeout_action=drain (1) | none */
	char kmsg[RDZV_PATH_MAX];              /* kmsg=PATH (%n = node name): the kernel
	                                          log read for GPU faults (gpufault.h);
	                                          "" /dev/kmsg */
	char xid_table[RDZV_PATH_MAX];         /* xid_table=PATH: the Xid classes (xid.h);
	                                          "" the installed table */
	char gpu_state_dir[RDZV_PATH_MAX];     /* gpu_state_dir=DIR (%n = node name): root's
	                                          cursor of the GPU-fault gate */
};

/* health_timeout=: how long the node check (health.h) may run before it is
 * its own outcome, "unfinished": N, Ns or Nm, 1 s to 10 min, or "default".
 * The default is long enough for NVML's first initialisation on an 8-GPU
 * node without persistence mode: NVIDIA's Driver Persistence guide gives
 * "order of 1-3 second" per GPU (ECC scrubbing), 24 s for eight, and a
 * loaded node is slower. 0 or -1. */
#define RDZV_HEALTH_TIMEOUT_DEFAULT 60u
#define RDZV_HEALTH_TIMEOUT_MAX 600u
#define RDZV_HEALTH_TIMEOUT_VALID "valid values are a duration of 1s to 10m (N, Ns, Nm) or default (60s)"
int rdzv_health_timeout_parse(const char *val, uint32_t *secs);
/* health_timeout_action=: what an unfinished check does to the node: drain
 * (the default: drained with its own reason, the prolog fails) or none
 * (said in slurmd's log, the job runs). 1, 0, or -1. */
#define RDZV_HEALTH_ACTION_VALID "valid values are drain, none"
int rdzv_health_action_parse(const char *val);

/* record_syslog=: the facilities a site may name. Returns the LOG_* value,
 * or -1 for "no" ("none", "off"), -2 for anything else. */
#define RDZV_SYSLOG_VALID "valid values are daemon, user, local0 to local7, no"
int rdzv_syslog_facility(const char *name);

/* Where srun finds rdzv-hang to name the culprit of a collective timeout
 * (configure's $(bindir)/rdzv-hang unless hang_helper= says otherwise). */
#ifndef RDZV_HANG_HELPER_DEFAULT
#define RDZV_HANG_HELPER_DEFAULT "/usr/bin/rdzv-hang"
#endif

/* collective_timeout= / --rdzv-collective-timeout=: how long a collective
 * of torch.distributed may wait by default: N, Ns, Nm or Nh,
 * 1 s to 7 days; "default" (or "off") leaves PyTorch's own. 0 or -1. */
#define RDZV_TIMEOUT_MAX (7u * 24 * 3600)
#define RDZV_TIMEOUT_VALID "valid values are a duration of 1s to 7 days (N, Ns, Nm, Nh) or default"
int rdzv_timeout_parse(const char *val, uint32_t *secs);

/* collective_grace= / --rdzv-collective-grace=: once a rank has reported a
 * failed or timed-out collective, how long the step may go on before srun
 * stops it (ranks wedged in their cleanup: a hung destroy_process_group, a
 * barrier in a finally block). A duration as above, "default" (30 s) or
 * "off" (0: never stopped for it: a program that recovers from a failed
 * collective by itself). 0 or -1. */
#define RDZV_GRACE_DEFAULT 30u
#define RDZV_GRACE_VALID "valid values are a duration of 1s to 7 days (N, Ns, Nm, Nh), off or default (30s)"
int rdzv_grace_parse(const char *val, uint32_t *secs);

/* Where the installed sitecustomize.py of debug=hang lives (configure's
 * $(pkgdatadir)/python unless hang_python= says otherwise). */
#ifndef RDZV_HANG_PYTHON_DEFAULT
#define RDZV_HANG_PYTHON_DEFAULT "/usr/share/spank-rdzv/python"
#endif

/* Where the node model of topology= is cached unless topology_cache= says
 * otherwise (tmpfs, root's, gone at reboot). */
#define RDZV_TOPOLOGY_CACHE_DEFAULT "/run/spank-rdzv"

void rdzv_conf_defaults(struct rdzv_conf *c);

/* Parse plugstack arguments over the defaults. Returns 0 or -1 with the
 * offending argument named in err. */
int rdzv_conf_parse(int ac, char **av, struct rdzv_conf *c, char *err, size_t errlen);

/* yes/no/1/0/true/false/on/off. Returns 0/1, or -1. */
int rdzv_parse_bool(const char *s);

/* Parse the arguments of the first "... rdzv.so ARGS" line of the
 * plugstack.conf at path into conf (as slurm_spank_init would). 0, or -1
 * with the file, or the argument refused, in err. */
int rdzv_conf_read_plugstack(const char *path, struct rdzv_conf *conf, char *err, size_t errlen);

/* What the user chose (options, or the RDZV_* environment fallback).
 * Unset fields mean "not given". Option callbacks run twice (environment,
 * then command line), so every setter is idempotent: last value wins. */
struct rdzv_opts {
	const struct rdzv_mode *mode; /* NULL: not given */
	uint16_t port;                /* 0: not given */
	int verbose;                  /* -1: not given */
	char bind[RDZV_NAME_MAX];     /* "": not given */
	char profile[RDZV_NAME_MAX];  /* "": not given */
	int debug_hang;               /* --rdzv-debug=hang|off; -1: not given */
	int64_t collective_timeout;   /* --rdzv-collective-timeout= seconds (0 PyTorch's); -1: not given */
	int64_t collective_grace;     /* --rdzv-collective-grace= seconds (0 off); -1: not given */
};

void rdzv_opts_init(struct rdzv_opts *o);

/* The step's mode: the user's (option, else RDZV_MODE) when given, else the
 * site's mode= (NULL: none). */
const struct rdzv_mode *rdzv_mode_resolve(const struct rdzv_opts *o, const struct rdzv_conf *c);

/* The step's binding mode: the user's --rdzv-bind when given, else the
 * site's bind=. */
const char *rdzv_bind_resolve(const struct rdzv_opts *o, const struct rdzv_conf *c);

/* Option values. Each returns 0 or -1 with a message naming the option, the
 * value and the valid values. */
int rdzv_opt_mode(struct rdzv_opts *o, const char *val, char *err, size_t errlen);
int rdzv_opt_port(struct rdzv_opts *o, const char *val, char *err, size_t errlen);
/* --rdzv-debug=hang|off. */
int rdzv_opt_debug(struct rdzv_opts *o, const char *val, char *err, size_t errlen);
/* --rdzv-collective-timeout=DURATION|default. */
int rdzv_opt_collective_timeout(struct rdzv_opts *o, const char *val, char *err, size_t errlen);
/* --rdzv-collective-grace=DURATION|off|default. */
int rdzv_opt_collective_grace(struct rdzv_opts *o, const char *val, char *err, size_t errlen);
/* "hang" -> 1, "off"/"none" -> 0, else -1. */
int rdzv_debug_parse(const char *val);

/* Environment fallback for wrappers that cannot add flags: RDZV_MODE,
 * RDZV_PORT, RDZV_VERBOSE fill what the options left unset. get is getenv-
 * like (returns NULL when unset). Returns 0 or -1 naming the variable. */
int rdzv_opts_from_env(struct rdzv_opts *o, const char *(*get)(void *ctx, const char *name),
                       void *ctx, char *err, size_t errlen);

#endif
