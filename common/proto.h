/* proto.h — the pfs wire protocol: frame header, opcodes, error codes.
 *
 * Every connection (client<->MDS, client<->OSS, OSS<->MDS control, pfsadmin)
 * carries frames: a fixed PFS_HDR_LEN-byte little-endian header followed by
 * payload_len bytes of payload.  Payloads are built and parsed with the
 * bounds-checked codec in common/buf.h; the layout of each opcode's request
 * and reply payload is documented next to its opcode below ("->" separates
 * request from reply; cred = see pfs_cred in common/msg.h; str = u32 length +
 * bytes, no NUL).  A reply reuses the request's opcode and req_id, sets
 * PFS_F_REPLY and carries 0 or a negative errno in status; on error the reply
 * payload is empty.
 *
 * Decoding never trusts the wire: bad magic, unknown version, oversized
 * payloads and reserved bits are rejected with a negative errno, and the
 * caller closes the connection (a frame boundary can no longer be trusted).
 * An unknown opcode inside a well-formed frame gets an -EOPNOTSUPP reply.
 *
 * Every request carries the job id (the QoS unit, NUL-padded string), the
 * client id (a random 64-bit id chosen by each mount at start), the caller's
 * uid/gid (for QoS rule matching) and an RPC-credit field (RCC).
 *
 * Status -EBUSY from an OSS data port means "queue full (per-job or per-OSS
 * cap): nothing was done, back off and resend"; -ETIMEDOUT never comes from
 * a server.
 *
 * Floating-point fields (f64) are IEEE-754 binary64 bit patterns sent as
 * u64; decoders reject NaN and infinities where a rate is expected. */
#ifndef PFS_PROTO_H
#define PFS_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PFS_MAGIC 0x31534650u /* "PFS1" little-endian */
#define PFS_PROTO_VERSION 3
#define PFS_HDR_LEN 96
#define PFS_MAC_LEN 16
#define PFS_JOBID_MAX 32 /* bytes in the header, including padding */
/* Largest payload accepted: a 1 MiB bulk write plus its request fields, or a
 * readdir page.  Anything larger is a protocol error. */
#define PFS_MAX_IO (1u << 20)
#define PFS_MAX_PAYLOAD (PFS_MAX_IO + 4096u)
/* Most extents of one PFS_OP_OSS_WRITEV (its table and capability fit in
 * the 4 KiB of PFS_MAX_PAYLOAD above PFS_MAX_IO). */
#define PFS_WRITEV_MAX 256u

/* OSS_WRITE request bytes before the data: u32 ost, u64 object, u64
 * offset, u32 len; with a capability (every write on an authenticated
 * cluster) PFS_OSS_WRITE_FIELDS_CAPA.  common/auth.h's header-only
 * integrity covers the fields before the data. */
#define PFS_OSS_WRITE_FIELDS 24
#define PFS_OSS_CAPA_LEN 48 /* == PFS_CAPA_LEN of common/capa.h */
#define PFS_OSS_WRITE_FIELDS_CAPA (PFS_OSS_WRITE_FIELDS + PFS_OSS_CAPA_LEN)

/* Grant bytes one OSS_WRITE of len bytes costs (oss/grant.h,
 * client/wcache.h): len rounded up to 4 KiB pages plus one page, so that
 * a misaligned write's partial pages are covered. */
#define PFS_GRANT_PAGE 4096u
#define PFS_GRANT_COST(len) \
	((((uint64_t)(len) + PFS_GRANT_PAGE - 1) & ~(uint64_t)(PFS_GRANT_PAGE - 1)) + PFS_GRANT_PAGE)

/* Header flags.  PFS_F_RESEND marks a request sent again after its
 * connection broke before the reply came (common/rpc.h): same client_id and
 * req_id as the first send, so a server's reply cache (mds/reply_cache.h)
 * can answer it with the original reply instead of executing it twice. */
#define PFS_F_REPLY 0x1u
#define PFS_F_RESEND 0x2u
#define PFS_F_MASK 0x3u

