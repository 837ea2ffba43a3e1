/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-profile: the profile parser, includes, the choice of profile and the
 * resolution into a task's environment (bad input first). Files come from
 * memory here; test-profile-dir covers the real directory. */
#include "config.h"
#include "profile.h"
#include "tap.h"

/* ---- an in-memory profile directory ---- */

struct mem_file {
	const char *name, *text;
};

static int mem_read(const void *ctx, const char *name, char **text, size_t *len, char *where,
                    size_t wherelen, char *err, size_t errlen)
{
	const struct mem_file *f;

	for (f = ctx; f->name; f++)
		if (strcmp(f->name, name) == 0) {
			snprintf(where, wherelen, "%s.profile", name);
			*text = strdup(f->text);
			*len = strlen(f->text);
			return *text ? 0 : -1;
		}
	snprintf(err, errlen, "%s.profile: no such profile", name);
	return -1;
}

/* ---- parse helpers ---- */

static int parse(const char *text, char *err, size_t errlen, struct rdzv_notes *notes)
{
	struct rdzv_profile_doc *doc = NULL;
	int r;

	err[0] = '\0';
	r = rdzv_profile_parse(text, strlen(text), "t.profile", &doc, notes, err, errlen);
	ok((r == 0) == (doc != NULL), "parse result and document agree");
	rdzv_profile_doc_destroy(doc);
	return r;
}

static void refused(const char *text, const char *want, const char *what)
{
	char err[512];
	int r = parse(text, err, sizeof(err), NULL);

	ok(r < 0 && strstr(err, want), "%s (%s)", what, err);
}

static void accepted(const char *text, const char *what)
{
	char err[512];
	int r = parse(text, err, sizeof(err), NULL);

	ok(r == 0, "%s%s%s", what, err[0] ? ": " : "", err);
}

static void test_names(void)
{
	char err[256], longname[100];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ok(rdzv_profile_name_check("", err, sizeof(err)) < 0, "an empty name is refused");
	ok(rdzv_profile_name_check(NULL, err, sizeof(err)) < 0, "a NULL name is refused");
	ok(rdzv_profile_name_check("../etc/passwd", err, sizeof(err)) < 0 && strstr(err, "'/'"),
	   "a path with '..' and '/' is refused (%s)", err);
	ok(rdzv_profile_name_check("..", err, sizeof(err)) < 0, "'..' is refused (%s)", err);
	ok(rdzv_profile_name_check(".hidden", err, sizeof(err)) < 0, "a hidden name is refused");
	ok(rdzv_profile_name_check("a/b", err, sizeof(err)) < 0, "'/' is refused");
	ok(rdzv_profile_name_check("x\n", err, sizeof(err)) < 0 && strstr(err, "0x0a"),
	   "a control character is refused and shown as hex (%s)", err);
	ok(rdzv_profile_name_check("caf\xc3\xa9", err, sizeof(err)) < 0, "non-ASCII is refused");
	ok(rdzv_profile_name_check("a b", err, sizeof(err)) < 0, "a blank is refused");
	ok(rdzv_profile_name_check("-x", err, sizeof(err)) < 0, "a leading '-' is refused");
	ok(rdzv_profile_name_check(longname, err, sizeof(err)) < 0 && strstr(err, "longer"),
	   "an overlong name is refused (%s)", err);
	ok(rdzv_profile_name_check("list", err, sizeof(err)) < 0, "'list' is reserved");
	ok(rdzv_profile_name_check("none", err, sizeof(err)) < 0, "'none' is reserved");
	ok(rdzv_profile_name_check("h100-ndr", err, sizeof(err)) == 0, "h100-ndr is a name");
	ok(rdzv_profile_name_check("site_base.v2+x", err, sizeof(err)) == 0,
	   "letters, digits, _ . + - make a name");
}

