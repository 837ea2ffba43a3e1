/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-record: the step record's pieces (lib/admin/record.c,
 * lib/common/json.c). Bad input first: malformed JSON of every kind is
 * refused with its offset; a task's hostile values come back byte for byte
 * through the writer and the reader; a node's record stays within its
 * limit and says how many tasks' parts it left out; file names never leave
 * the directory; record_dir= is refused when open to others, a link or a
 * file; a record is written whole, 0640, in place of what was there. */
#include "config.h"
#include "json.h"
#include "metrics.h"
#include "record.h"
#include "tap.h"
#include "recfix.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int parses(const char *s)
{
	return rdzv_json_valid(s, strlen(s));
}

static void malformed(void)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "[", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}",
		"\"abc", "\"a\\x\"", "\"a\\u12\"", "\"a\\u0000\"", "\"a\\ud800\"", "01", "1.",
		"1e", "-", "+1", ".5", "tru", "nul", "[1] 2", "\"a\nb\"", "{\"a\":1}}",
		"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", NULL };
	char err[128];
	int i, all = 1;
	struct rdzv_json *j;

	for (i = 0; bad[i]; i++)
		if (parses(bad[i])) {
			all = 0;
			diag("accepted: '%s'", bad[i]);
		}
	ok(all, "malformed JSON is refused (%d forms: empty, cut, trailing commas and text, bad "
	   "escapes, NUL and surrogates, bad numbers, raw newlines, 20 levels deep)", i);
	j = rdzv_json_parse("{\"a\": [1, 2,, 3]}", 17, err, sizeof(err));
	ok(!j && strstr(err, "at byte"), "... with where (%s)", err);
	ok(!rdzv_json_parse(NULL, 0, err, sizeof(err)), "no text at all is refused");
	ok(parses(" {\"a\":[1,2.5,-3e2,true,false,null,\"x\"],\"b\":{}} "),
	   "every kind of value is read, whitespace around it");
}

static void round_trip(void)
{
	static const char hostile[] = "a\"b\\c\n\t\x01\x1f\x7f \xc3\xa9 }]{[,:";
	struct rdzv_jw w;
	struct rdzv_json *j;
	const char *text;
	uint32_t v;

	rdzv_jw_init(&w, 4096);
	rdzv_jw_open(&w, '{');
	rdzv_jw_key(&w, "s");
	rdzv_jw_str(&w, hostile);
	rdzv_jw_key(&w, "k\"ey");
	rdzv_jw_u64(&w, 4294967295u);
	rdzv_jw_key(&w, "neg");
	rdzv_jw_i64(&w, -7);
	rdzv_jw_key(&w, "n");
	rdzv_jw_str(&w, NULL);
	rdzv_jw_key(&w, "arr");
	rdzv_jw_open(&w, '[');
	rdzv_jw_bool(&w, 1);
	rdzv_jw_open(&w, '{');
	rdzv_jw_close(&w, '}');
	rdzv_jw_raw(&w, "[1,2]", 5);
	rdzv_jw_close(&w, ']');
	rdzv_jw_close(&w, '}');
	text = rdzv_jw_text(&w);
	ok(text && !w.full && parses(text), "the writer's text is valid JSON: %s", text ? text : "");
	j = rdzv_json_parse(text, strlen(text), NULL, 0);
	ok(j && rdzv_json_str(j, "s") && strcmp(rdzv_json_str(j, "s"), hostile) == 0,
	   "quotes, backslashes, control characters, DEL and UTF-8 come back byte for byte");
	ok(rdzv_json_u32(j, "k\"ey", &v) == 0 && v == 4294967295u, "a key with a quote; 2^32-1");
	ok(rdzv_json_u32(j, "neg", &v) < 0, "a negative number is no u32");
	ok(rdzv_json_get(j, "n") && rdzv_json_get(j, "n")->type == RDZV_JSON_NULL
	   && !rdzv_json_str(j, "n"), "NULL is written as null, no string");
	ok(!rdzv_json_get(j, "missing") && !rdzv_json_get(NULL, "s"), "absent members are NULL");
	rdzv_json_free(j);
	rdzv_jw_free(&w);

	rdzv_jw_init(&w, 16);
	rdzv_jw_str(&w, "0123456789abcdefghij");
	ok(w.full && w.len <= 16, "past its limit the writer stops within it and says so (%zu bytes)", w.len);
	rdzv_jw_free(&w);
	rdzv_jw_free(NULL);
}