typedef struct pfs_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t opcode;
	uint32_t flags;
	int32_t status;        /* replies: 0 or -errno */
	uint64_t req_id;
	uint64_t client_id;
	uint32_t payload_len;
	/* RCC (lustre-rcc-congestion sec. III): in a request, the credits the
	 * client asks for (the paper's cnr; 0 = no opinion); in a reply from
	 * an OSS data port, the credits granted to this client on that OSS
	 * (arc: RPCs it may have in flight there; 0 = no grant, keep the
	 * current one).  Other servers reply 0. */
	uint32_t credit;
	/* The caller's fs uid and gid, as its client says: what TBF rules
	 * match with uid= / gid= (QoS classification only; permissions are
	 * checked on the credential inside MDS payloads). */
	uint32_t uid, gid;
	char job_id[PFS_JOBID_MAX]; /* NUL-padded; not necessarily NUL-terminated */
	/* Frame integrity tag (common/auth.h): Poly1305 over this header with
	 * mac zeroed and the covered payload, under the connection's session
	 * key and sequence number.  All zeros on a connection without auth. */
	uint8_t mac[PFS_MAC_LEN];
} pfs_hdr;

enum pfs_opcode {
	PFS_OP_PING = 1,            /* anything -> same bytes echoed */

	/* ---- MDS: namespace (client -> MDS data-less metadata port) ---- */
	PFS_OP_MDS_LOOKUP = 100,    /* cred, u64 parent, str name -> attr */
	PFS_OP_MDS_GETATTR,         /* cred, u64 ino -> attr */
	PFS_OP_MDS_SETATTR,         /* cred, u64 ino, u32 valid(PFS_SETATTR_*), u32 mode,
	                               u32 uid, u32 gid, u64 size, i64 atime_ns, i64 mtime_ns
	                               -> attr.  Size change only updates the MDS; the
	                               client truncates the objects itself. */
	PFS_OP_MDS_CREATE,          /* cred, u64 parent, str name, u32 mode, u32 flags
	                               (PFS_CREATE_EXCL|READ|WRITE: without EXCL an
	                               existing file is checked as an open with that
	                               access), u32 stripe_size, u32 stripe_count
	                               (0 = inherit), u32 stripe_offset (first OST
	                               index, PFS_STRIPE_OFFSET_ANY = inherit; may be
	                               absent = ANY) -> attr, layout, [caps]
	                               caps = u32 n, n x capability (common/capa.h), one
	                               per stripe object: only to client keys of an MDS
	                               with authentication (mds/README.md) */
	PFS_OP_MDS_MKNOD,           /* cred, u64 parent, str name, u32 mode, u32 rdev -> attr */
	PFS_OP_MDS_MKDIR,           /* cred, u64 parent, str name, u32 mode -> attr */
	PFS_OP_MDS_UNLINK,          /* cred, u64 parent, str name [, u64 ino] -> (empty);
	                               with ino (not 0): -ESTALE unless name
	                               is that inode (an asynchronous unlink,
	                               PFS_OP_MDS_DELEG_GET, never removes a
	                               file created again under the name) */
	PFS_OP_MDS_RMDIR,           /* cred, u64 parent, str name -> (empty) */
	PFS_OP_MDS_RENAME,          /* cred, u64 parent, str name, u64 newparent, str newname,
	                               u32 flags (PFS_RENAME_NOREPLACE|EXCHANGE) -> (empty) */
	PFS_OP_MDS_READDIR,         /* cred, u64 ino, u64 cookie (0 = start), u32 max
	                               -> u32 count, u8 eof, count x { u64 ino, u32 mode,
	                               u64 next_cookie, str name } */
	PFS_OP_MDS_SYMLINK,         /* cred, u64 parent, str name, str target -> attr */
	PFS_OP_MDS_READLINK,        /* cred, u64 ino -> str target */
	PFS_OP_MDS_LINK,            /* cred, u64 ino, u64 newparent, str newname -> attr */
	PFS_OP_MDS_STATFS,          /* cred -> statfs (pfs_statfs in msg.h) */
	PFS_OP_MDS_SETXATTR,        /* cred, u64 ino, str name, str value, u32 flags
	                               (XATTR_CREATE/REPLACE) -> (empty) */
	PFS_OP_MDS_GETXATTR,        /* cred, u64 ino, str name -> str value */
	PFS_OP_MDS_LISTXATTR,       /* cred, u64 ino -> str names (NUL-separated list) */
	PFS_OP_MDS_REMOVEXATTR,     /* cred, u64 ino, str name -> (empty) */
	PFS_OP_MDS_OPEN,            /* cred, u64 ino, u32 open flags -> attr, layout, [caps] */
	PFS_OP_MDS_ACCESS,          /* cred, u64 ino, u32 mask (R_OK|W_OK|X_OK) -> (empty) */
	PFS_OP_MDS_SETSIZE,         /* cred, u64 ino, u64 size, i64 mtime_ns (0 = keep)
	                               -> attr.  Grows only: size = max(size, current).
	                               Pushed by clients on fsync/flush/close. */
	PFS_OP_MDS_GETLAYOUT,       /* cred, u64 ino -> files: layout, [caps] (also the
	                               capability renewal); directories: their default,
	                               u32 stripe_size, u32 stripe_count, u32
	                               stripe_offset (12 bytes, never a file's form) */
	PFS_OP_MDS_SETSTRIPE,       /* cred, u64 ino, u32 stripe_size, u32 stripe_count,
	                               u32 stripe_offset (may be absent = ANY)
	                               -> (empty).  On a directory: the default layout of
	                               new files below; on a file: only if it has no data.
	                               -EINVAL for an offset that is no registered OST. */
	PFS_OP_MDS_SYNC = 126,      /* cred, u64 ino (0 = none) -> (empty): the MDS database
	                               is on disk when answered (mds_ns_sync; its error
	                               is the reply).  Sent by fsync, fdatasync and
	                               fsyncdir; ino only names the caller's file */
	PFS_OP_MDS_CLOSE = 127,     /* cred, u64 ino, u32 left -> (empty): the client
	                               released a handle of ino and has left more open
	                               (mds/open.h); the last close of an open-unlinked
	                               file destroys it.  Sent after the SETSIZE of the
	                               release, which carries the size and its epoch */
	PFS_OP_MDS_LOOKUP_BULK = 128, /* cred, u64 dir, str after ("" = from the first),
	                               u32 max (1..; capped at PFS_LOOKUP_BULK_MAX)
	                               -> u32 n, u8 eof, n x { str name, attr }: the
	                               entries of dir after `after` in name order with
	                               what LOOKUP would send for each (mount.pfs's
	                               statahead; mds/dirplus.h).  Needs r and x on dir
	                               and x along its path, as READDIR + LOOKUP */