static void test_parse_errors(void)
{
	char big[RDZV_PROFILE_FILE_MAX + 10], line[RDZV_VALUE_MAX + 200];

	refused("frobnicate X=1\n", "t.profile:1: unknown directive 'frobnicate'",
	        "an unknown directive is refused with file:line");
	refused("# c\n\nNCCL_IB_HCA=mlx5_0\n", "t.profile:3: a setting needs a directive",
	        "a bare NAME=VALUE asks for default or enforce");
	refused("default NCCL_IB_HCAS=mlx5_0\n", "did you mean NCCL_IB_HCA?",
	        "NCCL_IB_HCAS -> did you mean NCCL_IB_HCA");
	refused("default NCCL_TOTALLY_NEW_KNOB=1\n", "known NCCL_TOTALLY_NEW_KNOB",
	        "an unknown NCCL name far from any known one suggests 'known'");
	refused("enforce nccl_ib_hca=mlx5_0\n", "upper-case names (did you mean NCCL_IB_HCA?)",
	        "a lower-case NCCL name is refused with the right spelling");
	refused("default NCCL_IB_GID_INDEX=three\n", "NCCL_IB_GID_INDEX=three: 'three' is not an integer",
	        "a non-integer for an integer variable is refused");
	refused("default NCCL_IB_DISABLE=no\n", "not 0 or 1", "yes/no for a 0/1 variable is refused");
	refused("enforce NCCL_IB_HCA=mlx5_0,,mlx5_1\n", "t.profile:1: NCCL_IB_HCA",
	        "a malformed HCA list is refused");
	refused("enforce NCCL_IB_HCA=mlx5_0:x\n", "bad port", "an HCA port that is not a number");
	refused("default NCCL_DEBUG=LOUD\n", "not one of", "an NCCL_DEBUG level that does not exist");
	refused("default NCCL_IB_HCA=mlx5_0\nenforce NCCL_IB_HCA=mlx5_1\n",
	        "t.profile:2: NCCL_IB_HCA already has an entry on line 1",
	        "a variable twice in one file is refused, both lines named");
	refused("unset NCCL_DEBUG\ndefault NCCL_DEBUG=WARN\n", "already has an entry on line 1",
	        "unset then default of one variable is refused");
	refused("default RANK=0\n", "set by Slurm or the rendezvous mode", "RANK is not a profile's");
	refused("enforce SLURM_PROCID=0\n", "set by Slurm", "SLURM_* is not a profile's");
	refused("default MASTER_ADDR=x\n", "rendezvous", "MASTER_ADDR is not a profile's");
	refused("default RDZV_MODE=torch\n", "rendezvous", "RDZV_* is not a profile's");
	refused("default 1BAD=x\n", "not a valid variable name", "a bad variable name");
	refused("default NCCL_DEBUG =INFO\n", "no blanks around '='", "blank before '=' is explained");
	refused("default =1\n", "expected 'default NAME=VALUE'", "an empty name");
	refused("default NCCL_DEBUG\n", "expected 'default NAME=VALUE'", "a missing '='");
	refused("unset\n", "expected 'unset NAME'", "unset without a name");
	refused("unset A B\n", "expected 'unset NAME'", "unset with two names");
	refused("known UCX_TLS\n", "for NCCL_*, RCCL_*, HSA_* and FI_* names",
	        "known is for the names rdzv checks");
	refused("include\n", "expected 'include NAME'", "include without a name");
	refused("include a b\n", "expected 'include NAME'", "include with two names");
	refused("include ../secret\n", "t.profile:1: profile name '../secret'",
	        "include of a path is refused");
	refused("inherit .hidden\n", "starts with '.'", "inherit of a hidden name is refused");
	refused("description one\ndescription two\n", "t.profile:2: second description",
	        "a second description is refused");
	refused("description\n", "description without text", "an empty description is refused");
	{
		char err[512];
		struct rdzv_profile_doc *doc = NULL;
		const char text[] = "default A=1\ndefault B=x\0y\n";

		ok(rdzv_profile_parse(text, sizeof(text) - 1, "t.profile", &doc, NULL, err,
		                      sizeof(err)) < 0 && strstr(err, "t.profile:2: NUL byte"),
		   "a NUL byte inside the file is refused with its line (%s)", err);
	}
	refused("default A=\x1b[31m\n", "control byte 0x1b", "an escape sequence is refused");
	refused("default A=x\x7f\n", "control byte 0x7f", "DEL is refused");
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line, "default A=", 10);
	refused(line, "t.profile:1: line longer than", "an overlong line is refused");
	{
		char err[512];
		struct rdzv_profile_doc *doc = NULL;

		memset(big, '#', sizeof(big));
		ok(rdzv_profile_parse(big, sizeof(big), "t.profile", &doc, NULL, err, sizeof(err)) < 0
		   && strstr(err, "larger than"), "an oversized file is refused (%s)", err);
	}
}

static void test_parse_ok(void)
{
	struct rdzv_profile_doc *doc = NULL;
	struct rdzv_notes notes;
	char err[512] = "";
	const char *text =
		"# site base\r\n"
		"description   Base settings for all GPU nodes   \r\n"
		"\n"
		"   # indented comment\n"
		"include other\n"
		"default NCCL_IB_GID_INDEX=3\n"
		"enforce NCCL_IB_HCA=mlx5_0:1,mlx5_1:1\n"
		"\tunset NCCL_P2P_DISABLE\t\n"
		"default UCX_TLS=rc,cuda_copy # not a comment\n"
		"default EMPTY=\n"
		"known NCCL_FROM_THE_FUTURE\n"
		"default NCCL_FROM_THE_FUTURE=1\n"
		"default NCCL_BUFFSIZE=16777216\n"
		"default NCCL_IB_GDR_LEVEL=PHB";

	accepted("", "an empty file is a valid profile");
	accepted("# only a comment", "a file of comments is valid");
	rdzv_notes_init(&notes);
	ok(rdzv_profile_parse(text, strlen(text), "t.profile", &doc, &notes, err, sizeof(err)) == 0,
	   "a profile with every directive parses%s%s", err[0] ? ": " : "", err);
	if (!doc) {
		rdzv_notes_clear(&notes);
		return;
	}
	is_str(doc->description, "Base settings for all GPU nodes",
	       "the description drops blanks and CR around it");
	is_int(doc->n, 10, "10 directives (comments and blank lines skipped)");
	ok(doc->v[0].kind == RDZV_PL_INCLUDE && strcmp(doc->v[0].name, "other") == 0
	   && doc->v[0].line == 5, "include other on line 5");
	ok(doc->v[2].kind == RDZV_PL_ENFORCE && strcmp(doc->v[2].value, "mlx5_0:1,mlx5_1:1") == 0,
	   "enforce keeps the value");
	ok(doc->v[3].kind == RDZV_PL_UNSET && strcmp(doc->v[3].name, "NCCL_P2P_DISABLE") == 0,
	   "unset with tabs around it");
	is_str(doc->v[4].value, "rc,cuda_copy # not a comment", "'#' after a value is part of it");
	is_str(doc->v[5].value, "", "an empty value is allowed");
	is_int(notes.n, 2, "two warnings: a debug-only and a deprecated variable");
	ok(notes.n >= 1 && strstr(notes.v[0], "t.profile:13: warning: NCCL_BUFFSIZE is for debugging"),
	   "the debug-only warning names file:line (%s)", notes.n ? notes.v[0] : "");
	ok(notes.n >= 2 && strstr(notes.v[1], "t.profile:14: warning: NCCL_IB_GDR_LEVEL is deprecated "
	                          "(renamed NCCL_NET_GDR_LEVEL)"),
	   "the deprecated warning says what replaced it (%s)", notes.n > 1 ? notes.v[1] : "");
	rdzv_profile_doc_destroy(doc);
	rdzv_notes_clear(&notes);
	rdzv_notes_clear(&notes);
	rdzv_profile_doc_destroy(NULL);
}

/* ---- includes ---- */

