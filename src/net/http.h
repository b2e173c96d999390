/*-------------------------------------------------------------------------
 *
 * http.h
 *		The HTTP route client: LSM route requests, run any number at once
 *		on the connection pools of src/net/pool.c, waiting on the session latch
 *		so that query cancel, statement_timeout, ProcSignalBarrier and
 *		postmaster death are noticed at once.
 *
 * Only the task driver (src/checkpoint/task.c) includes this header.  A request is
 * opaque to it, as postgres_fdw's connection cache is to its callers: it
 * prepares, starts, waits for and releases requests, and reads what
 * happened through lsm_http_outcome() (src/net/outcome.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_HTTP_H
#define LANCELSM_HTTP_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "net/outcome.h"

/* One HTTP exchange; private to src/net/http.c. */
typedef struct LsmRequest LsmRequest;

extern LsmRequest *lsm_http_prepare(LsmRequest *req, const LsmConfig *config,
									LsmRoute route, const char *table_name,
									const char *body, void *owner);
extern void lsm_http_start(LsmRequest *req, TimestampTz deadline);
extern const LsmOutcome *lsm_http_outcome(const LsmRequest *req);
extern void lsm_http_release(LsmRequest *req);
extern void *lsm_http_wait(TimestampTz wake_at, TimestampTz deadline);
extern void lsm_http_abort_all(void);

#endif							/* LANCELSM_HTTP_H */