	/* ---- MDS: the lock service (mds/locksvc.h; fcntl, flock, O_APPEND) ----
	 * lock = u8 kind (PFS_LK_POSIX|FLOCK|APPEND), u8 type (PFS_LK_READ|
	 * WRITE|UNLOCK), u64 start, u64 end (inclusive; UINT64_MAX = to EOF),
	 * u64 owner (FUSE's lock_owner), u32 pid.  The lock's client is the
	 * frame's client_id.  Locks of a client not heard from (any request)
	 * for the MDS's lock_lease_s are released; lease_ms in the replies says
	 * how often the client must speak (it pings when idle). */
	PFS_OP_MDS_LOCK_GET = 130,  /* u64 ino, lock -> u8 conflict, lock (the first
	                               conflicting lock with its owner and pid; type
	                               PFS_LK_UNLOCK and the request's range if none) */
	PFS_OP_MDS_LOCK_SET,        /* u64 ino, lock -> u32 lease_ms; -EAGAIN on a
	                               conflict; PFS_LK_UNLOCK unlocks the range */
	PFS_OP_MDS_LOCK_WAIT,       /* u64 ino, lock, u32 wait_ms -> u32 lease_ms, sent when
	                               granted (later: no thread waits on the MDS);
	                               -EINPROGRESS not granted within wait_ms (the
	                               MDS caps it at PFS_LK_WAIT_MAX_MS): send again;
	                               -EINTR cancelled; -EDEADLK; -ENOLCK evicted */
	PFS_OP_MDS_LOCK_CANCEL,     /* u64 ino, u64 owner -> u32 n: the waiting LOCK_WAITs
	                               of (client, owner) on ino are answered -EINTR */
	PFS_OP_MDS_LOCK_RELEASE,    /* u64 ino, u64 owner, u32 kinds (1 << PFS_LK_*)
	                               -> (empty): every lock of (client, owner) on ino of
	                               those kinds (close/flush: POSIX; release: FLOCK) */
	PFS_OP_MDS_LOCK_RECLAIM,    /* u8 flags (PFS_LK_RECLAIM_*), u32 n, n x { u64 ino,
	                               lock } -> u64 instance, u32 lease_ms, u32
	                               recovery_left_ms, u32 n, n x u32 status (0 or
	                               -errno as u32): after an MDS restart a client
	                               re-asserts the locks it holds (Lustre's lock
	                               replay, mds/locksvc.h); n = 0: a probe of the
	                               MDS instance (the lease ping) */