static const struct mem_file files[] = {
	{ "base", "description Site base\n"
	          "enforce NCCL_IB_HCA=mlx5_0,mlx5_1\n"
	          "default NCCL_IB_GID_INDEX=3\n"
	          "unset NCCL_P2P_DISABLE\n"
	          "default NCCL_SOCKET_IFNAME=^docker,lo\n" },
	{ "h100", "description H100 nodes\n"
	          "include base\n"
	          "default NCCL_IB_GID_INDEX=0\n"
	          "default NCCL_NVLS_ENABLE=1\n" },
	{ "override-first", "default NCCL_IB_GID_INDEX=7\n"
	                    "include base\n" },
	{ "debug", "description For chasing hangs\n"
	           "enforce NCCL_DEBUG=INFO\n"
	           "default NCCL_IB_HCA=mlx5_9\n"
	           "default NCCL_P2P_DISABLE=1\n" },
	{ "loop-a", "include loop-b\n" },
	{ "loop-b", "default A=1\ninclude loop-a\n" },
	{ "self", "include self\n" },
	{ "d0", "include d1\n" }, { "d1", "include d2\n" }, { "d2", "include d3\n" },
	{ "d3", "include d4\n" }, { "d4", "include d5\n" }, { "d5", "include d6\n" },
	{ "d6", "include d7\n" }, { "d7", "include d8\n" }, { "d8", "include d9\n" },
	{ "d9", "default A=1\n" },
	{ "dangling", "default A=1\ninclude missing\n" },
	{ "bad-child", "include broken\n" },
	{ "broken", "default A=1\n\nenforce NCCL_IB_HCAS=x\n" },
	{ "empty", "" },
	{ NULL, NULL }
};

static const struct rdzv_profile_source mem_src = { mem_read, files };

static void test_load(void)
{
	struct rdzv_profile *p = NULL;
	const struct rdzv_profile_entry *e;
	char err[1024];
	int i;

	ok(rdzv_profile_load(&mem_src, "loop-a", &p, NULL, err, sizeof(err)) < 0 && !p
	   && strstr(err, "loop-b.profile:2: include cycle: loop-a -> loop-b -> loop-a; included from loop-a.profile:1"),
	   "an include cycle is refused with the chain (%s)", err);
	ok(rdzv_profile_load(&mem_src, "self", &p, NULL, err, sizeof(err)) < 0
	   && strstr(err, "self.profile:1: include cycle: self -> self"), "a profile including itself (%s)", err);
	ok(rdzv_profile_load(&mem_src, "d0", &p, NULL, err, sizeof(err)) < 0
	   && strstr(err, "d7.profile:1: includes nested deeper than 8: d0 -> d1") && strstr(err, "included from d6.profile:1 <- d5.profile:1"), "includes deeper than 8 are refused (%s)", err);
	ok(rdzv_profile_load(&mem_src, "d2", &p, NULL, err, sizeof(err)) == 0 && p,
	   "includes 7 deep are fine");
	rdzv_profile_destroy(p);
	p = NULL;
	ok(rdzv_profile_load(&mem_src, "dangling", &p, NULL, err, sizeof(err)) < 0
	   && strstr(err, "missing.profile: no such profile; included from dangling.profile:2"),
	   "a missing include names the including line (%s)", err);
	ok(rdzv_profile_load(&mem_src, "bad-child", &p, NULL, err, sizeof(err)) < 0
	   && strstr(err, "broken.profile:3: unknown NCCL variable NCCL_IB_HCAS (did you mean "
	                  "NCCL_IB_HCA?); included from bad-child.profile:1"),
	   "an error inside an include names the included file and line (%s)", err);
	ok(rdzv_profile_load(&mem_src, "nosuch", &p, NULL, err, sizeof(err)) < 0
	   && strstr(err, "no such profile"), "a missing profile (%s)", err);
	ok(rdzv_profile_load(&mem_src, "../base", &p, NULL, err, sizeof(err)) < 0,
	   "a path is refused before any read");

	err[0] = '\0';
	i = rdzv_profile_load(&mem_src, "h100", &p, NULL, err, sizeof(err));
	ok(i == 0 && p, "h100 (includes base) loads%s%s", err[0] ? ": " : "", err);
	if (!p)
		return;
	is_str(p->description, "H100 nodes", "the description is the profile's own, not base's");
	is_int(p->n, 5, "5 variables after merging");
	e = rdzv_profile_find(p, "NCCL_IB_GID_INDEX");
	ok(e && strcmp(e->value, "0") == 0 && strcmp(e->where, "h100.profile:3") == 0,
	   "h100's line overrides base's and is the one named (%s)", e ? e->where : "");
	e = rdzv_profile_find(p, "NCCL_IB_HCA");
	ok(e && e->policy == RDZV_SET_ENFORCE && strcmp(e->where, "base.profile:2") == 0,
	   "base's enforce is inherited with its origin");
	e = rdzv_profile_find(p, "NCCL_P2P_DISABLE");
	ok(e && e->policy == RDZV_SET_UNSET && !e->value, "base's unset is inherited");
	ok(rdzv_profile_find(p, "NOPE") == NULL && rdzv_profile_find(NULL, "X") == NULL,
	   "find of an absent variable is NULL");
	rdzv_profile_destroy(p);

	ok(rdzv_profile_load(&mem_src, "override-first", &p, NULL, err, sizeof(err)) == 0,
	   "override-first loads");
	e = p ? rdzv_profile_find(p, "NCCL_IB_GID_INDEX") : NULL;
	ok(e && strcmp(e->value, "3") == 0, "a line before the include is overridden by it");
	ok(p && !p->description, "no description is NULL");
	rdzv_profile_destroy(p);
	rdzv_profile_destroy(NULL);
}

/* ---- which profile applies ---- */

