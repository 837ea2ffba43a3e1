/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-conf: plugstack.conf arguments, option values and the RDZV_*
 * environment fallback. Invalid input first. */
#include "config.h"
#include "conf.h"
#include "tap.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[512];

/* Parse one argument over the defaults; the conf is left in *c. */
static int parse1(const char *arg, struct rdzv_conf *c)
{
	char buf[2048];
	char *av[1] = { buf };

	snprintf(buf, sizeof(buf), "%s", arg);
	rdzv_conf_defaults(c);
	err[0] = '\0';
	return rdzv_conf_parse(1, av, c, err, sizeof(err));
}

/* The argument is refused with a message containing want. */
static void conf_refused(const char *arg, const char *want, const char *name)
{
	struct rdzv_conf c;
	int rc = parse1(arg, &c);

	if (!ok(rc == -1 && strstr(err, want), "%s", name))
		diag("rc %d, err '%s', want '%s'", rc, err, want);
}

/* Every mode of the table is named in err. */
static int names_every_mode(const char *msg)
{
	const struct rdzv_mode *m;

	for (m = rdzv_modes(); m->name; m++)
		if (!strstr(msg, m->name))
			return 0;
	return 1;
}

struct env {
	const char *mode, *port, *verbose;
};

static const char *env_get(void *ctx, const char *name)
{
	const struct env *e = ctx;

	if (strcmp(name, "RDZV_MODE") == 0)
		return e->mode;
	if (strcmp(name, "RDZV_PORT") == 0)
		return e->port;
	if (strcmp(name, "RDZV_VERBOSE") == 0)
		return e->verbose;
	return NULL;
}

