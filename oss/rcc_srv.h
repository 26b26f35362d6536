/* rcc_srv.h — RPC concurrency credits (RCC, lustre-rcc-congestion.txt
 * sec. III) for one OST: the server state qos_rcc (D, C, IOPS) and one
 * qos_rcc_client per client id (the paper's export), found by the client
 * id of the frame header.
 *
 * Flow: oss_rcc_srv_recv when a request is queued (Alg. 1
 * ServerRecvIORequest), oss_rcc_srv_reply when its reply is about to be
 * sent (ServerSendIOReply + CalcRCC): the credit returned goes into the
 * reply header.  The client's cnr comes from the request header; cnr 0
 * ("no opinion", a client that does not count its pages) is read as RCCmax,
 * so a light-loaded OST grants the most it ever grants instead of RCCmin.
 *
 * Bounded: at most max_clients records.  oss_rcc_srv_sweep (run every
 * second or so) does the paper's ping check for every client (C drops a
 * client idle for more than STL) and frees records of clients that left C
 * with nothing pending.  When the table is full a new client's requests go
 * without a record: they are not counted in D or C and their replies carry
 * credit 0 ("no grant, keep yours").
 *
 * Not thread-safe: the owning scheduler's lock guards everything. */
#ifndef OSS_RCC_SRV_H
#define OSS_RCC_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "qos/rcc.h"

#define OSS_RCC_CLIENTS_MAX 4096

typedef struct oss_rcc_srv oss_rcc_srv;
typedef struct oss_rcc_cl oss_rcc_cl;

typedef struct oss_rcc_info {
	long D, C;          /* queued + in service; I/O-active clients */
	double iops;        /* measured (0: none yet) */
	double latency;     /* D / IOPS, seconds (0 when IOPS is unknown) */
	uint32_t credit;    /* last credit granted (0: none yet) */
	size_t clients;     /* records held */
} oss_rcc_info;

/* p is copied (0 fields take qos/rcc.h's defaults); max_clients 0 =
 * OSS_RCC_CLIENTS_MAX; now in seconds.  0, -EINVAL (bad params), -ENOMEM. */
int oss_rcc_srv_create(const qos_rcc_params *p, size_t max_clients, double now,
		       oss_rcc_srv **out);
void oss_rcc_srv_destroy(oss_rcc_srv *s);

/* A request of client_id was queued at now: its record (to hand to
 * oss_rcc_srv_reply), or NULL when the table is full. */
oss_rcc_cl *oss_rcc_srv_recv(oss_rcc_srv *s, uint64_t client_id, double now);
/* The request that arrived at Ta (seconds) is answered now; cnr is the
 * client's request header credit.  Returns the credit for the reply (0
 * when cl is NULL). */
uint32_t oss_rcc_srv_reply(oss_rcc_srv *s, oss_rcc_cl *cl, double Ta, uint32_t cnr,
			   double now);
/* The credit for a reply to a request that was never queued (refused
 * busy): RCCmin, the smallest window the client may keep. */
uint32_t oss_rcc_srv_min(const oss_rcc_srv *s);
/* Ping check of every client; free records that are no longer needed. */
void oss_rcc_srv_sweep(oss_rcc_srv *s, double now);
void oss_rcc_srv_info(const oss_rcc_srv *s, oss_rcc_info *out);

#endif