static void test_pick(void)
{
	struct rdzv_profile_pick k;
	char err[512], name[64];

	ok(rdzv_partition_map_check("gpu", err, sizeof(err)) < 0 && strstr(err, "PARTITION:PROFILE"),
	   "a map item without ':' is refused (%s)", err);
	ok(rdzv_partition_map_check("gpu:", err, sizeof(err)) < 0, "an empty profile in the map");
	ok(rdzv_partition_map_check(":h100", err, sizeof(err)) < 0, "an empty partition in the map");
	ok(rdzv_partition_map_check("gpu:h100,", err, sizeof(err)) < 0 && strstr(err, "trailing"),
	   "a trailing comma (%s)", err);
	ok(rdzv_partition_map_check("gpu:../x", err, sizeof(err)) < 0 && strstr(err, "'/'"),
	   "a path as profile in the map (%s)", err);
	ok(rdzv_partition_map_check("gpu:list", err, sizeof(err)) < 0, "a reserved word in the map");
	ok(rdzv_partition_map_lookup("gpu:h100,cpu:", "gpu", name, sizeof(name), err, sizeof(err)) < 0,
	   "lookup checks the whole map, not only up to the match");
	ok(rdzv_partition_map_check("", err, sizeof(err)) == 0
	   && rdzv_partition_map_check(NULL, err, sizeof(err)) == 0, "an empty map is valid");
	is_int(rdzv_partition_map_lookup("gpu:h100,debug:dbg", "debug", name, sizeof(name), err,
	                                 sizeof(err)), 1, "debug is in the map");
	is_str(name, "dbg", "debug maps to dbg");
	is_int(rdzv_partition_map_lookup("gpu:h100", "gpu2", name, sizeof(name), err, sizeof(err)), 0,
	       "a partition is matched whole (gpu2 is not gpu)");
	is_int(rdzv_partition_map_lookup("gpu:h100", NULL, name, sizeof(name), err, sizeof(err)), 0,
	       "an unknown partition matches nothing");
	/* SLURM_JOB_PARTITION as srun/salloc -p A,B set it before Slurm 24.11.3 */
	is_int(rdzv_partition_map_lookup("gpu:h100,debug:h100", "gpu,debug", name, sizeof(name), err,
	                                 sizeof(err)), 1, "a list whose partitions share a profile is found");
	is_str(name, "h100", "... that profile");
	is_int(rdzv_partition_map_lookup("gpu:h100", "cpu,debug", name, sizeof(name), err, sizeof(err)),
	       0, "a list none of whose partitions is mapped matches nothing");
	is_int(rdzv_partition_map_lookup("gpu:h100,debug:dbg", "gpu,debug", name, sizeof(name), err,
	                                 sizeof(err)), RDZV_PARTITION_AMBIGUOUS,
	       "a list whose partitions map to different profiles is ambiguous");
	is_str(name, "", "... and names no profile");
	is_int(rdzv_partition_map_lookup("gpu:h100", "gpu,debug", name, sizeof(name), err, sizeof(err)),
	       RDZV_PARTITION_AMBIGUOUS, "a list with one mapped and one unmapped partition is ambiguous");
	ok(rdzv_partition_map_lookup("gpu:h100", "gpu,,debug", name, sizeof(name), err, sizeof(err)) < 0
	   && strstr(err, "SLURM_JOB_PARTITION"), "an empty name in the list is refused (%s)", err);
	ok(rdzv_profile_pick(NULL, "gpu,debug", "base", "gpu:h100,debug:dbg", &k, err, sizeof(err)) == 0
	   && k.partition_ambiguous && k.why == RDZV_PICK_SITE && strcmp(k.chosen, "base") == 0,
	   "an ambiguous list picks the site default and says it was ambiguous");
	ok(rdzv_profile_pick(NULL, "gpu,debug", "base", "gpu:h100,debug:h100", &k, err, sizeof(err)) == 0
	   && !k.partition_ambiguous && k.why == RDZV_PICK_PARTITION && strcmp(k.chosen, "h100") == 0,
	   "an unambiguous list picks its partitions' profile");

	ok(rdzv_profile_pick("../x", "gpu", "base", "gpu:h100", &k, err, sizeof(err)) < 0,
	   "a user's path is refused by pick");
	ok(rdzv_profile_pick(NULL, NULL, "../x", "", &k, err, sizeof(err)) < 0,
	   "a bad site default is refused");
	ok(rdzv_profile_pick(NULL, "gpu", "base", "gpu", &k, err, sizeof(err)) < 0,
	   "a bad partition map is refused");

	ok(rdzv_profile_pick(NULL, "gpu", "base", "gpu:h100", &k, err, sizeof(err)) == 0
	   && strcmp(k.chosen, "h100") == 0 && strcmp(k.deflt, "h100") == 0
	   && k.why == RDZV_PICK_PARTITION, "the partition default beats the site default");
	ok(rdzv_profile_pick("", "cpu", "base", "gpu:h100", &k, err, sizeof(err)) == 0
	   && strcmp(k.chosen, "base") == 0 && k.why == RDZV_PICK_SITE,
	   "the site default applies in another partition");
	ok(rdzv_profile_pick("debug", "gpu", "base", "gpu:h100", &k, err, sizeof(err)) == 0
	   && strcmp(k.chosen, "debug") == 0 && strcmp(k.deflt, "h100") == 0
	   && k.why == RDZV_PICK_USER && k.deflt_why == RDZV_PICK_PARTITION,
	   "the user's choice beats both; the partition default is kept for its policy");
	ok(rdzv_profile_pick("none", "gpu", "base", "gpu:h100", &k, err, sizeof(err)) == 0
	   && k.chosen[0] == '\0' && strcmp(k.deflt, "h100") == 0 && k.why == RDZV_PICK_USER_NONE,
	   "none chooses nothing but keeps the default for its policy");
	ok(rdzv_profile_pick(NULL, NULL, NULL, NULL, &k, err, sizeof(err)) == 0
	   && !k.chosen[0] && !k.deflt[0] && k.why == RDZV_PICK_NONE, "nothing configured");
	is_str(rdzv_pick_why_name(RDZV_PICK_PARTITION), "partition default", "why names");
}

/* ---- resolution into an environment ---- */

struct mem_env {
	const char *names[16];
	char *values[16];
	int n;
};

static int env_get(void *ctx, const char *name, char *buf, size_t len)
{
	struct mem_env *m = ctx;
	int i;

	for (i = 0; i < m->n; i++)
		if (m->names[i] && strcmp(m->names[i], name) == 0 && m->values[i]) {
			snprintf(buf, len, "%s", m->values[i]);
			return 1;
		}
	return 0;
}

