/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-topo-hcalist: NCCL_IB_HCA lists are read and matched as NCCL does
 * (NCCL docs, NCCL_IB_HCA: ^ excludes, = matches exactly, :port narrows),
 * and malformed lists are refused with the bad item named. */
#include "config.h"
#include "hcalist.h"
#include "tap.h"

static void refused(const char *s, const char *why_part)
{
	struct rdzv_hca_list *l = (struct rdzv_hca_list *)1;
	char err[256] = "";

	ok(rdzv_hca_list_parse(s, &l, err, sizeof(err)) < 0 && l == NULL
	   && strstr(err, why_part), "'%s' is refused (%s)", s ? s : "(null)", err);
}

static struct rdzv_hca_list *parse(const char *s)
{
	struct rdzv_hca_list *l = NULL;
	char err[256] = "";

	if (rdzv_hca_list_parse(s, &l, err, sizeof(err)) < 0)
		diag("parse '%s': %s", s, err);
	return l;
}

int main(void)
{
	struct rdzv_hca_list *l;

	refused(NULL, "no NCCL_IB_HCA");
	refused("", "empty");
	refused("^", "empty");
	refused("^=", "empty");
	refused("mlx5_0,", "empty");
	refused(",mlx5_0", "empty");
	refused("mlx5_0,,mlx5_1", "empty");
	refused(":1", "empty device name");
	refused("mlx5_0:", "bad port");
	refused("mlx5_0:0", "bad port");
	refused("mlx5_0:256", "bad port");
	refused("mlx5_0:1x", "bad port");
	refused("mlx5 0", "bad character");
	refused("=mlx5_0;mlx5_1", "bad character");
	refused("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "too long");

	ok(rdzv_hca_list_allows(NULL, "mlx5_3", 1), "no list allows everything");

	l = parse("mlx5");
	ok(l && !l->exclude && !l->exact && l->n == 1, "a bare name is an including prefix list");
	ok(rdzv_hca_list_allows(l, "mlx5_0", 1) && rdzv_hca_list_allows(l, "mlx5_11", 2),
	   "a prefix matches every device that starts with it, any port");
	ok(!rdzv_hca_list_allows(l, "rdmap16s27", 1), "a prefix does not match other names");
	rdzv_hca_list_destroy(l);

	l = parse("=mlx5_1,mlx5_3:1");
	ok(l && l->exact && l->n == 2 && l->v[0].port == -1 && l->v[1].port == 1,
	   "= makes names exact; ports are optional per item");
	ok(rdzv_hca_list_allows(l, "mlx5_1", 2), "an item without port allows every port");
	ok(!rdzv_hca_list_allows(l, "mlx5_10", 1), "exact: mlx5_1 does not match mlx5_10");
	ok(rdzv_hca_list_allows(l, "mlx5_3", 1) && !rdzv_hca_list_allows(l, "mlx5_3", 2),
	   "mlx5_3:1 allows port 1 only");
	ok(!rdzv_hca_list_allows(l, "mlx5_0", 1), "unlisted devices are not allowed");
	rdzv_hca_list_destroy(l);

	l = parse("^=mlx5_0");
	ok(l && l->exclude && l->exact, "^= is an exact exclude list");
	ok(!rdzv_hca_list_allows(l, "mlx5_0", 1) && rdzv_hca_list_allows(l, "mlx5_0x", 1)
	   && rdzv_hca_list_allows(l, "mlx5_1", 1), "^=mlx5_0 excludes exactly mlx5_0");
	rdzv_hca_list_destroy(l);

	l = parse("^mlx5_1:2");
	ok(rdzv_hca_list_allows(l, "mlx5_1", 1) && !rdzv_hca_list_allows(l, "mlx5_1", 2)
	   && !rdzv_hca_list_allows(l, "mlx5_10", 2), "^prefix:port excludes that port of matching devices");
	rdzv_hca_list_destroy(l);

	rdzv_hca_list_destroy(NULL);
	ok(1, "destroy accepts NULL");

	/* Random strings over the list's alphabet: parse either refuses or
	 * gives a list whose every name is non-empty (ASan checks the rest). */
	{
		static const char alphabet[] = "^=,:m5_01x -";
		unsigned seed = 12345, n, bad = 0;

		for (n = 0; n < 20000; n++) {
			char s[24], err[128];
			size_t len, k;

			seed = seed * 1103515245u + 12345u;
			len = (seed >> 16) % (sizeof(s) - 1);
			for (k = 0; k < len; k++) {
				seed = seed * 1103515245u + 12345u;
				s[k] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
			}
			s[len] = '\0';
			if (rdzv_hca_list_parse(s, &l, err, sizeof(err)) == 0) {
				for (k = 0; k < l->n; k++)
					bad += !l->v[k].name[0];
				rdzv_hca_list_allows(l, "mlx5_0", 1);
				rdzv_hca_list_destroy(l);
			} else {
				bad += l != NULL || !err[0];
			}
		}
		ok(bad == 0, "20000 random lists: refused with a reason, or parsed into non-empty names");
	}
	return done_testing();
}