	/* ---- MDS: administration (pfsadmin) ---- */
	PFS_OP_MDS_OST_LIST = 200,  /* (empty) -> u32 n, n x ost_info (msg.h) */
	PFS_OP_MDS_LFSCK = 205,     /* u8 dry_run -> u64 referenced, u32 n, n x { u32 ost,
	                               u8 reached, u64 listed, u64 orphans, u64 queued }:
	                               orphan objects on the OSTs (mds/lfsck.h).  Root */

	/* ---- MDS: jobs and QoS (pfsadmin, Slurm prolog/epilog) ---- */
	PFS_OP_MDS_JOB_REGISTER = 210, /* job_info (msg.h; start/end/state ignored: the
	                                  MDS sets start = now, running) -> (empty).
	                                  Registering a known running job updates it. */
	PFS_OP_MDS_JOB_END,            /* str job -> (empty); -ENOENT if unknown */
	PFS_OP_MDS_JOB_LIST,           /* u8 all (0 = running only) -> u32 n, n x job_info */
	PFS_OP_MDS_JOB_GET,            /* str job -> job_info */
	PFS_OP_MDS_QOS_SHOW,           /* str job ("" = every job) -> qos_status (msg.h) */
	PFS_OP_MDS_QOS_POLICY_SET,     /* str policy ("" = keep), u32 n, n x { str key,
	                                  f64 value } (the paper's symbols, plus
	                                  "interval", "quorum", "adaptbf_period")
	                                  -> (empty); -EINVAL (unknown policy or key,
	                                  value out of range) changes nothing */
	PFS_OP_MDS_QOS_COUPONS,        /* str job ("" = all) -> u32 n, n x qos_coupon_info */
	PFS_OP_MDS_QOS_REGRET,         /* (empty) -> qos_regret_info */
	PFS_OP_MDS_JOBSTATS,           /* str job ("" = all) -> u64 snapshot_ns, u32 n,
	                                  n x { str job, u32 k, k x { u16 opcode,
	                                  u64 count } } (requests per opcode) */

	/* ---- MDS: PADLL metadata QoS (common/mdqos.h, mds/README.md "PADLL") ---- */
	PFS_OP_MDS_MDQOS_PULL = 220,   /* (mount.pfs, every control period) u32 n,
	                                  n x { str job, u8 class, u64 count } (usage
	                                  since the last pull) -> u64 generation,
	                                  f64 period_s, u32 nmap, nmap x { u16 op,
	                                  u8 class }, u32 nc, nc x { u8 class,
	                                  f64 default_rate }, u32 n, n x { str job,
	                                  u8 class, f64 rate } (requests/s) */
	PFS_OP_MDS_MDQOS_SHOW,         /* (empty) -> mdqos status (common/mdqos.h:
	                                  pfs_mdq_status) */
	PFS_OP_MDS_MDQOS_SET,          /* str job ("" = global keys), u32 n, n x { str key,
	                                  str value } -> (empty).  Keys: algo, interval_ms,
	                                  epsilon, jobs, weight_sum, max_r.CLASS ("off"
	                                  removes), demand.CLASS (with a job; "off").
	                                  Root only; -EINVAL changes nothing */