static int env_set(void *ctx, const char *name, const char *value)
{
	struct mem_env *m = ctx;
	int i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0)
			break;
	if (i == m->n) {
		if (m->n == 16)
			return -1;
		m->names[m->n++] = name;
	}
	free(m->values[i]);
	m->values[i] = strdup(value);
	return 0;
}

static int env_unset(void *ctx, const char *name)
{
	struct mem_env *m = ctx;
	int i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0) {
			free(m->values[i]);
			m->values[i] = NULL;
		}
	return 0;
}

static const char *env_val(struct mem_env *m, const char *name)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0)
			return m->values[i];
	return NULL;
}

static void test_resolve(void)
{
	struct rdzv_profile_pick k;
	struct rdzv_envset *set = rdzv_envset_create();
	struct mem_env env = { { NULL }, { NULL }, 0 };
	struct rdzv_env_ops ops = { env_get, env_set, env_unset, &env };
	const struct rdzv_env_entry *e;
	char err[1024];
	int i, r;

	/* A broken default fails the step even when the user picked another
	 * profile: its policy must hold, so it must be readable. */
	rdzv_profile_pick("h100", NULL, "broken", "", &k, err, sizeof(err));
	ok(set && rdzv_profile_resolve(&k, &mem_src, set, NULL, err, sizeof(err)) < 0
	   && strstr(err, "broken.profile:3"), "a malformed default profile fails resolution (%s)",
	   err);
	rdzv_envset_destroy(set);

	/* user chose "debug" in partition gpu whose default is h100 */
	set = rdzv_envset_create();
	rdzv_profile_pick("debug", "gpu", "base", "gpu:h100", &k, err, sizeof(err));
	err[0] = '\0';
	r = rdzv_profile_resolve(&k, &mem_src, set, NULL, err, sizeof(err));
	ok(r == 0, "debug over h100 resolves%s%s", err[0] ? ": " : "", err);
	e = rdzv_envset_find(set, "NCCL_DEBUG");
	ok(e && e->policy == RDZV_SET_ENFORCE && strcmp(e->origin, "profile debug") == 0,
	   "the chosen profile's own entries apply");
	e = rdzv_envset_find(set, "NCCL_IB_HCA");
	ok(e && e->policy == RDZV_SET_ENFORCE && strcmp(e->value, "mlx5_0,mlx5_1") == 0
	   && strcmp(e->origin, "profile h100 (default)") == 0,
	   "the default's enforced HCA list replaces the chosen profile's (%s)", e ? e->origin : "");
	e = rdzv_envset_find(set, "NCCL_P2P_DISABLE");
	ok(e && e->policy == RDZV_SET_UNSET, "the default's unset beats the chosen profile's default");
	e = rdzv_envset_find(set, "NCCL_IB_GID_INDEX");
	ok(!e, "the default's plain defaults do not apply when the user chose another profile");

	/* apply over a user environment */
	env_set(&env, "NCCL_IB_HCA", "mlx5_7");
	env_set(&env, "NCCL_P2P_DISABLE", "1");
	env_set(&env, "NCCL_DEBUG", "WARN");
	ok(rdzv_envset_apply(set, &ops, err, sizeof(err)) == 0, "the set applies");
	is_str(env_val(&env, "NCCL_IB_HCA"), "mlx5_0,mlx5_1", "enforce beats the user's export");
	ok(env_val(&env, "NCCL_P2P_DISABLE") == NULL, "unset removes the user's export");
	is_str(env_val(&env, "NCCL_DEBUG"), "INFO", "the chosen profile's enforce beats the user");
	e = rdzv_envset_find(set, "NCCL_IB_HCA");
	ok(e && e->outcome == RDZV_OUT_ENFORCED && strcmp(e->user_value, "mlx5_7") == 0,
	   "the outcome records the replaced user value");
	rdzv_envset_destroy(set);
	for (i = 0; i < env.n; i++)
		free(env.values[i]);
	memset(&env, 0, sizeof(env));

	/* none: only the default's policy */
	set = rdzv_envset_create();
	rdzv_profile_pick("none", "gpu", "base", "gpu:h100", &k, err, sizeof(err));
	r = rdzv_profile_resolve(&k, &mem_src, set, NULL, err, sizeof(err));
	ok(r == 0 && set->n == 2,
	   "none keeps exactly the default's enforce and unset entries (%zu)", set->n);
	ok(!rdzv_envset_find(set, "NCCL_NVLS_ENABLE") && !rdzv_envset_find(set, "NCCL_SOCKET_IFNAME"),
	   "none drops the default's plain defaults");
	rdzv_envset_destroy(set);

	/* the default itself: all entries, once */
	set = rdzv_envset_create();
	rdzv_profile_pick(NULL, "gpu", "base", "gpu:h100", &k, err, sizeof(err));
	r = rdzv_profile_resolve(&k, &mem_src, set, NULL, err, sizeof(err));
	ok(r == 0 && set->n == 5,
	   "the partition default gives all 5 variables (%zu)", set->n);
	e = rdzv_envset_find(set, "NCCL_IB_GID_INDEX");
	ok(e && strcmp(e->value, "0") == 0 && strcmp(e->origin, "profile h100") == 0
	   && e->policy == RDZV_SET_DEFAULT, "h100's default with origin 'profile h100'");
	/* user export beats a default */
	env_set(&env, "NCCL_IB_GID_INDEX", "5");
	ok(rdzv_envset_apply(set, &ops, err, sizeof(err)) == 0, "applies");
	is_str(env_val(&env, "NCCL_IB_GID_INDEX"), "5", "the user's export beats a default");
	e = rdzv_envset_find(set, "NCCL_IB_GID_INDEX");
	ok(e && e->outcome == RDZV_OUT_USER_KEPT, "and the outcome says so");
	is_str(env_val(&env, "NCCL_NVLS_ENABLE"), "1", "an unexported default is set");
	rdzv_envset_destroy(set);
	for (i = 0; i < env.n; i++)
		free(env.values[i]);

	/* nothing configured */
	set = rdzv_envset_create();
	rdzv_profile_pick(NULL, NULL, NULL, NULL, &k, err, sizeof(err));
	ok(rdzv_profile_resolve(&k, &mem_src, set, NULL, err, sizeof(err)) == 0 && set->n == 0,
	   "no profile configured adds nothing");
	rdzv_profile_pick("empty", NULL, NULL, NULL, &k, err, sizeof(err));
	ok(rdzv_profile_resolve(&k, &mem_src, set, NULL, err, sizeof(err)) == 0 && set->n == 0,
	   "an empty profile adds nothing");
	rdzv_envset_destroy(set);
}


