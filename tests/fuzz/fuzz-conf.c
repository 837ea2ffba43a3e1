/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-conf.c: what admins and users hand the plugin as text.
 * Input lines: the first byte picks the surface, the rest are its strings.
 *   'a' plugstack.conf arguments (one per line) -> rdzv_conf_parse
 *   'o' option values in the order Slurm calls the callbacks (line = first
 *       char 'm' for --rdzv, 'p' for --rdzv-port, then the value)
 *   'e' RDZV_MODE, RDZV_PORT, RDZV_VERBOSE (lines 1..3) -> rdzv_opts_from_env
 * Invariants: an accepted configuration is inside its documented bounds
 * (strings terminated, paths absolute, port range ordered); option setters
 * are idempotent and the last accepted value wins (Slurm runs each callback
 * twice); a refused value leaves the earlier one in place; the environment
 * fallback never overrides what an option set. */
#include "config.h"
#include "fuzz.h"
#include "conf.h"

static void fuzz_args(struct fuzz_pieces *p)
{
	struct rdzv_conf c;
	char err[256];

	rdzv_conf_defaults(&c);
	if (rdzv_conf_parse(p->n - 1, p->v + 1, &c, err, sizeof(err)) < 0) {
		FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0');
		return;
	}
	FUZZ_ASSERT(c.mode != NULL);
	FUZZ_ASSERT(c.port_range.lo >= RDZV_PORT_MIN && c.port_range.lo <= c.port_range.hi);
	FUZZ_ASSERT(c.addr_form == RDZV_ADDR_NAME || c.addr_form == RDZV_ADDR_IP);
	FUZZ_ASSERT(c.env_fallback == 0 || c.env_fallback == 1);
	FUZZ_ASSERT(c.container_env == 0 || c.container_env == 1);
	FUZZ_ASSERT(memchr(c.bind, '\0', sizeof(c.bind)) != NULL);
	FUZZ_ASSERT(memchr(c.topology, '\0', sizeof(c.topology)) != NULL);
	FUZZ_ASSERT(memchr(c.profiles, '\0', sizeof(c.profiles)) != NULL);
	FUZZ_ASSERT(memchr(c.profile, '\0', sizeof(c.profile)) != NULL);
	FUZZ_ASSERT(memchr(c.partition_profiles, '\0', sizeof(c.partition_profiles)) != NULL);
	FUZZ_ASSERT(!c.topology[0] || c.topology[0] == '/');
	FUZZ_ASSERT(!c.profiles[0] || c.profiles[0] == '/');
}

static void fuzz_options(struct fuzz_pieces *p)
{
	struct rdzv_opts o, once;
	char err[256];
	int i;

	rdzv_opts_init(&o);
	for (i = 1; i < p->n; i++) {
		const char *val = p->v[i][0] ? p->v[i] + 1 : "";
		struct rdzv_opts before = o;
		int rc;

		if (p->v[i][0] == 'p')
			rc = rdzv_opt_port(&o, val, err, sizeof(err));
		else
			rc = rdzv_opt_mode(&o, val, err, sizeof(err));
		if (rc < 0) {
			FUZZ_ASSERT(memcmp(&before, &o, sizeof(o)) == 0);
			continue;
		}
		/* The same value again (Slurm's second call) changes nothing. */
		once = o;
		if (p->v[i][0] == 'p') {
			FUZZ_ASSERT(rdzv_opt_port(&o, val, err, sizeof(err)) == 0);
			FUZZ_ASSERT(o.port >= RDZV_PORT_MIN);
		} else {
			FUZZ_ASSERT(rdzv_opt_mode(&o, val, err, sizeof(err)) == 0);
			FUZZ_ASSERT(o.mode && strcmp(o.mode->name, val) == 0);
		}
		FUZZ_ASSERT(memcmp(&once, &o, sizeof(o)) == 0);
	}
}

static const char *env_get(void *ctx, const char *name)
{
	struct fuzz_pieces *p = ctx;
	int i = strcmp(name, "RDZV_MODE") == 0 ? 1
	      : strcmp(name, "RDZV_PORT") == 0 ? 2
	      : strcmp(name, "RDZV_VERBOSE") == 0 ? 3 : 0;

	return i && i < p->n ? p->v[i] : NULL;
}

static void fuzz_env(struct fuzz_pieces *p)
{
	struct rdzv_opts o, set;
	char err[256];

	rdzv_opts_init(&o);
	if (rdzv_opts_from_env(&o, env_get, p, err, sizeof(err)) == 0) {
		FUZZ_ASSERT(o.port == 0 || o.port >= RDZV_PORT_MIN);
		FUZZ_ASSERT(o.verbose >= -1 && o.verbose <= 1);
	}
	/* Options already given: the environment must not touch them. */
	rdzv_opts_init(&set);
	FUZZ_ASSERT(rdzv_opt_mode(&set, "off", err, sizeof(err)) == 0);
	FUZZ_ASSERT(rdzv_opt_port(&set, "29501", err, sizeof(err)) == 0);
	set.verbose = 0;
	o = set;
	FUZZ_ASSERT(rdzv_opts_from_env(&o, env_get, p, err, sizeof(err)) == 0);
	FUZZ_ASSERT(memcmp(&o, &set, sizeof(o)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;

	if (size < 1 || fuzz_split(data, size, &p) < 0)
		return 0;
	switch (p.v[0][0]) {
	case 'a':
		fuzz_args(&p);
		break;
	case 'o':
		fuzz_options(&p);
		break;
	case 'e':
		fuzz_env(&p);
		break;
	default:
		break;
	}
	fuzz_pieces_free(&p);
	return 0;
}