static const struct rdzv_json *var(const struct rdzv_json *task, const char *name)
{
	const struct rdzv_json *v, *vs = rdzv_json_get(task, "variables");

	for (v = vs ? vs->kid : NULL; v; v = v->next)
		if (rdzv_json_str(v, "name") && strcmp(rdzv_json_str(v, "name"), name) == 0)
			return v;
	return NULL;
}

static void task_part(void)
{
	struct rdzv_envset *e = recfix_task_env();
	struct rdzv_jw w;
	struct rdzv_json *j;
	uint32_t v;

	rdzv_jw_init(&w, RDZV_RECORD_TASK_MAX);
	rdzv_record_task_json(&w, 3, 1, "2-3", e, NULL);
	j = rdzv_json_parse(rdzv_jw_text(&w), w.len, NULL, 0);
	ok(j && rdzv_json_u32(j, "rank", &v) == 0 && v == 3 && rdzv_json_u32(j, "local_rank", &v) == 0
	   && v == 1 && strcmp(rdzv_json_str(j, "cpus"), "2-3") == 0,
	   "a task's part: rank 3, local rank 1, cpus 2-3");
	ok(var(j, "RANK") && strcmp(rdzv_json_str(var(j, "RANK"), "value"), "3") == 0
	   && strcmp(rdzv_json_str(var(j, "RANK"), "source"), "rdzv") == 0
	   && strcmp(rdzv_json_str(var(j, "RANK"), "outcome"), "set") == 0,
	   "... RANK=3 from rdzv, set");
	ok(strcmp(rdzv_json_str(var(j, "NCCL_IB_HCA"), "value"), "=mlx5_0:1") == 0
	   && strcmp(rdzv_json_str(var(j, "NCCL_IB_HCA"), "user_value"), "mlx5_9") == 0
	   && strcmp(rdzv_json_str(var(j, "NCCL_IB_HCA"), "policy"), "enforce") == 0,
	   "... an enforced entry: the profile's value, and the user's it replaced");
	ok(strcmp(rdzv_json_str(var(j, "MASTER_PORT"), "value"), "1234\"x") == 0
	   && strcmp(rdzv_json_str(var(j, "MASTER_PORT"), "source"), "user") == 0
	   && strcmp(rdzv_json_str(var(j, "MASTER_PORT"), "plugin_value"), "29500") == 0,
	   "... the user's kept value is the value the task got, the plugin's beside it");
	ok(var(j, "NCCL_DEBUG") && !rdzv_json_str(var(j, "NCCL_DEBUG"), "value")
	   && strcmp(rdzv_json_str(var(j, "NCCL_DEBUG"), "outcome"), "unset") == 0,
	   "... a removed variable: no value, outcome unset");
	ok(rdzv_record_env_hash(e) != rdzv_record_env_hash(NULL), "a profile's hash depends on it");
	rdzv_json_free(j);
	rdzv_jw_free(&w);
	rdzv_envset_destroy(e);
}