	/* ---- MDS: ASCAR rule sets (client/ascar_ctl.h, mds/ascar_store.h) ---- */
	PFS_OP_MDS_ASCAR_SET = 230,    /* str rules (qos/ascar.h text; "" = off)
	                                  -> u64 version.  Root only; -EINVAL for a
	                                  malformed rule set (nothing changes) */
	PFS_OP_MDS_ASCAR_GET,          /* (empty) -> u64 version (0 = never set),
	                                  str rules ("" = off) */

	/* ---- MDS: metadata lease invalidations (mds/lease.h, client/notify.h) ---- */
	PFS_OP_MDS_NOTIFY_WAIT = 240,  /* (mount.pfs keeps one outstanding) u64 ack (the seq
	                                  of the last batch received, 0 = none), u32
	                                  wait_ms (capped at PFS_NOTIFY_WAIT_MAX_MS),
	                                  u8 flags (PFS_NOTIFY_BYE: close the channel,
	                                  answered at once) -> u64 boot_id (the MDS
	                                  instance), u32 lease_ms (0 = no leases), u8
	                                  flags (PFS_NOTIFY_RESET: records were lost),
	                                  u64 seq, u32 n, n x { u8 kind (PFS_NOTIFY_INO
	                                  | ENTRY | PERM), u64 ino, str name ("" but
	                                  for ENTRY) }: held (no thread) until records
	                                  are queued or wait_ms passed; the first wait
	                                  of a client is answered at once */
	/* Directory delegations: asynchronous unlink (mds/deleg.h,
	 * client/dirdeleg.h).  A mount holding a directory's delegation may
	 * answer unlinks in it before the MDS has them (it sends them later as
	 * UNLINKs with the expected inode); any other client's request that
	 * touches the directory waits at the MDS until the holder has sent
	 * them and returned the delegation (PFS_NOTIFY_RECALL on its notify
	 * channel), or until recall_ms passed. */
	PFS_OP_MDS_DELEG_GET = 245,    /* cred, u64 dir -> u32 lease_ms, attr (the
	                                  directory's): granted for lease_ms past the
	                                  holder's last request on dir, and only for
	                                  this cred (the MDS checked W_OK|X_OK and the
	                                  path for it).  -EAGAIN: not now (another
	                                  client holds a lease or the delegation on
	                                  dir, a recall is under way, dir is sticky,
	                                  the caller has no notify channel, or
	                                  delegations are off); -ENOTDIR, -ENOENT,
	                                  -EACCES as for UNLINK */
	PFS_OP_MDS_DELEG_RETURN,       /* cred, u64 dir -> (empty): the holder has sent
	                                  every unlink it answered under it; a
	                                  delegation not held is success */
	PFS_OP_MDS_UNLINK_BATCH,       /* cred, u64 parent, u32 n (1..PFS_UNLINK_BATCH_MAX),
	                                  n x { str name, u64 ino } -> u32 n, n x i32
	                                  status: n UNLINKs of names in one directory
	                                  (the flushers of asynchronous unlink), each run
	                                  and answered as its own UNLINK with its
	                                  expected inode would be (0, -ENOENT, -ESTALE,
	                                  -EACCES, -EISDIR, ...), in order; lease
	                                  revocations and a delegation's parking as for
	                                  UNLINK; PADLL charges n UNLINKs.  The request's
	                                  own status is an error only when nothing ran
	                                  (-EINVAL: n out of range, a name or field
	                                  malformed).  Not in the reply log: a resend that
	                                  runs again finds removed names gone (-ENOENT)
	                                  and, by the expected inodes, removes nothing new */
	PFS_OP_MDS_CREATE_SLOTS,       /* cred, u64 dir, u32 n (1..PFS_CREATE_SLOTS_MAX)
	                                  -> attr (the directory's), u32 n, n x { u64 ino,
	                                  layout }: the holder of dir's delegation
	                                  reserves n inode numbers and layouts (the
	                                  directory's default striping) for creates it
	                                  answers before the MDS has them (asynchronous
	                                  create); it sends them later in CREATE_BATCHes.
	                                  A slot belongs to this client and this
	                                  directory and lasts PFS_CREATE_SLOT_TTL_S, a
	                                  record of the MDS's database that outlives
	                                  its restarts; one never used only
	                                  costs its numbers (objects come into being at
	                                  their first write).  -EAGAIN: the client does
	                                  not hold dir's delegation, or holds too many
	                                  slots; -EACCES as for CREATE */
	PFS_OP_MDS_CREATE_BATCH,       /* cred, u64 parent, u32 n (1..PFS_CREATE_SLOTS_MAX),
	                                  n x { str name, u32 mode, u32 flags
	                                  (PFS_CREATE_CLOSED), u64 ino } -> u32 n, n x
	                                  i32 status: n asynchronous creates into this
	                                  client's slots in one directory, in order, each
	                                  with its own status.  An entry's file gets the
	                                  slot's inode number and layout, EXCL implied;
	                                  -ESTALE: no such slot (taken, expired, another
	                                  client's or directory's), but an entry whose
	                                  name already names its slot's inode (a resend
	                                  after an MDS restart) is success.  Its open is
	                                  counted (the size starts stale, as a writer's)
	                                  unless PFS_CREATE_CLOSED.  PADLL charges n
	                                  CREATEs.  The request's own status is an error
	                                  only when nothing ran (-EINVAL: n out of range,
	                                  an entry malformed, an unknown flag) */

