/* lock_held.c — the mount's record of the locks it holds (lock_held.h): a
 * common/lktab.h table in which the whole mount is one client (client id
 * 0), fed with pfs_lktab_apply since the MDS already decided every grant,
 * so that the merge and split rules are the MDS's own code. */
#include "client/lock_held.h"

#include <errno.h>
#include <stdlib.h>

#include "common/lktab.h"

struct cli_lkheld {
	pfs_lktab *t;
};

static pfs_lock to_tab(const cli_lock *l)
{
	return (pfs_lock){ .client = 0, .owner = l->owner, .pid = l->pid, .type = l->type,
			   .kind = l->kind, .start = l->start, .end = l->end };
}

cli_lkheld *cli_lkheld_new(void)
{
	cli_lkheld *h = calloc(1, sizeof(*h));

	if (h && !(h->t = pfs_lktab_new(NULL, NULL))) {
		free(h);
		h = NULL;
	}
	return h;
}

void cli_lkheld_free(cli_lkheld *h)
{
	if (!h)
		return;
	pfs_lktab_free(h->t); /* never has waiters: the grant callback is unused */
	free(h);
}

int cli_lkheld_apply(cli_lkheld *h, uint64_t ino, const cli_lock *l)
{
	pfs_lock w = to_tab(l);

	return pfs_lktab_apply(h->t, ino, &w);
}

void cli_lkheld_release(cli_lkheld *h, uint64_t ino, uint64_t owner, unsigned kinds)
{
	(void)pfs_lktab_release_owner(h->t, ino, 0, owner, kinds);
}

int cli_lkheld_list(const cli_lkheld *h, uint64_t **inos, cli_lock **locks, size_t *n)
{
	pfs_lock *all;
	int rc = pfs_lktab_list(h->t, inos, &all, n);

	*locks = NULL;
	if (rc || !*n)
		return rc;
	*locks = malloc(*n * sizeof(**locks));
	if (!*locks) {
		free(*inos);
		free(all);
		*inos = NULL;
		*n = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++)
		(*locks)[i] = (cli_lock){ .kind = all[i].kind, .type = all[i].type,
					  .start = all[i].start, .end = all[i].end,
					  .owner = all[i].owner, .pid = all[i].pid };
	free(all);
	return 0;
}

size_t cli_lkheld_count(const cli_lkheld *h)
{
	return pfs_lktab_count(h->t);
}
