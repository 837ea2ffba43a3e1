/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-profile: the admin's offline view of the site NCCL profiles.
 *
 *   rdzv-profile [OPTIONS] check        check every profile in the directory
 *   rdzv-profile [OPTIONS] list         what --nccl-profile=list shows users
 *   rdzv-profile [OPTIONS] show [NAME|none]
 *                                       the environment a step would get
 *                                       (on --nodes N nodes: "multinode"
 *                                       lines count when N > 1)
 *
 * Uses the plugin's own code (lib/profile/.c), so what passes here is what
 * jobs will accept. Exit status: 0 fine, 1 a profile (or the setup) has an
 * error, 2 usage. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "profile.h"
#include "util.h"

#define ERRLEN 2048

struct args {
	struct rdzv_conf conf;
	const char *partition;
	uid_t owner;
	int quiet;
	unsigned nodes;      /* show: the step's node count (default 1) */
	int nodes_given;
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: rdzv-profile [OPTIONS] check\n"
	        "       rdzv-profile [OPTIONS] list\n"
	        "       rdzv-profile [OPTIONS] show [NAME|none]\n"
	        "Check site NCCL profiles offline and show what a step would get.\n"
	        "  -c, --plugstack FILE      take profiles=, profile=, partition_profile= from the\n"
	        "                            rdzv.so line of FILE (a plugstack.conf)\n"
	        "  -d, --dir DIR             profiles directory (profiles=)\n"
	        "  -s, --site-default NAME   site default profile (profile=)\n"
	        "  -m, --partition-map MAP   per-partition defaults PART:NAME[,...] (partition_profile=)\n"
	        "  -p, --partition PART      the step's partition (show, list)\n"
	        "  -N, --nodes N             show: a step on N nodes (default 1; \"multinode\"\n"
	        "                            lines count when N > 1)\n"
	        "  -u, --owner UID           also trust files owned by UID (to check a staging copy\n"
	        "                            before installing it as root)\n"
	        "  -q, --quiet               check: print errors only\n"
	        "  -h, --help\n"
	        "  --version\n");
}

/* Users read the files in srun and in slurmstepd (as themselves). */
static void warn_unreadable(const struct rdzv_profile_dir *d, const char *name)
{
	char path[2048];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s%s", d->path, name, RDZV_PROFILE_SUFFIX);
	if (stat(path, &st) == 0 && !(st.st_mode & S_IROTH))
		printf("%s: warning: not readable by others: jobs of other users will fail to read "
		       "it (use mode 0644)\n", path);
}

static const char *policy_word(enum rdzv_policy p)
{
	return p == RDZV_SET_ENFORCE ? "enforce" : p == RDZV_SET_UNSET ? "unset" : "default";
}

/* Variables, not entries: a plain line and a multinode line for one
 * variable are two entries. */
static size_t distinct_vars(const struct rdzv_profile *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		if (rdzv_profile_find(p, p->v[i].name) == &p->v[i])
			n++;
	return n;
}

