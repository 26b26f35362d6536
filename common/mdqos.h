/* mdqos.h — PADLL's operation classes and the payloads of the metadata QoS
 * control plane (padll.txt sec. III; mds/README.md "PADLL").
 *
 * Every request belongs to one operation class: open, close, getattr
 * (getattr/lookup), setattr, create (create/mknod), mkdir, unlink
 * (unlink/rmdir), rename, readdir, xattr, read, write, or none (never
 * limited: PING, the OST map, admin and control opcodes).  The map from
 * opcode to class has a default (pfs_mdq_map_default, finer than the
 * coarse pfs_qos_class of common/optab.h) that the MDS's `mdqos_map` key
 * overrides ("MDS_ACCESS=getattr,MDS_STATFS=none"); the MDS sends its map
 * to every client with the rates, so both sides always agree.
 *
 * MDS_MDQOS_PULL (client -> MDS, every control period): the client's
 * per-(job, class) request counts since its last pull (its usage report)
 * -> the rates it must hold each (job, class) to (pfs_mdq_rates).  There
 * is no MDS -> client connection; pulling is how rates are "pushed".
 *
 * Pure: codecs and tables, no state, no I/O. */
#ifndef PFS_MDQOS_H
#define PFS_MDQOS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/proto.h"

enum pfs_mdq_class {
	PFS_MDQ_NONE = 0,
	PFS_MDQ_OPEN,
	PFS_MDQ_CLOSE,
	PFS_MDQ_GETATTR,
	PFS_MDQ_SETATTR,
	PFS_MDQ_CREATE,
	PFS_MDQ_MKDIR,
	PFS_MDQ_UNLINK,
	PFS_MDQ_RENAME,
	PFS_MDQ_READDIR,
	PFS_MDQ_XATTR,
	PFS_MDQ_READ,
	PFS_MDQ_WRITE,
	PFS_MDQ_NCLASSES
};

/* Opcodes below this have a map entry (all of proto.h's). */
#define PFS_MDQ_MAP_OPS 512
/* Rows in one PULL request or reply, at most. */
#define PFS_MDQ_ROWS_MAX 8192

typedef struct pfs_mdq_map {
	uint8_t cls[PFS_MDQ_MAP_OPS]; /* enum pfs_mdq_class per opcode */
} pfs_mdq_map;

/* "create", ...; "none" for PFS_MDQ_NONE; "?" out of range. */
const char *pfs_mdq_class_name(unsigned cls);
/* Class by name (the names above); -EINVAL for an unknown one. */
int pfs_mdq_class_parse(const char *name, unsigned *cls);

/* The default map (see the top; SETSIZE, sent at close/flush/fsync, is
 * "close"; GETLAYOUT is "open"; ACCESS, READLINK and STATFS "getattr";
 * SYMLINK and LINK "create"; SETSTRIPE "setattr"; OSS_READ "read";
 * OSS_WRITE, TRUNCATE, PUNCH "write"). */
void pfs_mdq_map_default(pfs_mdq_map *m);
/* Apply overrides "OPNAME=class[,OPNAME=class...]" (OPNAME as
 * pfs_op_name, e.g. MDS_ACCESS) to m; "" changes nothing.  On error
 * (-EINVAL: unknown opcode or class, malformed item) m is unchanged and
 * err says which item. */
int pfs_mdq_map_parse(pfs_mdq_map *m, const char *spec, char *err, size_t errlen);
unsigned pfs_mdq_map_class(const pfs_mdq_map *m, uint16_t op);

/* ---- MDS_MDQOS_PULL ----
 * request: u32 n, n x { str job, u8 class, u64 count }   (usage since the
 *          client's last pull; class 1..NCLASSES-1, job 1..32 bytes)
 * reply:   u64 generation, f64 period_s, u32 nmap, nmap x { u16 op,
 *          u8 class } (every opcode whose class is not none), u32 nc,
 *          nc x { u8 class, f64 default_rate }, u32 n, n x { str job,
 *          u8 class, f64 rate }
 * Rates are requests/s for this client.  A class not listed in the nc
 * part is unlimited; a listed class limits a (job, class) with a row to
 * its rate and any other job of that class to default_rate. */
typedef struct pfs_mdq_row {
	char job[PFS_JOBID_MAX + 1];
	uint8_t cls;
	double value; /* count (usage) or rate */
} pfs_mdq_row;

typedef struct pfs_mdq_rates {
	uint64_t generation;
	double period_s;
	pfs_mdq_map map;
	uint8_t limited[PFS_MDQ_NCLASSES];  /* 1: class has a Max_R */
	double default_rate[PFS_MDQ_NCLASSES];
	uint32_t n;
	pfs_mdq_row *rows;                 /* malloc'd, n rows */
} pfs_mdq_rates;

int pfs_mdq_usage_encode(pfs_wbuf *w, const pfs_mdq_row *rows, uint32_t n);
/* *rows malloc'd (NULL when n = 0); -EBADMSG for a malformed payload
 * (bad class, count above 2^53, n beyond the bytes or PFS_MDQ_ROWS_MAX,
 * empty or overlong job, trailing bytes). */
int pfs_mdq_usage_decode(pfs_rbuf *r, pfs_mdq_row **rows, uint32_t *n);
int pfs_mdq_rates_encode(pfs_wbuf *w, const pfs_mdq_rates *r);
/* Fills r (r->rows malloc'd); -EBADMSG for a malformed payload (negative
 * or non-finite rate or period, bad class, trailing bytes). */
int pfs_mdq_rates_decode(pfs_rbuf *b, pfs_mdq_rates *r);
void pfs_mdq_rates_free(pfs_mdq_rates *r);

/* ---- MDS_MDQOS_SHOW reply ----
 * str algo, u32 interval_ms, f64 epsilon, f64 jobs, f64 weight_sum,
 * u64 generation, u64 held (requests the MDS itself delayed), u32 nc,
 * nc x { u8 class, f64 max_r }, u32 n, n x { str job, u8 class,
 * f64 demand (0 = none), f64 arrived/s, f64 served/s, f64 rate } */
#define PFS_MDQ_ALGO_MAX 16
typedef struct pfs_mdq_jobrow {
	char job[PFS_JOBID_MAX + 1];
	uint8_t cls;
	double demand, arrived, served, rate;
} pfs_mdq_jobrow;

typedef struct pfs_mdq_status {
	char algo[PFS_MDQ_ALGO_MAX];
	uint32_t interval_ms;
	double epsilon, jobs, weight_sum;
	uint64_t generation, held;
	double max_r[PFS_MDQ_NCLASSES]; /* 0 = class not limited */
	uint32_t n;
	pfs_mdq_jobrow *rows;          /* malloc'd */
} pfs_mdq_status;

int pfs_mdq_status_encode(pfs_wbuf *w, const pfs_mdq_status *st);
/* -EBADMSG for a malformed payload; st->rows malloc'd. */
int pfs_mdq_status_decode(pfs_rbuf *b, pfs_mdq_status *st);
void pfs_mdq_status_free(pfs_mdq_status *st);

#endif