static void test_invalid_conf(void)
{
	struct rdzv_conf c;
	char longpath[RDZV_PATH_MAX + 10];

	conf_refused("mode", "is not key=value", "an argument without '=' is refused as not key=value");
	conf_refused("=torch", "is not key=value", "an argument without a key is refused");
	conf_refused("bogus=1", "unknown plugstack argument 'bogus'",
	             "an unknown key is refused with the key named");
	conf_refused("bogus=1", "known: mode", "the refusal lists the known keys");
	conf_refused("Mode=torch", "unknown plugstack argument 'Mode'", "keys are case-sensitive");
	conf_refused("a_key_much_longer_than_the_key_buffer_of_the_parser=1",
	             "unknown plugstack argument 'a_key_much_longer",
	             "a very long key is refused as unknown, with its start named");
	conf_refused("mode=bogus", "mode=bogus: valid modes are", "mode=bogus is refused");
	{
		struct rdzv_conf c2;

		parse1("mode=bogus", &c2);
		ok(names_every_mode(err), "the refusal of mode=bogus names every valid mode");
		ok(c2.mode != NULL && strcmp(c2.mode->name, "off") == 0,
		   "a refused mode= leaves the default mode in place, never NULL");
	}
	conf_refused("mode=", "valid modes are", "an empty mode= is refused");
	conf_refused("mode=Torch", "valid modes are", "mode names are case-sensitive");
	conf_refused("port_range=1023-2000", "port_range=1023-2000", "port_range below 1024 is refused");
	conf_refused("port_range=2000-1999", "expected LO-HI", "a backwards port_range is refused");
	conf_refused("port_range=2000-65536", "65535", "a port_range above 65535 is refused");
	conf_refused("port_range=29500", "expected LO-HI", "a port_range without '-' is refused");
	conf_refused("port_range=", "expected LO-HI", "an empty port_range is refused");
	conf_refused("master_addr=fqdn", "master_addr=fqdn: valid values are name, ip",
	             "master_addr=fqdn is refused with the valid values");
	conf_refused("master_addr=", "valid values are name, ip", "an empty master_addr is refused");
	conf_refused("env=maybe", "env=maybe: valid values are yes, no", "env=maybe is refused");
	conf_refused("kill_on_bad_exit=sometimes", "kill_on_bad_exit=sometimes: valid values are yes, no",
	             "kill_on_bad_exit=sometimes is refused with the valid values");
	conf_refused("kill_on_bad_exit=", "valid values are yes, no", "an empty kill_on_bad_exit= is refused");
	conf_refused("kill_on_badexit=no", "unknown plugstack argument 'kill_on_badexit'",
	             "a misspelt kill_on_bad_exit is an unknown key");
	conf_refused("bogus=1", "kill_on_bad_exit", "the refusal lists kill_on_bad_exit among the known keys");
	conf_refused("env=", "valid values are yes, no", "an empty env= is refused");
	conf_refused("container_env=apptainer", "container_env=apptainer: valid values are yes, no",
	             "container_env=apptainer is refused with the valid values");
	conf_refused("container_env=", "valid values are yes, no", "an empty container_env= is refused");
	conf_refused("container_env=Yes", "valid values are yes, no",
	             "container_env= is case-sensitive like the other booleans");
	conf_refused("containerenv=no", "unknown plugstack argument 'containerenv'",
	             "a misspelt container_env is an unknown key");
	conf_refused("bogus=1", "container_env, debug, collective_timeout, collective_grace, hang_python, hang_helper, nvlink_domain, nvml_library, record_dir, record_syslog, metrics_dir, dcgm_job_map_dir, health_check, health_timeout, health_timeout_action, kmsg, xid_table, gpu_state_dir)", "the refusal lists container_env, debug, collective_timeout, collective_grace, hang_python, hang_helper, nvlink_domain, nvml_library, record_dir, record_syslog, metrics_dir, dcgm_job_map_dir, health_check, health_timeout, health_timeout_action, kmsg, xid_table and gpu_state_dir among the known keys");
	conf_refused("health_check=maybe", "health_check=maybe: valid values are yes, no",
	             "health_check=maybe is refused naming the valid values");
	{
		static const char *const bad[] = { "5x", "0", "0s", "11m", "601", "1h", "off", "", "-5",
			                           "60 s", NULL };
		static const struct { const char *v; uint32_t s; } good[] = {
			{ "default", 60 }, { "90", 90 }, { "90s", 90 }, { "2m", 120 }, { "10m", 600 },
			{ "1s", 1 } };
		struct rdzv_conf hc;
		char arg[64];
		size_t i;

		rdzv_conf_defaults(&hc);
		ok(hc.health_timeout == 60 && hc.health_timeout_drain == 1,
		   "the node check's defaults: health_timeout=60s, health_timeout_action=drain");
		for (i = 0; bad[i]; i++) {
			snprintf(arg, sizeof(arg), "health_timeout=%s", bad[i]);
			conf_refused(arg, "valid values are a duration of 1s to 10m (N, Ns, Nm) or default (60s)",
			             arg);
		}
		for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			snprintf(arg, sizeof(arg), "health_timeout=%s", good[i].v);
			ok(parse1(arg, &hc) == 0 && hc.health_timeout == good[i].s, "%s: %u s", arg,
			   good[i].s);
		}
		ok(parse1("health_timeout_action=none", &hc) == 0 && hc.health_timeout_drain == 0,
		   "health_timeout_action=none: an unfinished check drains nothing");
		ok(parse1("health_timeout_action=drain", &hc) == 0 && hc.health_timeout_drain == 1,
		   "health_timeout_action=drain");
		conf_refused("health_timeout_action=maybe",
		             "health_timeout_action=maybe: valid values are drain, none",
		             "health_timeout_action=maybe is refused naming the valid values");
	}
	conf_refused("dcgm_job_map_dir=run/dcgm", "must be an absolute path",
	             "dcgm_job_map_dir= must be absolute");
	conf_refused("nvlink_domain=rack", "nvlink_domain=rack: valid values are node, block, nvml", "nvlink_domain=rack is refused naming the valid values");
	conf_refused("collective_timeout=soon", "collective_timeout=soon: valid values are a duration of 1s to 7 days (N, Ns, Nm, Nh) or default", "collective_timeout=soon is refused naming the valid values");
	conf_refused("collective_timeout=0", "valid values are a duration", "collective_timeout=0 is refused (default says PyTorch's)");
	conf_refused("collective_timeout=8d", "valid values are a duration", "a unit that is not s, m or h");
	conf_refused("collective_timeout=169h", "valid values are a duration", "more than 7 days");
	conf_refused("hang_helper=rdzv-hang", "must be an absolute path", "hang_helper= must be absolute");
	{
		static const struct { const char *v; int rc; uint32_t s; } tt[] = {
			{ "300", 0, 300 }, { "90s", 0, 90 }, { "5m", 0, 300 }, { "2h", 0, 7200 },
			{ "168h", 0, 604800 }, { "604800", 0, 604800 }, { "604801", -1, 0 },
			{ "default", 0, 0 }, { "off", 0, 0 }, { "", -1, 0 }, { "m", -1, 0 },
			{ "5 m", -1, 0 }, { "-5", -1, 0 }, { "5ms", -1, 0 }, { "99999999999999999999", -1, 0 },
		};
		struct rdzv_conf dc;
		struct rdzv_opts o;
		char e[256];
		size_t i;
		uint32_t v;

		for (i = 0; i < sizeof(tt) / sizeof(tt[0]); i++) {
			v = 12345;
			ok(rdzv_timeout_parse(tt[i].v, &v) == tt[i].rc && (tt[i].rc < 0 || v == tt[i].s),
			   "timeout '%s': %s %u", tt[i].v, tt[i].rc ? "refused" : "accepted as", tt[i].s);
		}
		is_int(parse1("collective_timeout=10m", &dc), 0, "collective_timeout=10m is accepted");
		is_int((int)dc.collective_timeout, 600, "... 600 s");
		rdzv_conf_defaults(&dc);
		is_int((int)dc.collective_timeout, 0, "the default is PyTorch's own (0)");
		ok(dc.hang_helper[0] == '/' && strstr(dc.hang_helper, "/rdzv-hang") != NULL, "hang_helper defaults to the installed BINDIR/rdzv-hang (%s)", dc.hang_helper);
		rdzv_opts_init(&o);
		is_int((int)o.collective_timeout, -1, "--rdzv-collective-timeout: not given by default");
		is_int(rdzv_opt_collective_timeout(&o, "45s", e, sizeof(e)), 0, "--rdzv-collective-timeout=45s");
		is_int((int)o.collective_timeout, 45, "... 45 s");
		is_int(rdzv_opt_collective_timeout(&o, "default", e, sizeof(e)), 0, "--rdzv-collective-timeout=default");
		is_int((int)o.collective_timeout, 0, "... PyTorch's (overrides the site's)");
		is_int(rdzv_opt_collective_timeout(&o, "1x", e, sizeof(e)), -1, "--rdzv-collective-timeout=1x is refused");
		ok(strstr(e, "--rdzv-collective-timeout=1x: valid values are a duration of 1s to 7 days") != NULL, "... naming the option and the valid values (%s)", e);
		/* The grace of a failed collective: 30 s unless said. */
		is_int((int)dc.collective_grace, 30, "collective_grace: 30 s by default");
		ok(!dc.collective_grace_set, "... not written");
		is_int(parse1("collective_grace=2m", &dc), 0, "collective_grace=2m is accepted");
		ok(dc.collective_grace == 120 && dc.collective_grace_set, "... 120 s, written");
		is_int(parse1("collective_grace=off", &dc), 0, "collective_grace=off is accepted");
		is_int((int)dc.collective_grace, 0, "... 0: never stopped for it");
		is_int(parse1("collective_grace=default", &dc), 0, "collective_grace=default is accepted");
		is_int((int)dc.collective_grace, 30, "... 30 s");
		is_int((int)o.collective_grace, -1, "--rdzv-collective-grace: not given by default");
		is_int(rdzv_opt_collective_grace(&o, "10s", e, sizeof(e)), 0, "--rdzv-collective-grace=10s");
		is_int((int)o.collective_grace, 10, "... 10 s");
		is_int(rdzv_opt_collective_grace(&o, "off", e, sizeof(e)), 0, "--rdzv-collective-grace=off");
		is_int((int)o.collective_grace, 0, "... 0");
		is_int(rdzv_opt_collective_grace(&o, "0", e, sizeof(e)), -1, "--rdzv-collective-grace=0 is refused (off says it)");
		is_int(rdzv_opt_collective_grace(&o, "soon", e, sizeof(e)), -1, "--rdzv-collective-grace=soon is refused");
		ok(strstr(e, "--rdzv-collective-grace=soon: valid values are a duration of 1s to 7 days (N, Ns, Nm, Nh), off or default (30s)") != NULL, "... naming the option and the valid values (%s)", e);
	}
	conf_refused("collective_grace=8d", "collective_grace=8d: valid values are a duration of 1s to 7 days (N, Ns, Nm, Nh), off or default (30s)", "collective_grace=8d is refused naming the valid values");
	conf_refused("debug=yes", "debug=yes: valid values are hang, off", "debug=yes is refused naming hang, off");
	conf_refused("hang_python=rel/dir", "must be an absolute path", "hang_python= must be absolute");
	{
		struct rdzv_conf dc;

		is_int(parse1("debug=hang", &dc), 0, "debug=hang is accepted");
		is_int(dc.debug_hang, 1, "... and arms by default");
		is_int(parse1("debug=off", &dc), 0, "debug=off is accepted");
		is_int(dc.debug_hang, 0, "... and does not");
		rdzv_conf_defaults(&dc);
		is_int(dc.debug_hang, 0, "the default is off");
		ok(dc.hang_python[0] == '/' && strstr(dc.hang_python, "/spank-rdzv/python") != NULL, "hang_python defaults to the installed DATADIR/spank-rdzv/python (%s)", dc.hang_python);
	}
	conf_refused("strict=YES", "strict=YES: valid values are yes, no",
	             "booleans are case-sensitive");
	conf_refused("topology=relative/topo.xml", "must be an absolute path",
	             "a relative topology path is refused");
	conf_refused("profiles=etc/rdzv", "profiles=etc/rdzv: must be an absolute path",
	             "a relative profiles dir is refused with the argument named");
	conf_refused("topology=", "topology= has an empty value", "an empty topology is refused");
	conf_refused("bind=", "bind= has an empty value", "an empty bind is refused");
	conf_refused("profile=", "empty value", "an empty profile is refused");
	conf_refused("partition_profile=", "empty value", "an empty partition_profile is refused");
	conf_refused("profile=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	             "profile=: value longer than 63 bytes", "an oversized profile name is refused");
	longpath[0] = '/';
	memset(longpath + 1, 'p', sizeof(longpath) - 2);
	longpath[sizeof(longpath) - 1] = '\0';
	{
		char arg[sizeof(longpath) + 16];

		snprintf(arg, sizeof(arg), "topology=%s", longpath);
		conf_refused(arg, "value longer than 1023 bytes", "an oversized topology path is refused");
	}

	/* a bad argument after good ones still fails the whole line */
	{
		char a0[] = "mode=torch", a1[] = "port_range=30000-30100", a2[] = "nope=1";
		char *av[] = { a0, a1, a2 };

		rdzv_conf_defaults(&c);
		err[0] = '\0';
		is_int(rdzv_conf_parse(3, av, &c, err, sizeof(err)), -1,
		       "a bad argument after good ones fails the line");
		ok(strstr(err, "'nope'") != NULL, "and the bad one is named");
	}
}