	/* ---- MDS: control channel (OSS -> MDS) ---- */
	PFS_OP_MDS_OSS_REGISTER = 250, /* str oss_name, str host, u16 data_port,
	                                  u16 ctl_port, u32 n, n x { str ost_uuid,
	                                  u64 total_bytes, u64 free_bytes, u64 objects }
	                                  -> u32 n, n x u32 ost_index */
	PFS_OP_MDS_OSS_HEARTBEAT,      /* str oss_name, u32 n, n x { u32 ost_index,
	                                  u64 total_bytes, u64 free_bytes, u64 objects }
	                                  -> (empty) */

	/* ---- OSS: data port (client -> OSS) ----
	 * [capa] = the object's capability (common/capa.h, PFS_OSS_CAPA_LEN
	 * bytes) after the fixed fields and before any bulk: present iff the
	 * MDS gave one (authentication on); an OSS with a capability key
	 * refuses a request without a valid one (-EACCES; expired:
	 * -EKEYEXPIRED). */
	PFS_OP_OSS_READ = 300,      /* u32 ost, u64 object, u64 offset, u32 len, [capa]
	                               -> bytes (short at object end; holes are zeros) */
	PFS_OP_OSS_WRITE,           /* u32 ost, u64 object, u64 offset, u32 len, [capa],
	                               len bytes -> u32 written */
	PFS_OP_OSS_TRUNCATE,        /* u32 ost, u64 object, u64 size, [capa] -> (empty) */
	PFS_OP_OSS_PUNCH,           /* u32 ost, u64 object, u64 offset, u64 len, [capa]
	                               -> (empty) */
	PFS_OP_OSS_STAT,            /* u32 ost, u64 object, [capa] -> u64 size, u64 blocks */
	PFS_OP_OSS_SYNC,            /* u32 ost, u64 object, [capa] -> (empty) */
	PFS_OP_OSS_STATFS,          /* u32 ost -> u64 total_bytes, u64 free_bytes, u64 objects */
	PFS_OP_OSS_GRANT,           /* u32 ost, u64 want, u64 giveback -> u64 granted:
	                               write grant of the frame's client_id on that OST
	                               (oss/grant.h): giveback bytes returned, then up to
	                               want more; the reply is the client's grant now */
	PFS_OP_OSS_WRITEV = 308,    /* u32 ost, u64 object, u32 n, n x { u64 offset,
	                               u32 len } (ascending, disjoint, 1 <= n <=
	                               PFS_WRITEV_MAX, len >= 1, sum <= PFS_MAX_IO),
	                               [capa], the n extents' bytes in order -> u32
	                               written: several writes to one object in one
	                               request (mount.pfs's write-back flushes); the
	                               MAC covers it all, bulk too */

