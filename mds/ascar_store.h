/* ascar_store.h — the ASCAR rule set the MDS distributes to the clients
 * (issue 12): the rule text (qos/ascar.h format, "" = off) and a version
 * bumped by every change, one record "ascar" in the QoS table of the
 * namespace's LMDB (mds/kv.h), so it survives restarts.
 *
 * PFS_OP_MDS_ASCAR_SET (pfsadmin qos ascar load|off) validates the text with
 * qos_ascar_ruleset_parse before storing; PFS_OP_MDS_ASCAR_GET is what
 * mount.pfs polls.  Stateless: every call is one LMDB transaction. */
#ifndef MDS_ASCAR_STORE_H
#define MDS_ASCAR_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "mds/kv.h"

/* Longest rule text accepted (bytes). */
#define MDS_ASCAR_TEXT_MAX (64 * 1024)

/* Store text (NULL or blank = off) as the next version, returned in
 * *version.  0; -EINVAL (malformed: *line is the 1-based line, 0 = no rule
 * at all; or too long: *line = 0); -ENOMEM, -ENOSPC, -EIO. */
int mds_ascar_store_set(mds_ns *ns, const char *text, uint64_t *version, int *line);
/* The stored rules: *text malloc'd (caller frees; "" when off or never
 * set), *version 0 when never set.  0, -ENOMEM, -EIO, -EBADMSG. */
int mds_ascar_store_get(mds_ns *ns, uint64_t *version, char **text);

#endif