static void test_conf(void)
{
	struct rdzv_conf c;
	char a0[] = "mode=torch", a1[] = "port_range=30000-30100", a2[] = "master_addr=ip",
	     a3[] = "env=no", a4[] = "strict=yes", a5[] = "bind=gpu",
	     a6[] = "topology=/etc/rdzv/%n.xml", a7[] = "profiles=/etc/rdzv/profiles",
	     a8[] = "profile=h100", a9[] = "partition_profile=gpu:h100,a100:a100",
	     a10[] = "mode=torchrun", a11[] = "master_addr=name";
	char *av[] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 };
	char *again[] = { a10, a11 };

	rdzv_conf_defaults(&c);
	ok(c.mode && strcmp(c.mode->name, "off") == 0, "the default mode is off");
	ok(c.port_range.lo == RDZV_DEFAULT_PORT_LO && c.port_range.hi == RDZV_DEFAULT_PORT_HI,
	   "the default port range is %d-%d", RDZV_DEFAULT_PORT_LO, RDZV_DEFAULT_PORT_HI);
	is_int(c.addr_form, RDZV_ADDR_NAME, "MASTER_ADDR is a name by default");
	is_int(c.env_fallback, 1, "the environment fallback is on by default");
	is_int(c.kill_on_bad_exit, 1, "a failed rank stops the step by default (kill_on_bad_exit=yes)");
	is_int(c.strict, 0, "strict is off by default");
	is_int(c.container_env, 1, "APPTAINERENV_* copies are on by default (container_env=yes)");
	is_str(c.bind, "none", "binding is none by default");
	is_str(c.topology, "", "no topology path by default");
	is_int(rdzv_conf_parse(0, NULL, &c, err, sizeof(err)), 0, "no arguments is fine");

	is_int(rdzv_conf_parse(10, av, &c, err, sizeof(err)), 0, "every known key is accepted");
	ok(c.mode && strcmp(c.mode->name, "torch") == 0, "mode=torch sets the site mode");
	ok(c.port_range.lo == 30000 && c.port_range.hi == 30100, "port_range sets the range");
	is_int(c.addr_form, RDZV_ADDR_IP, "master_addr=ip selects addresses");
	is_int(c.env_fallback, 0, "env=no turns the fallback off");
	is_int(c.strict, 1, "strict=yes turns strict on");
	is_str(c.bind, "gpu", "bind= sets the binding mode");
	is_str(c.topology, "/etc/rdzv/%n.xml", "topology= keeps its %n");
	is_str(c.profiles, "/etc/rdzv/profiles", "profiles= sets the directory");
	is_str(c.profile, "h100", "profile= sets the site profile");
	is_str(c.partition_profiles, "gpu:h100,a100:a100", "partition_profile= keeps its list");
	is_int(rdzv_conf_parse(2, again, &c, err, sizeof(err)), 0, "a later line parses over an earlier one");
	ok(c.mode && strcmp(c.mode->name, "torchrun") == 0, "the last mode= wins");
	is_int(c.addr_form, RDZV_ADDR_NAME, "the last master_addr= wins");

	ok(parse1("mode=off", &c) == 0 && c.mode && !c.mode->fill, "mode=off is accepted and sets nothing");
	ok(parse1("port_range=1024-65535", &c) == 0 && c.port_range.lo == 1024
	   && c.port_range.hi == 65535, "the widest port range is accepted");
	ok(parse1("master_addr=name", &c) == 0 && c.addr_form == RDZV_ADDR_NAME,
	   "master_addr=name is accepted");
	ok(parse1("mode=torch=x", &c) == -1, "a value holding '=' is not a mode");
	ok(parse1("kill_on_bad_exit=no", &c) == 0 && c.kill_on_bad_exit == 0,
	   "kill_on_bad_exit=no turns the default off");
	ok(parse1("kill_on_bad_exit=yes", &c) == 0 && c.kill_on_bad_exit == 1,
	   "kill_on_bad_exit=yes keeps it on");
	ok(parse1("container_env=no", &c) == 0 && c.container_env == 0,
	   "container_env=no turns the APPTAINERENV_* copies off");
	ok(parse1("container_env=yes", &c) == 0 && c.container_env == 1,
	   "container_env=yes keeps them on");
	{
		char b0[] = "container_env=no", b1[] = "mode=torch", b2[] = "container_env=1";
		char *bv[] = { b0, b1, b2 };

		rdzv_conf_defaults(&c);
		ok(rdzv_conf_parse(3, bv, &c, err, sizeof(err)) == 0 && c.container_env == 1,
		   "the last container_env= on the line wins");
	}
	ok(parse1("container_env=off", &c) == 0 && c.container_env == 0,
	   "container_env= takes every boolean spelling (off)");

	/* Binding's identity and cache keys. */
	rdzv_conf_defaults(&c);
	is_str(c.topology_cache, RDZV_TOPOLOGY_CACHE_DEFAULT, "the node-model cache is on by default");
	is_str(c.gres_conf, "", "no gres.conf path by default (Slurm's own is looked for)");
	is_str(c.identity_root, "", "no identity root prefix by default");
	ok(parse1("topology_cache=/var/cache/rdzv", &c) == 0
	   && strcmp(c.topology_cache, "/var/cache/rdzv") == 0, "topology_cache= sets root's cache directory");
	ok(parse1("topology_cache=no", &c) == 0 && c.topology_cache[0] == '\0',
	   "topology_cache=no turns the cache off");
	ok(parse1("gres_conf=/etc/slurm/gres.conf", &c) == 0
	   && strcmp(c.gres_conf, "/etc/slurm/gres.conf") == 0, "gres_conf= sets the gres.conf read");
	ok(parse1("identity_root=/srv/fixture", &c) == 0
	   && strcmp(c.identity_root, "/srv/fixture") == 0, "identity_root= sets the /proc and /sys prefix");
	conf_refused("topology_cache=cache", "topology_cache=cache: must be an absolute path",
	             "a relative topology_cache is refused with the argument named");
	conf_refused("gres_conf=gres.conf", "gres_conf=gres.conf: must be an absolute path",
	             "a relative gres_conf is refused with the argument named");
	conf_refused("identity_root=", "identity_root= has an empty value",
	             "an empty identity_root is refused");
}