/* ---- the other families, and settings that need more than a variable ---- */

/* Parse text; the notes it drew, joined, into out. */
static int parse_notes(const char *text, char *err, size_t errlen, char *out, size_t outlen)
{
	struct rdzv_notes notes;
	size_t i, off = 0;
	int r;

	rdzv_notes_init(&notes);
	r = parse(text, err, errlen, &notes);
	out[0] = '\0';
	for (i = 0; i < notes.n && off < outlen; i++)
		off += (size_t)snprintf(out + off, outlen - off, "%s%s", i ? " | " : "", notes.v[i]);
	rdzv_notes_clear(&notes);
	return r;
}

static void test_family_lint(void)
{
	char err[512], notes[2048];

	/* known names of each family pass, with their values checked */
	accepted("default RCCL_MSCCL_ENABLE=0\ndefault RCCL_ENABLE_CLIQUE=1\n",
	         "RCCL's own names are accepted");
	accepted("default HSA_FORCE_FINE_GRAIN_PCIE=1\ndefault HSA_ENABLE_SDMA=0\n",
	         "the ROCm runtime's names are accepted");
	accepted("default FI_CXI_DEFAULT_CQ_SIZE=131072\nenforce FI_CXI_DISABLE_HOST_REGISTER=yes\n"
	         "default FI_CXI_RX_MATCH_MODE=hybrid\n", "fi_cxi(7)'s names are accepted");
	accepted("default FI_MR_CACHE_MONITOR=kdreg2\ndefault FI_PROVIDER=cxi\n",
	         "libfabric's core names are accepted");

	/* misspelt names: refused with the family's nearest name, file:line */
	refused("# x\ndefault RCCL_MSCCL_ENABEL=0\n",
	        "t.profile:2: unknown RCCL variable RCCL_MSCCL_ENABEL (did you mean RCCL_MSCCL_ENABLE?)",
	        "a misspelt RCCL name");
	refused("default HSA_FORCE_FINE_GRAIN_PCI=1\n",
	        "t.profile:1: unknown ROCm runtime variable HSA_FORCE_FINE_GRAIN_PCI (did you mean "
	        "HSA_FORCE_FINE_GRAIN_PCIE?)", "a misspelt HSA name");
	refused("default FI_CXI_RDZV_PROTOCOL=alt_read\n",
	        "t.profile:1: unknown libfabric cxi provider variable FI_CXI_RDZV_PROTOCOL (did you "
	        "mean FI_CXI_RDZV_PROTO?)", "a misspelt FI_CXI name");
	refused("default FI_MR_CACHE_MONITER=kdreg2\n",
	        "t.profile:1: unknown libfabric variable FI_MR_CACHE_MONITER (did you mean "
	        "FI_MR_CACHE_MONITOR?)", "a misspelt core FI name");
	refused("default fi_cxi_rdzv_proto=alt_read\n",
	        "fi_cxi_rdzv_proto: libfabric cxi provider reads upper-case names (did you mean "
	        "FI_CXI_RDZV_PROTO?)", "a lower-case FI_CXI name");
	refused("default RCCL_BRAND_NEW_SWITCH=1\n",
	        "not among the RCCL variables rdzv knows; if it is newer, declare it: known "
	        "RCCL_BRAND_NEW_SWITCH", "an unknown RCCL name far from any known one suggests 'known'");
	accepted("known RCCL_BRAND_NEW_SWITCH\ndefault RCCL_BRAND_NEW_SWITCH=1\n",
	         "a declared RCCL name is accepted");
	accepted("known FI_CXI_FUTURE_KNOB\ndefault FI_CXI_FUTURE_KNOB=1\n",
	         "a declared FI_CXI name is accepted");
	accepted("default FI_VERBS_IFACE=ib0\ndefault FI_EFA_USE_DEVICE_RDMA=1\n",
	         "another provider's FI_<PROV>_ names are not refused");
	ok(parse_notes("known RCCL_MSCCL_ENABLE\n", err, sizeof(err), notes, sizeof(notes)) == 0
	   && strstr(notes, "known RCCL_MSCCL_ENABLE: already in rdzv's table"),
	   "declaring a known RCCL name draws a warning (%s)", notes);

	/* bad values: refused as NCCL's are, naming file:line */
	refused("default FI_CXI_RDZV_PROTO=alt_write\n",
	        "t.profile:1: FI_CXI_RDZV_PROTO=alt_write: 'alt_write' is not one of "
	        "default|alt_read|alt-read", "a rendezvous protocol the provider refuses");
	refused("default FI_MR_CACHE_MONITOR=kdreg\n", "'kdreg' is not one of "
	        "userfaultfd|uffd|memhooks|kdreg2|disabled", "a cache monitor that does not exist");
	refused("default FI_CXI_DEFAULT_CQ_SIZE=128k\n", "FI_CXI_DEFAULT_CQ_SIZE=128k: '128k' is not "
	        "an integer", "a CQ size that is not a number");
	refused("default FI_CXI_DISABLE_HOST_REGISTER=2\n", "'2' is not a boolean",
	        "a libfabric boolean that is not one");
	refused("default HSA_FORCE_FINE_GRAIN_PCIE=yes\n", "'yes' is not 0 or 1",
	        "the ROCm runtime reads only 0 and 1");

	/* what needs more than the environment: said, not refused */
	ok(parse_notes("# slingshot\ndefault FI_CXI_RDZV_PROTO=alt_read\n", err, sizeof(err), notes,
	               sizeof(notes)) == 0
	   && strstr(notes, "t.profile:2: note: FI_CXI_RDZV_PROTO=alt_read also needs the allocation "
	                    "option --network=disable_rdzv_get (sbatch, salloc or srun)"),
	   "alt_read: the note names file:line and the allocation option (%s)", notes);
	ok(parse_notes("default FI_CXI_RDZV_PROTO=default\n", err, sizeof(err), notes,
	               sizeof(notes)) == 0 && !notes[0],
	   "the default protocol needs no allocation option");
	ok(parse_notes("unset FI_CXI_RDZV_PROTO\n", err, sizeof(err), notes, sizeof(notes)) == 0
	   && !notes[0], "unsetting the protocol draws no note");
	ok(parse_notes("enforce FI_MR_CACHE_MONITOR=memhooks\n", err, sizeof(err), notes,
	               sizeof(notes)) == 0
	   && strstr(notes, "t.profile:1: warning: FI_MR_CACHE_MONITOR=memhooks can deadlock"),
	   "memhooks draws a warning with file:line (%s)", notes);
	ok(parse_notes("default FI_MR_CACHE_MONITOR=kdreg2\n", err, sizeof(err), notes,
	               sizeof(notes)) == 0 && !notes[0], "kdreg2 draws none");
}

