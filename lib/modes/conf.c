/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
#include "config.h"
#include "conf.h"
#include "util.h"

#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <syslog.h>

void rdzv_conf_defaults(struct rdzv_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = rdzv_mode_find("off");
	c->port_range.lo = RDZV_DEFAULT_PORT_LO;
	c->port_range.hi = RDZV_DEFAULT_PORT_HI;
	c->addr_form = RDZV_ADDR_NAME;
	c->env_fallback = 1;
	c->kill_on_bad_exit = 1;
	c->collective_grace = RDZV_GRACE_DEFAULT;
	c->container_env = 1;
	snprintf(c->bind, sizeof(c->bind), "none");
	snprintf(c->topology_cache, sizeof(c->topology_cache), "%s", RDZV_TOPOLOGY_CACHE_DEFAULT);
	snprintf(c->hang_python, sizeof(c->hang_python), "%s", RDZV_HANG_PYTHON_DEFAULT);
	c->record_syslog = -1;
	c->health_timeout = RDZV_HEALTH_TIMEOUT_DEFAULT;
	c->health_timeout_drain = 1;
	snprintf(c->hang_helper, sizeof(c->hang_helper), "%s", RDZV_HANG_HELPER_DEFAULT);
}

int rdzv_timeout_parse(const char *val, uint32_t *secs)
{
	const char *p = val;
	uint64_t n = 0, unit = 1;

	if (!val || !*val)
		return -1;
	if (strcmp(val, "default") == 0 || strcmp(val, "off") == 0) {
		*secs = 0;
		return 0;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > RDZV_TIMEOUT_MAX)
			return -1;
	}
	if (p == val)
		return -1;
	if (*p == 's' || *p == 'm' || *p == 'h') {
		unit = *p == 's' ? 1 : *p == 'm' ? 60 : 3600;
		p++;
	}
	if (*p || n == 0 || n * unit > RDZV_TIMEOUT_MAX)
		return -1;
	*secs = (uint32_t)(n * unit);
	return 0;
}

int rdzv_grace_parse(const char *val, uint32_t *secs)
{
	if (val && strcmp(val, "off") == 0) {
		*secs = 0;
		return 0;
	}
	if (val && strcmp(val, "default") == 0) {
		*secs = RDZV_GRACE_DEFAULT;
		return 0;
	}
	return rdzv_timeout_parse(val, secs);
}

int rdzv_health_timeout_parse(const char *val, uint32_t *secs)
{
	uint32_t t;

	if (val && strcmp(val, "default") == 0) {
		*secs = RDZV_HEALTH_TIMEOUT_DEFAULT;
		return 0;
	}
	/* The collective timeout's durations, without its "off": an
	 * unbounded check is what this bound is for. */
	if (!val || strcmp(val, "off") == 0 || rdzv_timeout_parse(val, &t) < 0
	    || t > RDZV_HEALTH_TIMEOUT_MAX)
		return -1;
	*secs = t;
	return 0;
}

int rdzv_health_action_parse(const char *val)
{
	if (val && strcmp(val, "drain") == 0)
		return 1;
	if (val && strcmp(val, "none") == 0)
		return 0;
	return -1;
}

int rdzv_debug_parse(const char *val)
{
	if (val && strcmp(val, "hang") == 0)
		return 1;
	if (val && (strcmp(val, "off") == 0 || strcmp(val, "none") == 0))
		return 0;
	return -1;
}

int rdzv_parse_bool(const char *s)
{
	static const char *const yes[] = { "yes", "1", "true", "on", NULL };
	static const char *const no[] = { "no", "0", "false", "off", NULL };
	int i;

	for (i = 0; s && yes[i]; i++)
		if (strcmp(s, yes[i]) == 0)
			return 1;
	for (i = 0; s && no[i]; i++)
		if (strcmp(s, no[i]) == 0)
			return 0;
	return -1;
}

int rdzv_syslog_facility(const char *name)
{
	static const struct {
		const char *name;
		int facility;
	} f[] = { { "daemon", LOG_DAEMON }, { "user", LOG_USER }, { "local0", LOG_LOCAL0 },
		  { "local1", LOG_LOCAL1 }, { "local2", LOG_LOCAL2 }, { "local3", LOG_LOCAL3 },
		  { "local4", LOG_LOCAL4 }, { "local5", LOG_LOCAL5 }, { "local6", LOG_LOCAL6 },
		  { "local7", LOG_LOCAL7 } };
	size_t i;

	if (!name)
		return -2;
	if (strcmp(name, "no") == 0 || strcmp(name, "none") == 0 || strcmp(name, "off") == 0)
		return -1;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (strcmp(name, f[i].name) == 0)
			return f[i].facility;
	return -2;
}

