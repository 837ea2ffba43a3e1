/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/common/: what every folder uses: strings, numbers and errors, a
 * variable's precedence (envset), JSON. Uses no other folder. */
/* json.c: see json.h. */
#include "config.h"
#include "json.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writer ---- */

void rdzv_jw_init(struct rdzv_jw *w, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->max = max;
}

void rdzv_jw_free(struct rdzv_jw *w)
{
	if (!w)
		return;
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

static void put(struct rdzv_jw *w, const char *s, size_t n)
{
	if (w->full || w->oom)
		return;
	if (w->len + n > w->max) {
		w->full = 1;
		return;
	}
	if (w->len + n + 1 > w->room) {
		size_t room = w->room ? w->room : 1024;
		char *b;

		while (room < w->len + n + 1)
			room *= 2;
		if (!(b = realloc(w->buf, room))) {
			w->oom = 1;
			return;
		}
		w->buf = b;
		w->room = room;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void sep(struct rdzv_jw *w)
{
	if (w->comma)
		put(w, ",", 1);
	w->comma = 1;
}

void rdzv_jw_open(struct rdzv_jw *w, char c)
{
	sep(w);
	put(w, &c, 1);
	w->comma = 0;
}

void rdzv_jw_close(struct rdzv_jw *w, char c)
{
	put(w, &c, 1);
	w->comma = 1;
}

static void put_str(struct rdzv_jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];

	put(w, "\"", 1);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			put(w, esc, 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			put(w, esc, 6);
		} else {
			put(w, (const char *)p, 1);
		}
	}
	put(w, "\"", 1);
}

void rdzv_jw_key(struct rdzv_jw *w, const char *key)
{
	sep(w);
	put_str(w, key);
	put(w, ":", 1);
	w->comma = 0;
}

void rdzv_jw_str(struct rdzv_jw *w, const char *s)
{
	sep(w);
	if (s)
		put_str(w, s);
	else
		put(w, "null", 4);
}

void rdzv_jw_u64(struct rdzv_jw *w, uint64_t v)
{
	char b[24];

	sep(w);
	put(w, b, (size_t)snprintf(b, sizeof(b), "%" PRIu64, v));
}

void rdzv_jw_i64(struct rdzv_jw *w, int64_t v)
{
	char b[24];

	sep(w);
	put(w, b, (size_t)snprintf(b, sizeof(b), "%" PRId64, v));
}

void rdzv_jw_bool(struct rdzv_jw *w, int b)
{
	sep(w);
	put(w, b ? "true" : "false", b ? 4 : 5);
}

void rdzv_jw_raw(struct rdzv_jw *w, const char *json, size_t n)
{
	sep(w);
	put(w, json, n);
}

const char *rdzv_jw_text(const struct rdzv_jw *w)
{
	return w->oom ? NULL : (w->buf ? w->buf : "");
}

/* ---- reader ---- */

struct rd {
	const char *s;
	size_t n, at;
	char *err;
	size_t errlen;
};

static void skip_ws(struct rd *r)
{
	while (r->at < r->n && (r->s[r->at] == ' ' || r->s[r->at] == '\t' || r->s[r->at] == '\n'
	                        || r->s[r->at] == '\r'))
		r->at++;
}

static int fail(struct rd *r, const char *what)
{
	return rdzv_err(r->err, r->errlen, "%s at byte %zu", what, r->at);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at r->at (its opening quote) into *out (malloc'd, decoded), or
 * only checked when out is NULL (nothing allocated). A \u escape below
 * 0x80 other than NUL becomes its byte, others UTF-8; a surrogate or NUL is
 * refused (no record writes one). */
#define PUT(c) do { if (b) b[o] = (char)(c); o++; } while (0)
static int read_str(struct rd *r, char **out)
{
	size_t i, o = 0;
	char *b = NULL;

	if (out)
		*out = NULL;
	if (r->at >= r->n || r->s[r->at] != '"')
		return fail(r, "expected a string");
	/* The decoded text is never longer than the source. */
	if (out && !(b = malloc(r->n - r->at + 1)))
		return fail(r, "out of memory");
	for (i = r->at + 1; i < r->n && r->s[i] != '"'; i++) {
		unsigned char c = (unsigned char)r->s[i];

		if (c < 0x20) {
			r->at = i;
			free(b);
			return fail(r, "a control character in a string");
		}
		if (c != '\\') {
			PUT(c);
			continue;
		}
		if (++i >= r->n)
			break;
		switch (r->s[i]) {
		case '"': PUT('"'); break;
		case '\\': PUT('\\'); break;
		case '/': PUT('/'); break;
		case 'b': PUT('\b'); break;
		case 'f': PUT('\f'); break;
		case 'n': PUT('\n'); break;
		case 'r': PUT('\r'); break;
		case 't': PUT('\t'); break;
		case 'u': {
			unsigned v = 0;
			int k, h;

			for (k = 1; k <= 4; k++) {
				if (i + k >= r->n || (h = hexval(r->s[i + k])) < 0) {
					r->at = i;
					free(b);
					return fail(r, "a bad \\u escape");
				}
				v = v * 16 + (unsigned)h;
			}
			i += 4;
			if (v == 0 || (v >= 0xd800 && v <= 0xdfff)) {
				r->at = i;
				free(b);
				return fail(r, "a \\u escape of NUL or a surrogate");
			}
			if (v < 0x80) {
				PUT((char)v);
			} else if (v < 0x800) {
				PUT((char)(0xc0 | (v >> 6)));
				PUT((char)(0x80 | (v & 0x3f)));
			} else {
				PUT((char)(0xe0 | (v >> 12)));
				PUT((char)(0x80 | ((v >> 6) & 0x3f)));
				PUT((char)(0x80 | (v & 0x3f)));
			}
			break;
		}
		default:
			r->at = i;
			free(b);
			return fail(r, "a bad escape");
		}
	}
	if (i >= r->n) {
		free(b);
		return fail(r, "an unterminated string");
	}
	if (b) {
		b[o] = '\0';
		*out = b;
	}
	r->at = i + 1;
	return 0;
}
#undef PUT

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int read_num(struct rd *r, double *v)
{
	size_t i = r->at, d;
	char tmp[64];

	if (i < r->n && r->s[i] == '-')
		i++;
	d = i;
	while (i < r->n && r->s[i] >= '0' && r->s[i] <= '9')
		i++;
	if (i == d || (r->s[d] == '0' && i - d > 1))
		return fail(r, "a bad number");
	if (i < r->n && r->s[i] == '.') {
		d = ++i;
		while (i < r->n && r->s[i] >= '0' && r->s[i] <= '9')
			i++;
		if (i == d)
			return fail(r, "a bad number");
	}
	if (i < r->n && (r->s[i] == 'e' || r->s[i] == 'E')) {
		i++;
		if (i < r->n && (r->s[i] == '+' || r->s[i] == '-'))
			i++;
		d = i;
		while (i < r->n && r->s[i] >= '0' && r->s[i] <= '9')
			i++;
		if (i == d)
			return fail(r, "a bad number");
	}
	if (i - r->at >= sizeof(tmp))
		return fail(r, "a number too long");
	memcpy(tmp, r->s + r->at, i - r->at);
	tmp[i - r->at] = '\0';
	*v = strtod(tmp, NULL);
	r->at = i;
	return 0;
}

static int word(struct rd *r, const char *w)
{
	size_t n = strlen(w);

	if (r->n - r->at < n || memcmp(r->s + r->at, w, n) != 0)
		return 0;
	r->at += n;
	return 1;
}

/* One grammar for both uses: with out, the value is built (and *out set);
 * without, it is only checked and nothing is allocated (a slurmstepd
 * checks every task's part of the record this way). */
static int parse_value(struct rd *r, int depth, struct rdzv_json **out);

/* An object's members or an array's elements, r->at on the opening
 * bracket; into *kids when kids is not NULL. */
static int parse_items(struct rd *r, char end, int depth, struct rdzv_json **kids)
{
	struct rdzv_json **tail = kids;

	r->at++;
	skip_ws(r);
	if (r->at < r->n && r->s[r->at] == end) {
		r->at++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct rdzv_json *v = NULL;

		skip_ws(r);
		if (end == '}') {
			if (read_str(r, kids ? &key : NULL) < 0)
				return -1;
			skip_ws(r);
			if (r->at >= r->n || r->s[r->at] != ':') {
				free(key);
				return fail(r, "expected ':'");
			}
			r->at++;
		}
		if (parse_value(r, depth + 1, kids ? &v : NULL) < 0) {
			free(key);
			return -1;
		}
		if (kids) {
			v->key = key;
			*tail = v;
			tail = &v->next;
		}
		skip_ws(r);
		if (r->at < r->n && r->s[r->at] == ',') {
			r->at++;
			continue;
		}
		if (r->at < r->n && r->s[r->at] == end) {
			r->at++;
			return 0;
		}
		return fail(r, end == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int parse_value(struct rd *r, int depth, struct rdzv_json **out)
{
	struct rdzv_json *j = NULL;
	double num = 0;
	int rc;
	char c;

	skip_ws(r);
	if (depth > RDZV_JSON_DEPTH_MAX)
		return fail(r, "nested too deep");
	if (r->at >= r->n)
		return fail(r, "unexpected end");
	if (out && !(j = calloc(1, sizeof(*j))))
		return fail(r, "out of memory");
	c = r->s[r->at];
	if (c == '{' || c == '[') {
		if (j)
			j->type = c == '{' ? RDZV_JSON_OBJ : RDZV_JSON_ARR;
		rc = parse_items(r, c == '{' ? '}' : ']', depth, j ? &j->kid : NULL);
	} else if (c == '"') {
		if (j)
			j->type = RDZV_JSON_STR;
		rc = read_str(r, j ? &j->str : NULL);
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		rc = read_num(r, &num);
		if (j) {
			j->type = RDZV_JSON_NUM;
			j->num = num;
		}
	} else if (word(r, "true") || word(r, "false")) {
		rc = 0;
		if (j) {
			j->type = RDZV_JSON_BOOL;
			j->b = c == 't';
		}
	} else if (word(r, "null")) {
		rc = 0; /* calloc's type is RDZV_JSON_NULL */
	} else {
		rc = fail(r, "unexpected character");
	}
	if (rc < 0) {
		rdzv_json_free(j);
		return -1;
	}
	if (out)
		*out = j;
	else
		rdzv_json_free(j); /* NULL: nothing was built */
	return 0;
}

struct rdzv_json *rdzv_json_parse(const char *text, size_t n, char *err, size_t errlen)
{
	struct rd r = { text, n, 0, err, errlen };
	struct rdzv_json *j = NULL;

	if (!text) {
		rdzv_err(err, errlen, "no text");
		return NULL;
	}
	if (parse_value(&r, 0, &j) < 0)
		return NULL;
	skip_ws(&r);
	if (r.at != r.n) {
		fail(&r, "text after the value");
		rdzv_json_free(j);
		return NULL;
	}
	return j;
}

void rdzv_json_free(struct rdzv_json *j)
{
	while (j) {
		struct rdzv_json *next = j->next;

		rdzv_json_free(j->kid);
		free(j->key);
		free(j->str);
		free(j);
		j = next;
	}
}

int rdzv_json_valid(const char *text, size_t n)
{
	struct rd r = { text, n, 0, NULL, 0 };

	if (!text || parse_value(&r, 0, NULL) < 0)
		return 0;
	skip_ws(&r);
	return r.at == r.n;
}

const struct rdzv_json *rdzv_json_get(const struct rdzv_json *obj, const char *key)
{
	const struct rdzv_json *k;

	if (!obj || obj->type != RDZV_JSON_OBJ)
		return NULL;
	for (k = obj->kid; k; k = k->next)
		if (k->key && strcmp(k->key, key) == 0)
			return k;
	return NULL;
}

const char *rdzv_json_str(const struct rdzv_json *obj, const char *key)
{
	const struct rdzv_json *v = rdzv_json_get(obj, key);

	return v && v->type == RDZV_JSON_STR ? v->str : NULL;
}

int rdzv_json_u32(const struct rdzv_json *obj, const char *key, uint32_t *v)
{
	const struct rdzv_json *j = rdzv_json_get(obj, key);

	if (!j || j->type != RDZV_JSON_NUM || !(j->num >= 0) || j->num > (double)UINT32_MAX
	    || (double)(uint32_t)j->num != j->num)
		return -1;
	*v = (uint32_t)j->num;
	return 0;
}