/* ---- multinode lines ---- */

static void test_multinode_parse(void)
{
	struct rdzv_profile_doc *doc = NULL;
	char err[512] = "";
	const char *text = "default NCCL_NET=Socket\n"
	                   "multinode default NCCL_NET=OFI\n"
	                   "multinode\tenforce NCCL_CROSS_NIC=1\n"
	                   "multinode unset NCCL_SOCKET_NTHREADS\n";

	ok(rdzv_profile_parse(text, strlen(text), "t.profile", &doc, NULL, err, sizeof(err)) == 0
	   && doc && doc->n == 4, "multinode qualifies default, enforce and unset%s%s",
	   err[0] ? ": " : "", err);
	if (doc) {
		ok(!doc->v[0].multinode && doc->v[1].multinode && doc->v[1].kind == RDZV_PL_DEFAULT
		   && strcmp(doc->v[1].value, "OFI") == 0 && doc->v[2].multinode
		   && doc->v[2].kind == RDZV_PL_ENFORCE && doc->v[3].kind == RDZV_PL_UNSET
		   && doc->v[3].multinode, "the qualifier is kept on its line only");
		rdzv_profile_doc_destroy(doc);
	}
	refused("multinode include base\n",
	        "t.profile:1: 'multinode' qualifies default, enforce or unset (found 'include')",
	        "multinode before include is refused with file:line");
	refused("\nmultinode require mnnvl\n", "t.profile:2: 'multinode' qualifies",
	        "multinode before require is refused");
	refused("multinode\n", "(found 'nothing')", "a bare multinode is refused");
	refused("multinode multinode default NCCL_NET=OFI\n", "(found 'multinode')",
	        "multinode twice is refused");
	refused("multinode default NCCL_NETT=OFI\n", "unknown NCCL variable NCCL_NETT",
	        "a multinode line is linted like any other");
	refused("multinode default NCCL_IB_GID_INDEX=three\n", "'three' is not an integer",
	        "... values too");
	refused("multinode default NCCL_NET=OFI\nmultinode enforce NCCL_NET=IB\n",
	        "t.profile:2: NCCL_NET already has a multinode entry on line 1",
	        "two multinode lines for one variable");
	refused("multinode default NCCL_NET=OFI\ndefault NCCL_NET=Socket\n",
	        "t.profile:2: NCCL_NET: this line replaces the multinode line 1 in every step",
	        "a plain line after the multinode one would make it dead: refused");
	refused("default NCCL_NET=Socket\nmultinode default NCCL_NET=OFI\nenforce NCCL_NET=IB\n",
	        "t.profile:3: NCCL_NET already has an entry on line 1",
	        "a second plain line after a valid pair is a duplicate");
	refused("multinode default RANK=0\n", "RANK is set by Slurm",
	        "reserved names stay reserved");
}

static const struct mem_file mfiles[] = {
	{ "ss", "description Slingshot\n"
	        "default NCCL_NET_GDR_LEVEL=PHB\n"
	        "multinode default NCCL_NET=OFI\n"
	        "enforce NCCL_CROSS_NIC=1\n"
	        "multinode unset NCCL_SOCKET_NTHREADS\n" },
	{ "pair", "default NCCL_NET=Socket\n"
	          "multinode default NCCL_NET=OFI\n" },
	{ "over-any", "include pair\n"
	              "default NCCL_NET=IB\n" },
	{ "over-multi", "include ss\n"
	                "multinode enforce NCCL_NET=IB\n" },
	{ "multi-over-any", "include pair\n"
	                    "multinode enforce NCCL_NET=IB\n" },
	{ "site", "enforce NCCL_DEBUG=WARN\n"
	          "multinode enforce NCCL_NET=OFI\n"
	          "multinode unset NCCL_SOCKET_IFNAME\n" },
	{ NULL, NULL }
};

static const struct rdzv_profile_source mmem = { mem_read, mfiles };

/* The value var gets for a step on nnodes nodes ("(unset)" for an unset
 * entry, NULL when the profile says nothing). */
static const char *value_for(const char *chosen, const char *site, unsigned nnodes,
                             const char *var, enum rdzv_policy *policy, char *buf, size_t len)
{
	struct rdzv_profile_pick k;
	struct rdzv_envset *set = rdzv_envset_create();
	const struct rdzv_env_entry *e;
	char err[512];
	const char *rv = NULL;

	if (!set || rdzv_profile_pick(chosen, NULL, site, "", &k, err, sizeof(err)) < 0)
		goto out;
	k.nnodes = nnodes;
	if (rdzv_profile_resolve(&k, &mmem, set, NULL, err, sizeof(err)) < 0) {
		diag("resolve: %s", err);
		goto out;
	}
	if ((e = rdzv_envset_find(set, var))) {
		snprintf(buf, len, "%s", e->value ? e->value : "(unset)");
		if (policy)
			*policy = e->policy;
		rv = buf;
	}
out:
	rdzv_envset_destroy(set);
	return rv;
}