static void node_record(void)
{
	char *big = malloc(RDZV_RECORD_MAX);
	const char *parts[3];
	struct rdzv_record_exit ex[2] = { { 4, 0, 1000 }, { 5, 0x8b, 1200 } }; /* 0x8b: SIGSEGV+core */
	struct rdzv_record_node n;
	struct rdzv_jw w;
	struct rdzv_json *j;
	const struct rdzv_json *x;
	uint32_t v;
	int rc;

	recfix_node(&n, ex, 2);
	parts[0] = "{\"rank\":4,\"variables\":[]}";
	parts[1] = "{\"rank\":5,\"variables\":[]}";
	n.tasks = parts;
	n.ntasks_parts = 2;
	rdzv_jw_init(&w, RDZV_RECORD_MAX);
	rc = rdzv_record_node_json(&n, &w);
	j = rdzv_json_parse(rdzv_jw_text(&w), w.len, NULL, 0);
	ok(rc == 0 && j && rdzv_json_u32(j, "job", &v) == 0 && v == 12
	   && strcmp(rdzv_json_str(j, "node"), "n2") == 0
	   && strcmp(rdzv_json_str(rdzv_json_get(j, "profile"), "hash"), "0000000000abcdef") == 0,
	   "a node's record: job, node, the profile's hash (%d)", rc);
	x = rdzv_json_get(j, "exits");
	ok(x && x->kid && x->kid->next && rdzv_json_u32(x->kid->next, "signal", &v) == 0 && v == 11
	   && !rdzv_json_get(x->kid->next, "exit_code"), "... rank 5 ended by signal 11");
	ok(rdzv_json_u32(j, "tasks_left_out", &v) == 0 && v == 0, "... no task's part left out");
	rdzv_json_free(j);
	rdzv_jw_free(&w);

	/* A part too large for what is left is left out, counted; the record
	 * stays within its limit and valid. */
	memset(big, ' ', RDZV_RECORD_MAX - 1);
	big[0] = '[';
	big[RDZV_RECORD_MAX - 2] = ']';
	big[RDZV_RECORD_MAX - 1] = '\0';
	parts[2] = big;
	n.ntasks_parts = 3;
	n.tasks_lost = 1;
	rdzv_jw_init(&w, RDZV_RECORD_MAX);
	rc = rdzv_record_node_json(&n, &w);
	j = rdzv_json_parse(rdzv_jw_text(&w), w.len, NULL, 0);
	ok(rc == 1 && j && w.len <= RDZV_RECORD_MAX && rdzv_json_u32(j, "tasks_left_out", &v) == 0
	   && v == 2, "a part past the limit is left out and counted with the lost one (%u)", v);
	rdzv_json_free(j);
	rdzv_jw_free(&w);
	free(big);
}

static void files(void)
{
	char dir[] = "/tmp/rdzv-test-record.XXXXXX", path[512], name[64], err[256], buf[64];
	struct stat st;
	int fd;
	ssize_t k;

	ok(rdzv_record_name(1, 2, "n1", name, sizeof(name)) == 0 && strcmp(name, "1.2.n1.json") == 0,
	   "file name JOB.STEP.NODE.json (%s)", name);
	ok(rdzv_record_name(1, 2, "../x", name, sizeof(name)) < 0
	   && rdzv_record_name(1, 2, "..", name, sizeof(name)) < 0
	   && rdzv_record_name(1, 2, ".", name, sizeof(name)) < 0
	   && rdzv_record_name(1, 2, "", name, sizeof(name)) < 0
	   && rdzv_record_name(1, 2, NULL, name, sizeof(name)) < 0
	   && rdzv_record_name(1, 2, "n1", name, 8) < 0,
	   "... never out of the directory, never cut");
	if (!mkdtemp(dir)) {
		skip("mkdtemp: no temporary directory");
		return;
	}
	chmod(dir, 0777);
	ok(rdzv_record_dir_check(dir, err, sizeof(err)) < 0 && strstr(err, "writable by group or others"),
	   "record_dir open to others is refused (%s)", err);
	chmod(dir, 0755);
	ok(rdzv_record_dir_check(dir, err, sizeof(err)) == 0, "a directory of its own, 0755, is taken");
	ok(rdzv_record_dir_check("relative", err, sizeof(err)) < 0, "a relative path is refused");
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink(dir, path) == 0)
		ok(rdzv_record_dir_check(path, err, sizeof(err)) < 0 && strstr(err, "not a directory"),
		   "a symbolic link to a directory is refused, not followed (%s)", err);
	snprintf(path, sizeof(path), "%s/1.2.n1.json", dir);
	/* What was there (a link a user could not plant, but still) is replaced,
	 * not followed. */
	if (symlink("/etc/passwd", path) != 0)
		diag("symlink: no link planted");
	ok(rdzv_record_write(dir, "1.2.n1.json", "{\"a\":1}", 7, err, sizeof(err)) == 0,
	   "a record is written (%s)", err);
	ok(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0640,
	   "... a file of its own, mode 0640, in place of the link");
	fd = open(path, O_RDONLY);
	k = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[k > 0 ? k : 0] = '\0';
	is_str(buf, "{\"a\":1}\n", "... holding the record and a newline");
	ok(rdzv_record_write(dir, "a/b", "{}", 2, err, sizeof(err)) < 0, "a name with '/' is refused");
	/* Its parents count too (issue 45): one that others can write could
	 * swap the directory for theirs between the check and the write. */
	snprintf(path, sizeof(path), "%s/open", dir);
	snprintf(name, sizeof(name), "%s/open/rec", dir);
	if (mkdir(path, 0755) == 0 && mkdir(name, 0755) == 0 && chmod(path, 0777) == 0) {
		ok(rdzv_record_dir_check(name, err, sizeof(err)) < 0 && strstr(err, "open (a parent)")
		   && strstr(err, "writable by group or others"),
		   "a record_dir under a parent others can write is refused, the parent named (%s)", err);
		ok(chmod(path, 01777) == 0 && rdzv_record_dir_check(name, err, sizeof(err)) == 0,
		   "... under a sticky one (as /tmp), taken (%s)", err);
	} else {
		skip("mkdir: no nested directory");
		skip("mkdir: no nested directory");
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("cleanup failed");
}