static int set_string(char *dst, size_t dstlen, const char *key, const char *val,
                      int need_abs, char *err, size_t errlen)
{
	if (!*val)
		return rdzv_err(err, errlen, "plugstack argument %s= has an empty value", key);
	if (need_abs && val[0] != '/')
		return rdzv_err(err, errlen, "plugstack argument %s=%.64s: must be an absolute path",
		                key, val);
	if (rdzv_strlcpy(dst, val, dstlen) < 0)
		return rdzv_err(err, errlen, "plugstack argument %s=: value longer than %zu bytes",
		                key, dstlen - 1);
	return 0;
}

/* The arguments kept as the string given: a path (absolute) or a name. */
#define CONF_STRING(key, field, abs) { key, offsetof(struct rdzv_conf, field), \
	                                    sizeof(((struct rdzv_conf *)0)->field), abs }
static const struct {
	const char *key;
	size_t off, len;
	int need_abs;
} conf_strings[] = {
	CONF_STRING("nvml_library", nvml_library, 1),
	CONF_STRING("hang_helper", hang_helper, 1),
	CONF_STRING("record_dir", record_dir, 1),
	CONF_STRING("metrics_dir", metrics_dir, 1),
	CONF_STRING("dcgm_job_map_dir", dcgm_job_map_dir, 1),
	CONF_STRING("kmsg", kmsg, 1),
	CONF_STRING("xid_table", xid_table, 1),
	CONF_STRING("gpu_state_dir", gpu_state_dir, 1),
	CONF_STRING("hang_python", hang_python, 1),
	CONF_STRING("bind", bind, 0),
	CONF_STRING("topology", topology, 1),
	CONF_STRING("gres_conf", gres_conf, 1),
	CONF_STRING("identity_root", identity_root, 1),
	CONF_STRING("profiles", profiles, 1),
	CONF_STRING("profile", profile, 0),
	CONF_STRING("partition_profile", partition_profiles, 0),
};

/* key=val when key is one of conf_strings: 1 set, -1 refused (err), 0 not
 * one of them. */
static int set_conf_string(struct rdzv_conf *c, const char *key, const char *val, char *err,
                           size_t errlen)
{
	size_t i;

	for (i = 0; i < sizeof(conf_strings) / sizeof(conf_strings[0]); i++)
		if (strcmp(key, conf_strings[i].key) == 0)
			return set_string((char *)c + conf_strings[i].off, conf_strings[i].len, key, val,
			                  conf_strings[i].need_abs, err, errlen) < 0 ? -1 : 1;
	return 0;
}