static void test_bool(void)
{
	const char *yes[] = { "yes", "1", "true", "on" }, *no[] = { "no", "0", "false", "off" };
	const char *bad[] = { "", "y", "n", "2", "Yes", "TRUE", " yes", "yes " };
	size_t i;
	int good = 1;

	for (i = 0; i < 4; i++)
		good &= rdzv_parse_bool(yes[i]) == 1 && rdzv_parse_bool(no[i]) == 0;
	ok(good, "yes/1/true/on are true and no/0/false/off are false");
	good = rdzv_parse_bool(NULL) == -1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		good &= rdzv_parse_bool(bad[i]) == -1;
	ok(good, "NULL, empty, abbreviations, other cases and padded words are not booleans");
}

static void test_opts(void)
{
	struct rdzv_opts o;

	rdzv_opts_init(&o);
	ok(!o.mode && o.port == 0 && o.verbose == -1 && !o.bind[0] && !o.profile[0],
	   "fresh options say 'not given' everywhere");

	err[0] = '\0';
	is_int(rdzv_opt_mode(&o, "bogus", err, sizeof(err)), -1, "--rdzv=bogus is refused");
	ok(strstr(err, "--rdzv") && strstr(err, "'bogus'") && names_every_mode(err),
	   "the message names the option, the value and every valid mode");
	ok(o.mode == NULL, "a refused --rdzv leaves the mode unset");
	is_int(rdzv_opt_mode(&o, NULL, err, sizeof(err)), -1, "--rdzv without a value is refused");
	is_int(rdzv_opt_mode(&o, "", err, sizeof(err)), -1, "--rdzv= with an empty value is refused");

	err[0] = '\0';
	is_int(rdzv_opt_port(&o, "80", err, sizeof(err)), -1, "--rdzv-port=80 is refused");
	ok(strstr(err, "--rdzv-port") && strstr(err, "'80'") && strstr(err, "1024-65535"),
	   "the message names the option, the value and the valid range");
	is_int(rdzv_opt_port(&o, "65536", err, sizeof(err)), -1, "--rdzv-port=65536 is refused");
	is_int(rdzv_opt_port(&o, "29500x", err, sizeof(err)), -1, "--rdzv-port=29500x is refused");
	is_int(rdzv_opt_port(&o, NULL, err, sizeof(err)), -1, "--rdzv-port without a value is refused");
	is_int(o.port, 0, "refused ports leave the port unset");

	/* Slurm calls option callbacks twice (environment, then command line). */
	ok(rdzv_opt_mode(&o, "torch", err, sizeof(err)) == 0
	   && rdzv_opt_mode(&o, "torch", err, sizeof(err)) == 0 && o.mode
	   && strcmp(o.mode->name, "torch") == 0, "--rdzv=torch given twice is torch");
	ok(rdzv_opt_mode(&o, "torchrun", err, sizeof(err)) == 0 && o.mode
	   && strcmp(o.mode->name, "torchrun") == 0, "a second --rdzv value wins");
	ok(rdzv_opt_mode(&o, "bogus", err, sizeof(err)) == -1 && o.mode
	   && strcmp(o.mode->name, "torchrun") == 0, "a refused later value keeps the earlier one");
	ok(rdzv_opt_port(&o, "29500", err, sizeof(err)) == 0
	   && rdzv_opt_port(&o, "29500", err, sizeof(err)) == 0 && o.port == 29500,
	   "--rdzv-port=29500 given twice is 29500");
	ok(rdzv_opt_port(&o, "1024", err, sizeof(err)) == 0 && o.port == 1024,
	   "a second --rdzv-port value wins");
	ok(rdzv_opt_port(&o, "65535", err, sizeof(err)) == 0 && o.port == 65535,
	   "--rdzv-port=65535 is accepted");
}

