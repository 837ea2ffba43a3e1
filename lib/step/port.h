/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* port.h: choosing the rendezvous port.
 *
 * Precedence (see rdzv_port_choose): the user's --rdzv-port, then Slurm's
 * reserved ports for the step (SLURM_STEP_RESV_PORTS, present when slurm.conf
 * sets MpiParams=ports=LO-HI: slurmctld hands each running step distinct
 * ports, so concurrent steps never collide), then a port derived from job and
 * step ids inside the admin's range, skipping the kernel's ephemeral range
 * (ip_local_port_range), where an outgoing connection may already hold it.
 * The derived port is decided once per step, in srun (the local context), and
 * handed to the nodes in the step's environment (master.h: the step plan), so
 * nodes with different ip_local_port_range files never disagree. It spreads
 * consecutive jobs over the whole range (rdzv_port_index): collisions between
 * running steps are those of a good hash, and none among the first steps of
 * ~150 consecutive jobs in the default range (tests/unit/test-port.c measures
 * the rate over 100,000 job ids x 8 steps against the ideal). */
#ifndef RDZV_PORT_H
#define RDZV_PORT_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_PORT_MIN 1024
#define RDZV_PORT_MAX 65535
#define RDZV_DEFAULT_PORT_LO 29500 /* torchrun's default port sits inside */
#define RDZV_DEFAULT_PORT_HI 32767 /* Linux's ephemeral range starts at 32768 */

struct rdzv_port_range {
	uint16_t lo, hi;
};

/* "LO-HI" with RDZV_PORT_MIN <= LO <= HI <= RDZV_PORT_MAX. */
int rdzv_port_range_parse(const char *s, struct rdzv_port_range *r,
                          char *err, size_t errlen);

/* A single port RDZV_PORT_MIN..RDZV_PORT_MAX. */
int rdzv_port_parse(const char *s, uint16_t *port, char *err, size_t errlen);

/* First port of a reserved-ports string ("12000-12003", "12000,12005",
 * "12000"). Returns 0 or -1. */
int rdzv_resv_ports_first(const char *s, uint16_t *port, char *err, size_t errlen);

/* Read "LO HI" from an ip_local_port_range file. Returns 0 or -1. */
int rdzv_ephemeral_range_read(const char *path, struct rdzv_port_range *r);

/* The index 0..usable-1 of (job, step) among usable ports: job id times a
 * stride coprime to usable (near usable/phi), plus the step id, modulo
 * usable. 0 when usable is 0. */
uint64_t rdzv_port_index(uint32_t job_id, uint32_t step_id, uint64_t usable);

/* Port derived from ids: a member of range not in ephemeral (which may be
 * NULL). Returns 0, or -1 when every port of range is ephemeral. */
int rdzv_port_derive(uint32_t job_id, uint32_t step_id,
                     const struct rdzv_port_range *range,
                     const struct rdzv_port_range *ephemeral, uint16_t *port,
                     char *err, size_t errlen);

enum rdzv_port_source {
	RDZV_PORT_FROM_OPTION,
	RDZV_PORT_FROM_RESV,
	RDZV_PORT_FROM_DERIVED,
};

const char *rdzv_port_source_name(enum rdzv_port_source s);

/* Apply the precedence above. option_port 0 means "not given"; resv may be
 * NULL or empty. */
int rdzv_port_choose(uint16_t option_port, const char *resv, uint32_t job_id,
                     uint32_t step_id, const struct rdzv_port_range *range,
                     const struct rdzv_port_range *ephemeral, uint16_t *port,
                     enum rdzv_port_source *source, char *err, size_t errlen);

#endif