int rdzv_conf_parse(int ac, char **av, struct rdzv_conf *c, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < ac; i++) {
		const char *arg = av[i], *eq = strchr(arg, '=');
		char key[32];
		const char *val;
		size_t klen;
		int b;

		if (!eq || eq == arg)
			return rdzv_err(err, errlen, "plugstack argument '%.64s' is not key=value", arg);
		/* No known key is this long: name it as unknown, not as malformed. */
		if ((klen = (size_t)(eq - arg)) >= sizeof(key))
			return rdzv_err(err, errlen, "unknown plugstack argument '%.*s...'",
			                (int)sizeof(key), arg);
		memcpy(key, arg, klen);
		key[klen] = '\0';
		val = eq + 1;
		if ((b = set_conf_string(c, key, val, err, errlen)) != 0) {
			if (b < 0)
				return -1;
		} else if (strcmp(key, "mode") == 0) {
			/* Through a local: a refused value must not leave c->mode NULL. */
			const struct rdzv_mode *m = rdzv_mode_find(val);

			if (!m)
				return rdzv_err(err, errlen, "plugstack argument mode=%.32s: valid modes are %s",
				                val, rdzv_mode_names());
			c->mode = m;
		} else if (strcmp(key, "kill_on_bad_exit") == 0) {
			/* no: the plugin does not make a failed rank stop the
			 * step; slurm.conf's KillOnBadExit decides, as without
			 * the plugin. */
			if ((b = rdzv_parse_bool(val)) < 0)
				return rdzv_err(err, errlen,
				                "plugstack argument kill_on_bad_exit=%.32s: valid values are yes, no",
				                val);
			c->kill_on_bad_exit = b;
		} else if (strcmp(key, "port_range") == 0) {
			if (rdzv_port_range_parse(val, &c->port_range, err, errlen) < 0)
				return rdzv_err(err, errlen,
				                "plugstack argument port_range=%.32s: expected LO-HI with %d <= LO <= HI <= %d",
				                val, RDZV_PORT_MIN, RDZV_PORT_MAX);
		} else if (strcmp(key, "master_addr") == 0) {
			if (strcmp(val, "name") == 0)
				c->addr_form = RDZV_ADDR_NAME;
			else if (strcmp(val, "ip") == 0)
				c->addr_form = RDZV_ADDR_IP;
			else
				return rdzv_err(err, errlen,
				                "plugstack argument master_addr=%.32s: valid values are name, ip", val);
		} else if (strcmp(key, "env") == 0 || strcmp(key, "strict") == 0
		           || strcmp(key, "container_env") == 0) {
			if ((b = rdzv_parse_bool(val)) < 0)
				return rdzv_err(err, errlen,
				                "plugstack argument %s=%.32s: valid values are yes, no", key, val);
			if (key[0] == 'e')
				c->env_fallback = b;
			else if (key[0] == 's')
				c->strict = b;
			else
				c->container_env = b;
		} else if (strcmp(key, "debug") == 0) {
			if ((b = rdzv_debug_parse(val)) < 0)
				return rdzv_err(err, errlen,
				                "plugstack argument debug=%.32s: valid values are hang, off", val);
			c->debug_hang = b;
		} else if (strcmp(key, "collective_timeout") == 0) {
			if (rdzv_timeout_parse(val, &c->collective_timeout) < 0)
				return rdzv_err(err, errlen,
				                "plugstack argument collective_timeout=%.32s: " RDZV_TIMEOUT_VALID,
				                val);
		} else if (strcmp(key, "collective_grace") == 0) {
			if (rdzv_grace_parse(val, &c->collective_grace) < 0)
				return rdzv_err(err, errlen,
				                "plugstack argument collective_grace=%.32s: " RDZV_GRACE_VALID,
				                val);
			c->collective_grace_set = 1;
		} else if (strcmp(key, "nvlink_domain") == 0) {
			if (rdzv_nvlink_domain_parse(val, &c->nvlink_domain) < 0)
				return rdzv_err(err, errlen, "plugstack argument nvlink_domain=%.32s: "
				                RDZV_NVLINK_DOMAIN_VALID, val);
		} else if (strcmp(key, "health_check") == 0) {
			if ((b = rdzv_parse_bool(val)) < 0)
				return rdzv_err(err, errlen, "plugstack argument health_check=%.32s: valid "
				                "values are yes, no", val);
			c->health_check = b;
		} else if (strcmp(key, "health_timeout") == 0) {
			if (rdzv_health_timeout_parse(val, &c->health_timeout) < 0)
				return rdzv_err(err, errlen, "plugstack argument health_timeout=%.32s: "
				                RDZV_HEALTH_TIMEOUT_VALID, val);
		} else if (strcmp(key, "health_timeout_action") == 0) {
			if ((b = rdzv_health_action_parse(val)) < 0)
				return rdzv_err(err, errlen, "plugstack argument health_timeout_action=%.32s: "
				                RDZV_HEALTH_ACTION_VALID, val);
			c->health_timeout_drain = b;
		} else if (strcmp(key, "record_syslog") == 0) {
			if ((b = rdzv_syslog_facility(val)) < -1)
				return rdzv_err(err, errlen, "plugstack argument record_syslog=%.32s: "
				                RDZV_SYSLOG_VALID, val);
			c->record_syslog = b;
		} else if (strcmp(key, "topology_cache") == 0) {
			/* "no": no cache; else a directory of root's. */
			if (strcmp(val, "no") == 0)
				c->topology_cache[0] = '\0';
			else if (set_string(c->topology_cache, sizeof(c->topology_cache), key, val, 1,
			                    err, errlen) < 0)
				return -1;
		} else {
			return rdzv_err(err, errlen,
			                "unknown plugstack argument '%.32s' (known: mode, port_range, "
			                "master_addr, env, bind, topology, topology_cache, gres_conf, "
			                "identity_root, strict, profiles, profile, partition_profile, kill_on_bad_exit, "
			                "container_env, debug, collective_timeout, collective_grace, hang_python, hang_helper, nvlink_domain, nvml_library, "
			                "record_dir, record_syslog, metrics_dir, dcgm_job_map_dir, health_check, "
			                "health_timeout, health_timeout_action, kmsg, xid_table, gpu_state_dir)", key);
		}
	}
	return 0;
}

void rdzv_opts_init(struct rdzv_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->verbose = -1;
	o->debug_hang = -1;
	o->collective_timeout = -1;
	o->collective_grace = -1;
}

const struct rdzv_mode *rdzv_mode_resolve(const struct rdzv_opts *o, const struct rdzv_conf *c)
{
	return o->mode ? o->mode : c->mode;
}