static int cmd_check(const struct args *a, const struct rdzv_profile_dir *d)
{
	struct rdzv_profile_source src = { rdzv_profile_dir_read, d };
	struct rdzv_profile_pick pick;
	char err[ERRLEN], **names = NULL;
	int n, i, errors = 0;
	struct stat st;

	if (!a->quiet && stat(d->path, &st) == 0 && !(st.st_mode & S_IXOTH))
		printf("%s: warning: not searchable by others: jobs will fail to read profiles\n",
		       d->path);
	if ((n = rdzv_profile_dir_names(d, &names, err, sizeof(err))) < 0) {
		printf("error: %s\n", err);
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct rdzv_notes notes;
		struct rdzv_profile *p = NULL;
		size_t k;

		rdzv_notes_init(&notes);
		if (rdzv_profile_load(&src, names[i], &p, &notes, err, sizeof(err)) < 0) {
			printf("%s: error: %s\n", names[i], err);
			errors++;
		} else if (!a->quiet) {
			size_t nvars = distinct_vars(p);

			printf("%s: ok, %zu variable%s%s%s\n", names[i], nvars, nvars == 1 ? "" : "s",
			       p->description ? ": " : " (no description)",
			       p->description ? p->description : "");
			if (p->require_mnnvl)
				printf("  require mnnvl (%s): every node is checked for multi-node "
				       "NVLink before the step's tasks start\n", p->require_mnnvl_where);
			for (k = 0; k < p->n; k++)
				if (p->v[k].scope == RDZV_SCOPE_MULTI)
					printf("  multinode (%s): %s %s%s%s in steps on several nodes only\n",
					       p->v[k].where, policy_word(p->v[k].policy), p->v[k].name,
					       p->v[k].value ? "=" : "", p->v[k].value ? p->v[k].value : "");
		}
		if (!a->quiet) {
			for (k = 0; k < notes.n; k++)
				printf("  %s\n", notes.v[k]);
			warn_unreadable(d, names[i]);
		}
		rdzv_notes_clear(&notes);
		rdzv_profile_destroy(p);
	}
	/* The defaults must name profiles that exist and load. */
	if (rdzv_profile_pick(NULL, NULL, a->conf.profile, a->conf.partition_profiles, &pick, err,
	                      sizeof(err)) < 0) {
		printf("error: %s\n", err);
		errors++;
	} else {
		const char *m = a->conf.partition_profiles;

		if (a->conf.profile[0]) {
			struct rdzv_profile *p = NULL;

			if (rdzv_profile_load(&src, a->conf.profile, &p, NULL, err, sizeof(err)) < 0) {
				printf("error: site default profile=%s: %s\n", a->conf.profile, err);
				errors++;
			}
			rdzv_profile_destroy(p);
		}
		while (m && *m) {
			const char *colon = strchr(m, ':'), *end = strchr(m, ',');
			char name[RDZV_PROFILE_NAME_MAX + 1];
			struct rdzv_profile *p = NULL;
			size_t l;

			if (!colon)
				break;
			l = end ? (size_t)(end - colon - 1) : strlen(colon + 1);
			snprintf(name, sizeof(name), "%.*s", (int)l, colon + 1);
			if (rdzv_profile_load(&src, name, &p, NULL, err, sizeof(err)) < 0) {
				printf("error: partition_profile %.*s: %s\n", (int)(colon - m), m, err);
				errors++;
			}
			rdzv_profile_destroy(p);
			m = end ? end + 1 : NULL;
		}
	}
	rdzv_profile_names_free(names, n);
	if (!a->quiet || errors)
		printf("%d profile%s, %d error%s\n", n, n == 1 ? "" : "s", errors,
		       errors == 1 ? "" : "s");
	return errors ? 1 : 0;
}

static int has_scope(const struct rdzv_profile *p, enum rdzv_scope scope)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		if (p->v[i].scope == scope)
			return 1;
	return 0;
}

