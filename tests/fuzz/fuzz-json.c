/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-json.c: the JSON reader of the step records (lib/common/json.c),
 * which rdzv-report runs on files and slurmstepd on what a task hands it.
 * Input: the text. Invariants: parse and valid agree; an accepted text's
 * strings are NUL-free and its tree no deeper than the limit; written back
 * with the writer, the tree parses again to the same shape and strings. */
#include "config.h"
#include "fuzz.h"
#include "json.h"

static int depth_ok(const struct rdzv_json *j, int d)
{
	for (; j; j = j->next) {
		if (d > RDZV_JSON_DEPTH_MAX + 1)
			return 0;
		if (j->kid && !depth_ok(j->kid, d + 1))
			return 0;
	}
	return 1;
}

static void write_back(struct rdzv_jw *w, const struct rdzv_json *j)
{
	const struct rdzv_json *k;

	if (j->key)
		rdzv_jw_key(w, j->key);
	switch (j->type) {
	case RDZV_JSON_OBJ:
	case RDZV_JSON_ARR:
		rdzv_jw_open(w, j->type == RDZV_JSON_OBJ ? '{' : '[');
		for (k = j->kid; k; k = k->next)
			write_back(w, k);
		rdzv_jw_close(w, j->type == RDZV_JSON_OBJ ? '}' : ']');
		break;
	case RDZV_JSON_STR:
		rdzv_jw_str(w, j->str);
		break;
	case RDZV_JSON_BOOL:
		rdzv_jw_bool(w, j->b);
		break;
	case RDZV_JSON_NUM:
		rdzv_jw_i64(w, 0); /* numbers: their shape only */
		break;
	default:
		rdzv_jw_str(w, NULL);
	}
}

static int same(const struct rdzv_json *a, const struct rdzv_json *b)
{
	for (; a && b; a = a->next, b = b->next) {
		if (a->type != b->type || (!a->key) != (!b->key) || (a->key && strcmp(a->key, b->key))
		    || (a->type == RDZV_JSON_STR && strcmp(a->str, b->str))
		    || (a->type == RDZV_JSON_BOOL && a->b != b->b) || !same(a->kid, b->kid))
			return 0;
	}
	return !a && !b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_json *j = rdzv_json_parse((const char *)data, size, NULL, 0), *again;
	struct rdzv_jw w;
	const char *text;

	FUZZ_ASSERT((j != NULL) == rdzv_json_valid((const char *)data, size));
	if (!j)
		return 0;
	FUZZ_ASSERT(depth_ok(j, 0));
	rdzv_jw_init(&w, 8u << 20);
	write_back(&w, j);
	text = rdzv_jw_text(&w);
	if (text && !w.full) {
		again = rdzv_json_parse(text, w.len, NULL, 0);
		FUZZ_ASSERT(again != NULL);
		FUZZ_ASSERT(same(j, again));
		rdzv_json_free(again);
	}
	rdzv_jw_free(&w);
	rdzv_json_free(j);
	return 0;
}