	/* ---- OSS: control port (MDS/pfsadmin -> OSS) ---- */
	PFS_OP_OSS_DESTROY = 350,   /* u32 ost, u64 object [u64 object...] (a batch of one OST) -> (empty); missing is success */
	PFS_OP_OSS_LIST_OBJECTS,    /* u32 ost, u64 after, u32 max -> u32 n, u8 eof, n x u64 */
	PFS_OP_OSS_JOBSTATS,        /* (empty) -> u32 n, n x job_stats (msg.h) */
	PFS_OP_OSS_QOS_STATS,       /* u8 mode (PFS_QOS_STATS_*) -> u64 snapshot_ns
	                               (CLOCK_REALTIME), f64 period_s (length of the
	                               period reported; since start for TOTAL),
	                               u32 n_osts, n_osts x qos_ost_info,
	                               u32 n, n x qos_stat (msg.h) */
	PFS_OP_OSS_QOS_SET,         /* qos_alloc_set (msg.h): the MDS's allocations
	                               -> (empty).  Replaces every earlier MDS
	                               allocation on this OSS; admin rules stay. */
	PFS_OP_OSS_NRS_RULE,        /* u8 verb (PFS_NRS_*), str name, str expr (rule
	                               text, see qos/tbf_rule.h; START/CHANGE only)
	                               -> LIST: u32 n, n x nrs_rule_info; else (empty) */
};