/* The user's mode and binding over the site's. */
static void test_resolve(void)
{
	struct rdzv_opts o;
	struct rdzv_conf c;

	rdzv_opts_init(&o);
	rdzv_conf_defaults(&c);
	ok(rdzv_mode_resolve(&o, &c) == c.mode, "no option: the site's mode");
	ok(rdzv_opt_mode(&o, "torchrun", err, sizeof(err)) == 0
	   && rdzv_mode_resolve(&o, &c) == o.mode, "--rdzv given: the user's mode");
	c.mode = NULL;
	ok(rdzv_mode_resolve(&o, &c) == o.mode, "... also when the site has none");
	rdzv_opts_init(&o);
	ok(rdzv_mode_resolve(&o, &c) == NULL, "neither: none");
	ok(parse1("bind=auto", &c) == 0 && strcmp(rdzv_bind_resolve(&o, &c), "auto") == 0,
	   "no --rdzv-bind: the site's bind=");
	snprintf(o.bind, sizeof(o.bind), "none");
	is_str(rdzv_bind_resolve(&o, &c), "none", "--rdzv-bind given: the user's");
}

static void test_env(void)
{
	struct rdzv_opts o;
	struct env e = { NULL, NULL, NULL };

	rdzv_opts_init(&o);
	e.mode = "bogus";
	err[0] = '\0';
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), -1, "RDZV_MODE=bogus is refused");
	ok(strstr(err, "RDZV_MODE") && strstr(err, "'bogus'") && names_every_mode(err),
	   "the message names the variable, the value and the valid modes");
	ok(o.mode == NULL, "and the mode stays unset");

	e.mode = NULL;
	e.port = "99";
	err[0] = '\0';
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), -1, "RDZV_PORT=99 is refused");
	ok(strstr(err, "RDZV_PORT") && strstr(err, "'99'") && strstr(err, "1024-65535"),
	   "the message names the variable, the value and the valid range");
	is_int(o.port, 0, "and the port stays unset");

	e.port = NULL;
	e.verbose = "loud";
	err[0] = '\0';
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), -1,
	       "RDZV_VERBOSE=loud is refused");
	ok(strstr(err, "RDZV_VERBOSE") && strstr(err, "'loud'") && strstr(err, "yes, no"),
	   "the message names the variable, the value and the valid values");
	is_int(o.verbose, -1, "and verbose stays unset");

	e.mode = "";
	e.port = "";
	e.verbose = "";
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), 0,
	       "empty RDZV_* variables count as unset");
	ok(!o.mode && !o.port && o.verbose == -1, "and fill nothing");

	e.mode = "torch";
	e.port = "31000";
	e.verbose = "1";
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), 0, "valid RDZV_* are accepted");
	ok(o.mode && strcmp(o.mode->name, "torch") == 0, "RDZV_MODE fills an unset mode");
	is_int(o.port, 31000, "RDZV_PORT fills an unset port");
	is_int(o.verbose, 1, "RDZV_VERBOSE fills an unset verbose");

	/* options given win over the environment, which then is not even checked */
	rdzv_opts_init(&o);
	rdzv_opt_mode(&o, "torchrun", err, sizeof(err));
	rdzv_opt_port(&o, "30001", err, sizeof(err));
	o.verbose = 0;
	e.mode = "bogus";
	e.port = "1";
	e.verbose = "loud";
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), 0,
	       "RDZV_* are ignored where options were given");
	ok(o.mode && strcmp(o.mode->name, "torchrun") == 0 && o.port == 30001 && o.verbose == 0,
	   "the options' values win");
	e.mode = "torch";
	e.port = "30002";
	e.verbose = "yes";
	is_int(rdzv_opts_from_env(&o, env_get, &e, err, sizeof(err)), 0,
	       "a second pass over the environment is harmless");
	ok(o.mode && strcmp(o.mode->name, "torchrun") == 0 && o.port == 30001 && o.verbose == 0,
	   "and still leaves the options' values");
}

