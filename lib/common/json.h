/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/common/: what every folder uses: strings, numbers and errors, a
 * variable's precedence (envset), JSON. Uses no other folder. */
/* json.h: the little JSON the step records need (record.h): a bounded
 * writer, and a reader of a whole text into a small tree, with limits on
 * size and depth, for rdzv-report and for checking what a task hands its
 * node. Strings are kept as UTF-8 bytes; \u escapes of the writer's own
 * control characters are read back; no number is more than a decimal
 * integer or a plain fraction (the records hold no other). */
#ifndef RDZV_JSON_H
#define RDZV_JSON_H

#include <stddef.h>
#include <stdint.h>

/* ---- writer ---- */

/* A growing text of at most max bytes; past it, full is set and nothing
 * more is added (the caller says the record was cut). */
struct rdzv_jw {
	char *buf;
	size_t len, room, max;
	int full;  /* the text reached max */
	int oom;   /* an allocation failed */
	int comma; /* the next member or element needs a ',' first */
};

void rdzv_jw_init(struct rdzv_jw *w, size_t max);
void rdzv_jw_free(struct rdzv_jw *w); /* accepts a zeroed or half-built one */
/* '{' / '[' and their ends; a member key (an object's next member). */
void rdzv_jw_open(struct rdzv_jw *w, char c);
void rdzv_jw_close(struct rdzv_jw *w, char c);
void rdzv_jw_key(struct rdzv_jw *w, const char *key);
/* Values: a string (NULL writes null), a number, a boolean, a raw JSON
 * value the caller checked (rdzv_json_valid). */
void rdzv_jw_str(struct rdzv_jw *w, const char *s);
void rdzv_jw_u64(struct rdzv_jw *w, uint64_t v);
void rdzv_jw_i64(struct rdzv_jw *w, int64_t v);
void rdzv_jw_bool(struct rdzv_jw *w, int b);
void rdzv_jw_raw(struct rdzv_jw *w, const char *json, size_t n);
/* The text (NUL-terminated, owned by w), or NULL after an allocation failed. */
const char *rdzv_jw_text(const struct rdzv_jw *w);

/* ---- reader ---- */

enum rdzv_json_type { RDZV_JSON_NULL, RDZV_JSON_BOOL, RDZV_JSON_NUM, RDZV_JSON_STR,
	              RDZV_JSON_ARR, RDZV_JSON_OBJ };

struct rdzv_json {
	enum rdzv_json_type type;
	char *key;             /* an object's member: its name; else NULL */
	char *str;             /* STR: the decoded bytes (no NUL inside) */
	double num;            /* NUM */
	int b;                 /* BOOL */
	struct rdzv_json *kid; /* ARR, OBJ: first element or member */
	struct rdzv_json *next;
};

#define RDZV_JSON_DEPTH_MAX 16

/* Parse text[0..n) as one JSON value (whitespace around it allowed). Returns
 * the tree (rdzv_json_free), or NULL with the reason and byte offset in err. */
struct rdzv_json *rdzv_json_parse(const char *text, size_t n, char *err, size_t errlen);
void rdzv_json_free(struct rdzv_json *j); /* accepts NULL */
/* Whether text[0..n) is one valid JSON value. 1 or 0. */
int rdzv_json_valid(const char *text, size_t n);

/* An object's member by name (the first), or NULL; NULL-safe. */
const struct rdzv_json *rdzv_json_get(const struct rdzv_json *obj, const char *key);
/* A member's string, or NULL when absent or not a string. */
const char *rdzv_json_str(const struct rdzv_json *obj, const char *key);
/* A member's number as a non-negative integer into *v: 0, or -1 when
 * absent, not a number, negative, fractional or above UINT32_MAX. */
int rdzv_json_u32(const struct rdzv_json *obj, const char *key, uint32_t *v);

#endif