/* PFS_OP_OSS_QOS_STATS modes. */
#define PFS_QOS_STATS_TOTAL 0   /* cumulative since the OSS started */
#define PFS_QOS_STATS_PERIOD 1  /* since the last PERIOD call, then start a new
                                   period (the MDS control loop's call) */

/* PFS_OP_OSS_NRS_RULE verbs (lctl nrs_tbf_rule start|change|stop|list). */
#define PFS_NRS_START 1
#define PFS_NRS_CHANGE 2
#define PFS_NRS_STOP 3
#define PFS_NRS_LIST 4

/* Lock kinds and types: the wire's and the lock table's (common/lktab.h). */
#define PFS_LK_POSIX 0
#define PFS_LK_FLOCK 1
#define PFS_LK_APPEND 2
#define PFS_LK_READ 1
#define PFS_LK_WRITE 2
#define PFS_LK_UNLOCK 3
#define PFS_LK_WAIT_MAX_MS 30000
/* LOCK_RECLAIM flags: this is the client's last batch (its reclaim is
 * complete).  PFS_LK_ERECOVER: the status (as -errno) of a lock request
 * the MDS cannot answer yet because it is in its lock recovery window
 * after a restart: send it again a little later. */
#define PFS_LK_RECLAIM_LAST 0x1u
#define PFS_LK_ERECOVER EBUSY

/* PFS_OP_MDS_NOTIFY_WAIT: request and reply flags, record kinds (an
 * inode's attributes; a name in directory ino; a directory's permissions:
 * the names cached below it too). */
#define PFS_NOTIFY_WAIT_MAX_MS 30000
#define PFS_NOTIFY_BYE 0x1u
#define PFS_NOTIFY_RESET 0x1u
#define PFS_NOTIFY_INO 1
#define PFS_NOTIFY_ENTRY 2
#define PFS_NOTIFY_PERM 3
/* the MDS recalls the delegation of directory ino (PFS_OP_MDS_DELEG_GET):
 * send its pending unlinks, then PFS_OP_MDS_DELEG_RETURN */
#define PFS_NOTIFY_RECALL 4

/* PFS_OP_MDS_LOOKUP_BULK: most entries per reply (the MDS also stops at
 * 256 KiB of reply). */
#define PFS_LOOKUP_BULK_MAX 512

/* PFS_OP_MDS_UNLINK_BATCH: most names per request. */
#define PFS_UNLINK_BATCH_MAX 32

/* PFS_OP_MDS_SETATTR valid bits. */
#define PFS_SETATTR_MODE 0x01u
#define PFS_SETATTR_UID 0x02u
#define PFS_SETATTR_GID 0x04u
#define PFS_SETATTR_SIZE 0x08u
#define PFS_SETATTR_ATIME 0x10u
#define PFS_SETATTR_MTIME 0x20u
#define PFS_SETATTR_ATIME_NOW 0x40u
#define PFS_SETATTR_MTIME_NOW 0x80u
#define PFS_SETATTR_CTIME 0x100u
/* The size change comes through a descriptor opened for writing
 * (ftruncate): no write permission or search check, as for the opener. */
#define PFS_SETATTR_FD 0x200u
/* What a write, truncate or chown drops (the kernel's file_remove_privs):
 * S_ISUID, and S_ISGID when group-exec is set, for a caller without
 * CAP_FSETID (not root) or with a chown; security.capability always.
 * Needs write permission (or _FD). */
#define PFS_SETATTR_KILLPRIV 0x400u

#define PFS_CREATE_EXCL 0x1u
/* The access mode of open(O_CREAT): an existing file is opened only if the
 * caller may read (READ) and/or write (WRITE) it; neither = both. */
#define PFS_CREATE_READ 0x2u
#define PFS_CREATE_WRITE 0x4u
/* CREATE's flags are EXCL, READ and WRITE; any other bit is -EINVAL. */
#define PFS_CREATE_FLAGS (PFS_CREATE_EXCL | PFS_CREATE_READ | PFS_CREATE_WRITE)
/* A CREATE_BATCH entry's one flag: the creator closed the file already; no
 * open is counted (and no CLOSE follows). */
#define PFS_CREATE_CLOSED 0x10u
/* PFS_OP_MDS_CREATE_SLOTS: most slots per request, and how long an unused
 * slot lasts. */
#define PFS_CREATE_SLOTS_MAX 32
#define PFS_CREATE_SLOT_TTL_S 600
/* stripe_offset of CREATE/SETSTRIPE/GETLAYOUT (lfs's stripe index): the OST
 * index of stripe 0, the next stripes on the next OST indices up (modulo the
 * registered OSTs, skipping OSTs that are down), or ANY: the MDS chooses. */
#define PFS_STRIPE_OFFSET_ANY UINT32_MAX
#define PFS_RENAME_NOREPLACE 0x1u /* == RENAME_NOREPLACE */
#define PFS_RENAME_EXCHANGE 0x2u  /* == RENAME_EXCHANGE */

/* Encode h into exactly PFS_HDR_LEN bytes at out. */
void pfs_hdr_encode(const pfs_hdr *h, uint8_t *out);
/* Decode and validate a header from len bytes at in.
 * Returns 0, -EAGAIN if len < PFS_HDR_LEN, -EBADMSG on bad magic or unknown
 * flag bits, -EPROTONOSUPPORT on an unknown version, -EMSGSIZE if payload_len
 * exceeds max_payload. */
int pfs_hdr_decode(const uint8_t *in, size_t len, uint32_t max_payload, pfs_hdr *h);
/* Fill a request header (magic, version, opcode, ids; job id truncated). */
void pfs_hdr_init(pfs_hdr *h, uint16_t opcode, uint64_t req_id, uint64_t client_id,
		  const char *job_id);
/* Copy the job id out of a header into a NUL-terminated buffer of
 * PFS_JOBID_MAX + 1 bytes. */
void pfs_hdr_jobid(const pfs_hdr *h, char out[PFS_JOBID_MAX + 1]);
const char *pfs_op_name(uint16_t opcode); /* "MDS_LOOKUP"; "?" if unknown */
/* strerror for negative errno values, including the protocol ones. */
const char *pfs_strerror(int err);

#endif