static int cmd_show(const struct args *a, const struct rdzv_profile_dir *d, const char *user)
{
	struct rdzv_profile_source src = { rdzv_profile_dir_read, d };
	struct rdzv_profile_pick pick;
	struct rdzv_profile *chosen = NULL, *deflt = NULL;
	struct rdzv_envset *set = NULL;
	struct rdzv_profile_needs needs;
	char err[ERRLEN];
	size_t i;
	int rv = 1;

	if (rdzv_profile_pick(user, a->partition, a->conf.profile, a->conf.partition_profiles,
	                      &pick, err, sizeof(err)) < 0) {
		printf("error: %s\n", err);
		return 1;
	}
	pick.nnodes = a->nodes;
	if (!(set = rdzv_envset_create())
	    || rdzv_profile_resolve_needs(&pick, &src, set, &needs, NULL, err, sizeof(err)) < 0
	    || (pick.chosen[0]
	        && rdzv_profile_load(&src, pick.chosen, &chosen, NULL, err, sizeof(err)) < 0)
	    || (pick.deflt[0]
	        && rdzv_profile_load(&src, pick.deflt, &deflt, NULL, err, sizeof(err)) < 0)) {
		printf("error: %s\n", set ? err : "out of memory");
		goto fail;
	}
	printf("# profile: %s (%s)", pick.chosen[0] ? pick.chosen : "none",
	       rdzv_pick_why_name(pick.why));
	if (pick.deflt[0] && strcmp(pick.deflt, pick.chosen) != 0)
		printf("; enforce/unset of %s (%s) apply too", pick.deflt,
		       rdzv_pick_why_name(pick.deflt_why));
	printf("; a step on %u node%s\n", pick.nnodes, pick.nnodes == 1 ? "" : "s");
	for (i = 0; i < set->n; i++) {
		const struct rdzv_env_entry *e = &set->v[i];
		const struct rdzv_profile_entry *pe = NULL;
		char line[RDZV_VALUE_MAX + 200];

		/* where: the default's line when the default's policy won */
		if (deflt && e->policy != RDZV_SET_DEFAULT && strstr(e->origin, "(default)"))
			pe = rdzv_profile_find_for(deflt, e->name, pick.nnodes);
		if (!pe && chosen)
			pe = rdzv_profile_find_for(chosen, e->name, pick.nnodes);
		if (e->value)
			snprintf(line, sizeof(line), "%s=%s", e->name, e->value);
		else
			snprintf(line, sizeof(line), "%s", e->name);
		printf("%-8s %-40s # %s%s%s\n", policy_word(e->policy), line, e->origin,
		       pe ? ", " : "", pe ? pe->where : "");
	}
	if (set->n == 0)
		printf("# (no variables)\n");
	if (needs.mnnvl)
		printf("%-8s %-40s # %s\n", "require", "mnnvl", needs.mnnvl_where);
	/* Say what a one-node view leaves out, unless asked for it. */
	if (!a->nodes_given && (has_scope(chosen, RDZV_SCOPE_MULTI)
	                        || has_scope(deflt, RDZV_SCOPE_MULTI)))
		printf("# multinode entries apply to steps on several nodes: see them with "
		       "--nodes 2\n");
	rv = 0;
fail:
	rdzv_envset_destroy(set);
	rdzv_profile_destroy(chosen);
	rdzv_profile_destroy(deflt);
	return rv;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plugstack", required_argument, NULL, 'c' },
		{ "dir", required_argument, NULL, 'd' },
		{ "site-default", required_argument, NULL, 's' },
		{ "partition-map", required_argument, NULL, 'm' },
		{ "partition", required_argument, NULL, 'p' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "owner", required_argument, NULL, 'u' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *plugstack = NULL, *dir = NULL, *site = NULL, *map = NULL, *cmd;
	struct args a;
	struct rdzv_profile_dir d;
	char err[ERRLEN];
	uint64_t uid;
	int c;

	memset(&a, 0, sizeof(a));
	a.nodes = 1;
	rdzv_conf_defaults(&a.conf);
	while ((c = getopt_long(argc, argv, "c:d:s:m:p:N:u:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			plugstack = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 's':
			site = optarg;
			break;
		case 'm':
			map = optarg;
			break;
		case 'p':
			a.partition = optarg;
			break;
		case 'N':
			if (rdzv_parse_u64(optarg, 1, 1000000, &uid) < 0) {
				fprintf(stderr, "rdzv-profile: --nodes=%s: expected a node count "
				        "(1 or more)\n", optarg);
				return 2;
			}
			a.nodes = (unsigned)uid;
			a.nodes_given = 1;
			break;
		case 'u':
			if (rdzv_parse_u64(optarg, 0, 0xfffffffeu, &uid) < 0) {
				fprintf(stderr, "rdzv-profile: --owner=%s: expected a numeric uid\n", optarg);
				return 2;
			}
			a.owner = (uid_t)uid;
			break;
		case 'q':
			a.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			rdzv_print_version("rdzv-profile");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	if (strcmp(cmd, "check") != 0 && strcmp(cmd, "list") != 0 && strcmp(cmd, "show") != 0) {
		fprintf(stderr, "rdzv-profile: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	if (plugstack && rdzv_conf_read_plugstack(plugstack, &a.conf, err, sizeof(err)) < 0) {
		fprintf(stderr, "rdzv-profile: %s\n", err);
		return 1;
	}
	if ((dir && rdzv_strlcpy(a.conf.profiles, dir, sizeof(a.conf.profiles)) < 0)
	    || (site && rdzv_strlcpy(a.conf.profile, site, sizeof(a.conf.profile)) < 0)
	    || (map && rdzv_strlcpy(a.conf.partition_profiles, map,
	                            sizeof(a.conf.partition_profiles)) < 0)) {
		fprintf(stderr, "rdzv-profile: argument too long\n");
		return 2;
	}
	if (!a.conf.profiles[0]) {
		fprintf(stderr, "rdzv-profile: no profiles directory: give --dir or --plugstack\n");
		return 2;
	}
	if (a.conf.profiles[0] != '/') {
		/* The plugin wants an absolute path; the checker takes ./staging too. */
		char *abs = realpath(a.conf.profiles, NULL);

		if (!abs || rdzv_strlcpy(a.conf.profiles, abs, sizeof(a.conf.profiles)) < 0) {
			printf("error: %s: no such directory\n", a.conf.profiles);
			free(abs);
			return 1;
		}
		free(abs);
	}
	if (rdzv_profile_dir_open(&d, a.conf.profiles, a.owner, err, sizeof(err)) < 0) {
		printf("error: %s\n", err);
		return 1;
	}
	if (strcmp(cmd, "check") == 0 && optind == argc)
		return cmd_check(&a, &d);
	if (strcmp(cmd, "show") == 0 && optind >= argc - 1)
		return cmd_show(&a, &d, optind < argc ? argv[optind] : NULL);
	if (strcmp(cmd, "list") == 0 && optind == argc) {
		struct rdzv_profile_pick pick;

		if (rdzv_profile_pick(NULL, a.partition, a.conf.profile, a.conf.partition_profiles,
		                      &pick, err, sizeof(err)) < 0
		    || rdzv_profile_print_list(stdout, &d, &pick, a.partition, a.conf.profile,
		                               a.conf.partition_profiles, err, sizeof(err)) < 0) {
			printf("error: %s\n", err);
			return 1;
		}
		return 0;
	}
	usage(stderr);
	return 2;
}