/* The per-node path of topology= and nvml_library= (lib/common/util.c):
 * both take %n and %%, and refuse the same things. */
/* rdzv_read_small: /proc-sized files, binary-safe, bounded, no link followed. */
static void test_read_small(void)
{
	char dir[] = "/tmp/rdzv-readsmall.XXXXXX", path[64], link[80], buf[8];
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "a temporary directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/env", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	if ((f = fopen(path, "w"))) {
		fwrite("A=1\0B=22\0", 1, 9, f);
		fclose(f);
	}
	ok(rdzv_read_small(path, buf, sizeof(buf)) == 7 && memcmp(buf, "A=1\0B=2", 8) == 0,
	   "read_small: at most cap - 1 bytes, NULs kept, NUL-terminated");
	ok(symlink(path, link) == 0 && rdzv_read_small(link, buf, sizeof(buf)) == -1,
	   "read_small: a final symbolic link is not followed");
	ok(rdzv_read_small(path, buf, 0) == -1, "read_small: no room, no read");
	ok(rdzv_read_small("/nonexistent/x", buf, sizeof(buf)) == -1, "read_small: a missing file");
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void test_path_node(void)
{
	static const struct {
		const char *tmpl, *node, *why;
	} bad[] = {
		{ "/t/%n.xml%", "n1", "a stray '%' at the end" },
		{ "/t/%x/%n.xml", "n1", "'%x'" },
		{ "/t/100%.xml", "n1", "a '%' before '.'" },
		{ "/t/%n.xml", "../etc", "a node name with '/'" },
		{ "/t/%n.xml", "a/b", "a node name with '/' inside" },
		{ "/t/%n/x", "..", "the node name '..'" },
		{ "/t/%n/x", ".", "the node name '.'" },
		{ "/t/%n.xml", "", "no node name" },
		{ "/t/%n.xml", NULL, "no node name (NULL)" },
		{ "/a/path/far/too/long/for/thirty-two/bytes/%n", "n1", "too long" },
		{ "/t/%n.xml", "node-with-a-name-that-is-too-long", "too long with the name" },
	};
	char out[32];
	size_t i;

	ok(rdzv_path_node("/t/%n.xml", "n1", out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "/t/n1.xml") == 0, "%%n is the node name: %s", out);
	ok(rdzv_path_node("/t/%n/%n", "n1", out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "/t/n1/n1") == 0, "every %%n: %s", out);
	ok(rdzv_path_node("/t/100%%/%%n", NULL, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "/t/100%/%n") == 0, "%%%% is a '%%', also before n: %s", out);
	ok(rdzv_path_node("/t/x.xml", NULL, out, sizeof(out), err, sizeof(err)) == 0
	   && strcmp(out, "/t/x.xml") == 0, "no %%n needs no node name");
	ok(rdzv_path_node("/a/path/of/exactly/31/bytes/%n", "n12", out, sizeof(out), err,
	                  sizeof(err)) == 0 && strlen(out) == 31, "31 bytes fit in 32: %s", out);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		strcpy(out, "untouched?");
		ok(rdzv_path_node(bad[i].tmpl, bad[i].node, out, sizeof(out), err, sizeof(err)) == -1
		   && err[0], "'%s' with node '%s': refused, %s (%s)", bad[i].tmpl,
		   bad[i].node ? bad[i].node : "(null)", bad[i].why, err);
	}
	ok(rdzv_path_node("/t/%n.xml", "a/b", out, sizeof(out), err, sizeof(err)) == -1
	   && strstr(err, "cannot stand for %n in a path"), "the reason for '/' (%s)", err);
	ok(rdzv_path_node("/t/%x", "n1", out, sizeof(out), err, sizeof(err)) == -1
	   && strstr(err, "must be followed by n or %"), "the reason for a stray '%%' (%s)", err);
	is_int(rdzv_path_wants_node("/t/%n.xml"), 1, "'/t/%%n.xml' wants the node name");
	is_int(rdzv_path_wants_node("/t/%%n.xml"), 0, "'/t/%%%%n.xml' does not");
	is_int(rdzv_path_wants_node("/t/%%%n.xml"), 1, "'/t/%%%%%%n.xml' does");
	is_int(rdzv_path_wants_node("/t/x%"), 0, "a stray '%%' at the end does not");
	is_int(rdzv_path_wants_node(NULL), 0, "NULL does not");
}

int main(void)
{
	test_invalid_conf();
	test_path_node();
	test_read_small();
	test_conf();
	test_bool();
	test_opts();
	test_resolve();
	test_env();
	return done_testing();
}