const char *rdzv_bind_resolve(const struct rdzv_opts *o, const struct rdzv_conf *c)
{
	return o->bind[0] ? o->bind : c->bind;
}

int rdzv_opt_debug(struct rdzv_opts *o, const char *val, char *err, size_t errlen)
{
	int b = rdzv_debug_parse(val);

	if (b < 0)
		return rdzv_err(err, errlen, "--rdzv-debug=%.32s: valid values are hang, off",
		                val ? val : "");
	o->debug_hang = b;
	return 0;
}

int rdzv_opt_collective_timeout(struct rdzv_opts *o, const char *val, char *err, size_t errlen)
{
	uint32_t t;

	if (rdzv_timeout_parse(val, &t) < 0)
		return rdzv_err(err, errlen, "--rdzv-collective-timeout=%.32s: " RDZV_TIMEOUT_VALID,
		                val ? val : "");
	o->collective_timeout = (int64_t)t;
	return 0;
}

int rdzv_opt_collective_grace(struct rdzv_opts *o, const char *val, char *err, size_t errlen)
{
	uint32_t t;

	if (rdzv_grace_parse(val, &t) < 0)
		return rdzv_err(err, errlen, "--rdzv-collective-grace=%.32s: " RDZV_GRACE_VALID,
		                val ? val : "");
	o->collective_grace = (int64_t)t;
	return 0;
}

int rdzv_opt_mode(struct rdzv_opts *o, const char *val, char *err, size_t errlen)
{
	const struct rdzv_mode *m = rdzv_mode_find(val);

	if (!m)
		return rdzv_err(err, errlen, "invalid --rdzv value '%.32s': valid modes are %s",
		                val ? val : "", rdzv_mode_names());
	o->mode = m;
	return 0;
}

int rdzv_opt_port(struct rdzv_opts *o, const char *val, char *err, size_t errlen)
{
	uint16_t p;

	if (rdzv_port_parse(val, &p, NULL, 0) < 0)
		return rdzv_err(err, errlen, "invalid --rdzv-port value '%.32s': expected a port %d-%d",
		                val ? val : "", RDZV_PORT_MIN, RDZV_PORT_MAX);
	o->port = p;
	return 0;
}

int rdzv_opts_from_env(struct rdzv_opts *o, const char *(*get)(void *ctx, const char *name),
                       void *ctx, char *err, size_t errlen)
{
	const char *v;

	if (!o->mode && (v = get(ctx, "RDZV_MODE")) && *v) {
		if (!(o->mode = rdzv_mode_find(v)))
			return rdzv_err(err, errlen, "invalid RDZV_MODE '%.32s': valid modes are %s",
			                v, rdzv_mode_names());
	}
	if (!o->port && (v = get(ctx, "RDZV_PORT")) && *v) {
		if (rdzv_port_parse(v, &o->port, NULL, 0) < 0)
			return rdzv_err(err, errlen, "invalid RDZV_PORT '%.32s': expected a port %d-%d",
			                v, RDZV_PORT_MIN, RDZV_PORT_MAX);
	}
	if (o->verbose < 0 && (v = get(ctx, "RDZV_VERBOSE")) && *v) {
		int b = rdzv_parse_bool(v);

		if (b < 0)
			return rdzv_err(err, errlen, "invalid RDZV_VERBOSE '%.32s': valid values are yes, no", v);
		o->verbose = b;
	}
	return 0;
}

/* Used by the helpers (rdzv-profile, rdzv-preflight --node). */
int rdzv_conf_read_plugstack(const char *path, struct rdzv_conf *conf, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[4096], why[512];
	int found = 0, rv = -1;
	long lineno = 0;

	if (!f)
		return rdzv_err(err, errlen, "%s: cannot open", path);
	while (!found && fgets(line, sizeof(line), f)) {
		char *av[64], *save = NULL, *tok;
		int ac = 0;

		lineno++;
		for (tok = strtok_r(line, " \t\r\n", &save); tok && ac < 64;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			av[ac++] = tok;
		if (ac < 2 || av[0][0] == '#')
			continue;
		if (strlen(av[1]) < 7 || strcmp(av[1] + strlen(av[1]) - 7, "rdzv.so") != 0)
			continue;
		found = 1;
		if (rdzv_conf_parse(ac - 2, av + 2, conf, why, sizeof(why)) < 0) {
			rdzv_err(err, errlen, "%s:%ld: %s", path, lineno, why);
			goto fail;
		}
	}
	if (!found) {
		rdzv_err(err, errlen, "%s: no rdzv.so line", path);
		goto fail;
	}
	rv = 0;
fail:
	fclose(f);
	return rv;
}
