/* SPDX-License-Identifier: GPL-2.0-or-later */
/* profile_list.c: the text of --nccl-profile=list (shared by srun and the
 * admin's helper, so both show the same thing). */
#include "config.h"
#include "profile.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *mark(const char *name, const struct rdzv_profile_pick *pick,
                        const char *site_default)
{
	if (pick->chosen[0] && strcmp(name, pick->chosen) == 0)
		return pick->why == RDZV_PICK_USER ? "chosen" : "applies";
	if (pick->deflt[0] && strcmp(name, pick->deflt) == 0)
		return "enforced entries apply";
	if (site_default && strcmp(name, site_default) == 0)
		return "site default";
	return NULL;
}

int rdzv_profile_print_list(FILE *out, const struct rdzv_profile_dir *d,
                            const struct rdzv_profile_pick *pick, const char *partition,
                            const char *site_default, const char *partition_map, char *err,
                            size_t errlen)
{
	struct rdzv_profile_source src = { rdzv_profile_dir_read, d };
	char **names = NULL, why[1024];
	int n, i;

	if ((n = rdzv_profile_dir_names(d, &names, err, errlen)) < 0)
		return -1;
	fprintf(out, "NCCL profiles in %s:\n", d->path);
	if (n == 0)
		fprintf(out, "  (none)\n");
	for (i = 0; i < n; i++) {
		struct rdzv_profile *p = NULL;
		const char *m = mark(names[i], pick, site_default);

		if (rdzv_profile_load(&src, names[i], &p, NULL, why, sizeof(why)) < 0)
			fprintf(out, "  %c %-20s BROKEN: %s\n", m ? '*' : ' ', names[i], why);
		else
			fprintf(out, "  %c %-20s %s%s%s%s\n", m ? '*' : ' ', names[i],
			        p->description ? p->description : "(no description)", m ? " [" : "",
			        m ? m : "", m ? "]" : "");
		rdzv_profile_destroy(p);
	}
	rdzv_profile_names_free(names, n);
	if (site_default && *site_default)
		fprintf(out, "Site default: %s\n", site_default);
	if (partition_map && *partition_map)
		fprintf(out, "Partition defaults: %s\n", partition_map);
	switch (pick->why) {
	case RDZV_PICK_USER:
		fprintf(out, "This step: %s (--nccl-profile)", pick->chosen);
		break;
	case RDZV_PICK_USER_NONE:
		fprintf(out, "This step: no profile (--nccl-profile=none)");
		break;
	case RDZV_PICK_PARTITION:
		fprintf(out, "This step: %s (default of partition %s)", pick->chosen,
		        partition ? partition : "?");
		break;
	case RDZV_PICK_SITE:
		fprintf(out, "This step: %s (site default)", pick->chosen);
		break;
	case RDZV_PICK_NONE:
		fprintf(out, "This step: no profile (no default configured)");
		break;
	}
	if (pick->deflt[0] && strcmp(pick->deflt, pick->chosen) != 0)
		fprintf(out, "; enforce/unset entries of %s apply too", pick->deflt);
	if (!partition || !*partition)
		fprintf(out, " (partition not known here)");
	fprintf(out, "\nChoose with --nccl-profile=NAME; --nccl-profile=none drops the default "
	        "profile's defaults but not its enforce/unset entries.\n");
	return 0;
}
