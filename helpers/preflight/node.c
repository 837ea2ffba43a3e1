/* SPDX-License-Identifier: GPL-2.0-or-later */
/* node.c: rdzv-preflight --node, the node check of the plugin's job prolog
 * (health_check=yes, lib/bind/health.h) and its look at the GPU drivers'
 * reports since the gate's cursor (lib/bind/gpugate.h; the cursor is left
 * where it is: the gate's own), run by hand or by NHC, with the settings
 * of the rdzv.so line of plugstack.conf. */
#include "config.h"
#include "preflight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "gpugate.h"
#include "health.h"
#include "identity.h"
#include "topo.h"
#include "util.h"

/* plugstack.conf: --plugstack, else next to $SLURM_CONF, else /etc/slurm. */
static const char *plugstack_path(const char *given, char *buf, size_t len)
{
	const char *conf = getenv("SLURM_CONF"), *slash;

	if (given)
		return given;
	if (conf && conf[0] == '/' && (slash = strrchr(conf, '/'))
	    && snprintf(buf, len, "%.*s/plugstack.conf", (int)(slash - conf), conf) < (int)len)
		return buf;
	return "/etc/slurm/plugstack.conf";
}

/* Slurm's name of this node: $SLURMD_NODENAME (NHC and prologs have it),
 * else the host name up to its first dot, as slurmd takes it. */
static const char *node_name(const char *given, char *buf, size_t len)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (given)
		return given;
	if (env && *env)
		return env;
	if (gethostname(buf, len) < 0)
		return NULL;
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
	return buf;
}

int pf_node_check(const char *plugstack, const char *name, FILE *out)
{
	char ps[1024], host[256], gres[1024], topo_path[1024], lib[1024], err[1024];
	struct rdzv_health_req req = { 0 };
	struct rdzv_topo *topo = NULL;
	struct rdzv_conf conf;
	struct rdzv_health h;
	enum rdzv_health_outcome outcome;
	struct rdzv_gpugate_req greq = { &conf, NULL, NULL, NULL, 0 };
	struct rdzv_gpugate g;

	rdzv_conf_defaults(&conf);
	plugstack = plugstack_path(plugstack, ps, sizeof(ps));
	if (rdzv_conf_read_plugstack(plugstack, &conf, err, sizeof(err)) < 0) {
		fprintf(stderr, PF_TAG ": %s\n", err);
		return 2;
	}
	if (!(name = node_name(name, host, sizeof(host)))) {
		fprintf(stderr, PF_TAG ": no node name (give --name)\n");
		return 2;
	}
	req.root = conf.identity_root;
	req.gres_conf = rdzv_gres_conf_path(conf.gres_conf, gres, sizeof(gres));
	req.node = name;
	if (conf.nvml_library[0]) {
		if (rdzv_path_node(conf.nvml_library, name, lib, sizeof(lib), err, sizeof(err)) < 0) {
			fprintf(stderr, PF_TAG ": nvml_library=: %s\n", err);
			return 2;
		}
		req.nvml_library = lib;
	}
	if (conf.topology[0]) {
		if (rdzv_path_node(conf.topology, name, topo_path, sizeof(topo_path), err,
		                   sizeof(err)) < 0
		    || rdzv_topo_load(topo_path, &topo, err, sizeof(err)) < 0) {
			fprintf(stderr, PF_TAG ": topology: %s\n", err);
			return 2;
		}
		req.topo = topo;
	}
	outcome = rdzv_health_run(&req, (long)conf.health_timeout * 1000, &h);
	greq.node = name;
	greq.gres_conf = req.gres_conf;
	greq.topo = topo;
	(void)rdzv_gpugate_run(&greq, &g);
	rdzv_topo_destroy(topo);
	/* A fault (the check's, or one the GPU drivers reported) is unhealthy;
	 * an unfinished check is not: its own word and exit status, so that
	 * NHC can tell a slow check from a fault. */
	if ((outcome != RDZV_HEALTH_OK && outcome != RDZV_HEALTH_UNFINISHED) || g.fault[0]) {
		fprintf(out, "%s: unhealthy: %s\n", name,
		        outcome != RDZV_HEALTH_OK && outcome != RDZV_HEALTH_UNFINISHED ? h.fault
		                                                                   : g.fault);
		return 1;
	}
	if (outcome == RDZV_HEALTH_UNFINISHED) {
		fprintf(out, "%s: unfinished: %s\n", name, h.fault);
		return 3;
	}
	fprintf(out, "%s: healthy in %ld ms (%d GPU files, %d NIC ports", name, h.ms, h.gpus,
	        h.nics);
	if (h.nvml_gpus >= 0)
		fprintf(out, ", NVML %d GPUs", h.nvml_gpus);
	fprintf(out, ", GPU faults: %d report%s in %ld ms)%s%s%s%s\n", g.reports,
	        g.reports == 1 ? "" : "s", g.ms, h.notes[0] ? "; " : "", h.notes,
	        g.notes[0] ? "; " : "", g.notes);
	return 0;
}