static void metrics(void)
{
	static struct rdzv_metrics m;
	struct rdzv_metrics_step st;
	char dir[] = "/tmp/rdzv-test-metrics.XXXXXX", text[8192], path[512], err[256];
	const char *foreign = "# HELP other x\nnode_cpu_seconds_total 5\nrdzv_steps_total{mode=\"torch\"} 7\n"
	                      "rdzv_steps_total{mode=\"a b\"} 9\nrdzv_steps_total{mode=\"jax\"} -1\n"
	                      "rdzv_steps_total{mode=\"jax\"} 1e3\nrdzv_bogus_total 3\n"
	                      "rdzv_record_errors_total 2\ngarbage\n";
	long len;
	FILE *f;

	rdzv_metrics_read(&m, foreign, strlen(foreign));
	ok(m.n == 2, "metrics read back: only the plugin's families with plain values and labels "
	   "(%zu of 9 lines)", m.n);
	recfix_failed_step(&st, "h100-ndr");
	ok(rdzv_metrics_step(&m, &st) == 0, "a step is added");
	st.mode = "bad\"mode\n";
	st.cause = NULL;
	st.profile = NULL;
	ok(rdzv_metrics_step(&m, &st) == 0, "... and a second, with a hostile mode name");
	len = rdzv_metrics_text(&m, text, sizeof(text));
	ok(len > 0 && strstr(text, "rdzv_steps_total{mode=\"torch\"} 8\n")
	   && strstr(text, "rdzv_steps_total{mode=\"other\"} 1\n")
	   && strstr(text, "rdzv_step_failures_total{cause=\"exit\"} 1\n")
	   && strstr(text, "rdzv_record_errors_total 2\n"),
	   "counters add up; a label value outside [A-Za-z0-9._-] becomes \"other\"");
	ok(strstr(text, "rdzv_profile_info{profile=\"none\",hash=\"0000000000000000\"} 1\n")
	   && !strstr(text, "h100-ndr"), "one profile series: the last step's");
	ok(strstr(text, "# HELP rdzv_steps_total ") && strstr(text, "# TYPE rdzv_steps_total counter\n")
	   && strstr(text, "# TYPE rdzv_profile_info gauge\n")
	   && strstr(text, "rdzv_last_step_end_seconds 1765000000\n"),
	   "HELP and TYPE before each family; the last step's end");
	ok(rdzv_metrics_text(&m, text, 64) < 0, "a text that does not fit is refused");
	if (!mkdtemp(dir)) {
		skip("mkdtemp: no temporary directory");
		return;
	}
	chmod(dir, 0755);
	st.mode = "jax";
	ok(rdzv_metrics_update(dir, &st, err, sizeof(err)) == 0
	   && rdzv_metrics_update(dir, &st, err, sizeof(err)) == 0, "two updates of the file (%s)",
	   err);
	snprintf(path, sizeof(path), "%s/rdzv.prom", dir);
	text[0] = '\0';
	if ((f = fopen(path, "r"))) {
		len = (long)fread(text, 1, sizeof(text) - 1, f);
		text[len > 0 ? len : 0] = '\0';
		fclose(f);
	}
	ok(strstr(text, "rdzv_steps_total{mode=\"jax\"} 2\n") != NULL,
	   "... count both steps, read back from the file");
	chmod(dir, 0777);
	ok(rdzv_metrics_update(dir, &st, err, sizeof(err)) < 0 && strstr(err, "metrics_dir="),
	   "a metrics_dir open to others is refused (%s)", err);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("cleanup failed");
}

int main(void)
{
	malformed();
	round_trip();
	task_part();
	node_record();
	files();
	metrics();
	return done_testing();
}
