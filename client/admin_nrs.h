/* admin_nrs.h — pfsadmin nrs tbf rule: admin TBF rules on the OSSes
 * (PFS_OP_OSS_NRS_RULE on each OSS's control port), as Lustre's
 * `lctl set_param ost.OSS.ost_io.nrs_tbf_rule="start NAME EXPR"`:
 *
 *   nrs tbf rule start NAME EXPR [--ost N]
 *   nrs tbf rule change NAME EXPR [--ost N]
 *   nrs tbf rule stop NAME [--ost N]
 *   nrs tbf rule list [--ost N]
 *
 * The request goes to every OSS of the MDS's OST list, or with --ost only to
 * the OSS serving OST N; start and change then add "ost=N" to EXPR so the
 * rule covers that OST alone (EXPR must not name an OST itself then).  An
 * EXPR with its own ost=N goes to the OSS serving N alone too.  The
 * OSS parses EXPR (qos/tbf_rule.h) and answers -EINVAL for text it refuses;
 * each OSS's outcome is shown, and any failure makes the command fail after
 * printing them all (a rule may then be in force on some OSSes only).
 *
 * Wire: u8 verb, str NAME ("" for list), then str EXPR for start and change
 * only.  Start is not resent after a lost reply (a second start of the same
 * name is an error); stop, change and list are.
 *
 * JSON:
 *   start/change/stop: {"verb", "name", "expr" (start/change), "oss": [
 *       {"oss", "address", "status": "ok" | "error" | "no answer" |
 *        "malformed reply", "errno", "error"}]}   (errno/error when not ok)
 *   list: {"oss": [{"oss", "address", "status", ..., "rules": [{"name",
 *       "expr", "ost" (null = every OST), "queued", "origin": "admin" |
 *       "mds" | "adaptbf"}]}]} */
#ifndef CLI_ADMIN_NRS_H
#define CLI_ADMIN_NRS_H

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* Uses args->nrs_verb, ->rule, ->expr, ->have_ost/ost.  0; -ENOENT when no
 * OSS serves --ost (or none is known); -EINVAL when EXPR names an OST and
 * --ost is given; else the first failing OSS's error, after printing. */
int cli_admin_nrs_rule(cli_admin *a, const cli_admin_args *args);

#endif