static void test_multinode_resolve(void)
{
	struct rdzv_profile *p = NULL;
	const struct rdzv_profile_entry *e;
	struct rdzv_profile_pick k;
	enum rdzv_policy pol = RDZV_SET_DEFAULT;
	char buf[64], err[512];
	const char *v;

	ok(rdzv_profile_pick("ss", NULL, NULL, "", &k, err, sizeof(err)) == 0 && k.nnodes == 0,
	   "pick leaves the node count 0 (a one-node view) for the caller to set");

	ok(value_for("ss", NULL, 1, "NCCL_NET", NULL, buf, sizeof(buf)) == NULL,
	   "one node: the multinode default does not apply");
	ok(value_for("ss", NULL, 0, "NCCL_NET", NULL, buf, sizeof(buf)) == NULL,
	   "an unknown count (0) counts as one node");
	v = value_for("ss", NULL, 2, "NCCL_NET", &pol, buf, sizeof(buf));
	ok(v && strcmp(v, "OFI") == 0 && pol == RDZV_SET_DEFAULT,
	   "two nodes: NCCL_NET=OFI as a default (%s)", v ? v : "nothing");
	v = value_for("ss", NULL, 512, "NCCL_NET", NULL, buf, sizeof(buf));
	is_str(v, "OFI", "512 nodes: the same");
	v = value_for("ss", NULL, 1, "NCCL_CROSS_NIC", NULL, buf, sizeof(buf));
	is_str(v, "1", "plain lines apply on one node");
	v = value_for("ss", NULL, 3, "NCCL_NET_GDR_LEVEL", NULL, buf, sizeof(buf));
	is_str(v, "PHB", "... and on several");
	ok(value_for("ss", NULL, 1, "NCCL_SOCKET_NTHREADS", NULL, buf, sizeof(buf)) == NULL,
	   "one node: a multinode unset removes nothing");
	v = value_for("ss", NULL, 2, "NCCL_SOCKET_NTHREADS", &pol, buf, sizeof(buf));
	ok(v && pol == RDZV_SET_UNSET, "two nodes: it is an unset entry");

	/* one line for every step, a later multinode line for several nodes */
	is_str(value_for("pair", NULL, 1, "NCCL_NET", NULL, buf, sizeof(buf)), "Socket",
	       "a pair: the plain line on one node");
	is_str(value_for("pair", NULL, 4, "NCCL_NET", NULL, buf, sizeof(buf)), "OFI",
	       "a pair: the multinode line on several");
	ok(rdzv_profile_load(&mmem, "pair", &p, NULL, err, sizeof(err)) == 0 && p && p->n == 2,
	   "a pair loads as two entries");
	if (p) {
		ok(p->v[0].scope == RDZV_SCOPE_SINGLE && p->v[1].scope == RDZV_SCOPE_MULTI,
		   "scopes: single-node, then multi-node");
		e = rdzv_profile_find_for(p, "NCCL_NET", 1);
		ok(e && strcmp(e->where, "pair.profile:1") == 0, "find_for(1) names line 1");
		e = rdzv_profile_find_for(p, "NCCL_NET", 8);
		ok(e && strcmp(e->where, "pair.profile:2") == 0, "find_for(8) names line 2");
		rdzv_profile_destroy(p);
		p = NULL;
	}

	/* includes: a later line overrides what came before, in the steps it
	 * applies to */
	is_str(value_for("over-any", NULL, 1, "NCCL_NET", NULL, buf, sizeof(buf)), "IB",
	       "a later plain line replaces an include's pair on one node");
	is_str(value_for("over-any", NULL, 2, "NCCL_NET", NULL, buf, sizeof(buf)), "IB",
	       "... and on several (the include's multinode line is replaced too)");
	ok(rdzv_profile_load(&mmem, "over-any", &p, NULL, err, sizeof(err)) == 0 && p && p->n == 1
	   && p->v[0].scope == RDZV_SCOPE_ANY, "... leaving one entry for every step");
	rdzv_profile_destroy(p);
	p = NULL;
	v = value_for("over-multi", NULL, 2, "NCCL_NET", &pol, buf, sizeof(buf));
	ok(v && strcmp(v, "IB") == 0 && pol == RDZV_SET_ENFORCE,
	   "a later multinode line replaces an include's multinode line");
	ok(value_for("over-multi", NULL, 1, "NCCL_NET", NULL, buf, sizeof(buf)) == NULL,
	   "... and still says nothing on one node");
	is_str(value_for("multi-over-any", NULL, 1, "NCCL_NET", NULL, buf, sizeof(buf)), "Socket",
	       "a multinode line over an include's pair keeps its plain line on one node");
	v = value_for("multi-over-any", NULL, 2, "NCCL_NET", &pol, buf, sizeof(buf));
	ok(v && strcmp(v, "IB") == 0 && pol == RDZV_SET_ENFORCE, "... and wins on several");

	/* the default profile's policy lines count by the same rule, over the
	 * user's choice */
	v = value_for("ss", "site", 2, "NCCL_NET", &pol, buf, sizeof(buf));
	ok(v && strcmp(v, "OFI") == 0 && pol == RDZV_SET_ENFORCE,
	   "two nodes: the site default's multinode enforce beats the chosen default");
	ok(value_for("ss", "site", 1, "NCCL_NET", NULL, buf, sizeof(buf)) == NULL,
	   "one node: neither applies");
	v = value_for("none", "site", 2, "NCCL_SOCKET_IFNAME", &pol, buf, sizeof(buf));
	ok(v && pol == RDZV_SET_UNSET, "--nccl-profile=none keeps the default's multinode unset");
	ok(value_for("none", "site", 1, "NCCL_SOCKET_IFNAME", NULL, buf, sizeof(buf)) == NULL,
	   "... on several nodes only");
}

int main(void)
{
	test_names();
	test_parse_errors();
	test_parse_ok();
	test_load();
	test_pick();
	test_resolve();
	test_family_lint();
	test_multinode_parse();
	test_multinode_resolve();
	return done_testing();
}
