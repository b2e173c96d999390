/*-------------------------------------------------------------------------
 *
 * pool.h
 *		Connection pools: one libcurl multi handle per server and user
 *		mapping, and the wait on the session latch.  Used by src/net/http.c,
 *		by src/net/socket.c to say when a socket opens and closes, and by
 *		src/net/endpoint.c to close every pool when the allow-list changes.
 *
 * The pools know libcurl easy handles and an opaque owner pointer per
 * handle, nothing of requests: they never call back into src/net/http.c.
 * src/net/http.c configures a handle, adds it here, and gets its owner back
 * as "this owner's handle finished with this CURLcode", off its pool, to
 * classify and free.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_POOL_H
#define LANCELSM_POOL_H

#include "postgres.h"

#include <curl/curl.h>

#include "datatype/timestamp.h"

extern bool lsm_pool_add(CURL *easy, Oid serverid, Oid umid, bool multiplex,
						 void *owner);
extern void lsm_pool_remove(CURL *easy);
extern void *lsm_pool_wait(TimestampTz wake_at, TimestampTz deadline,
						   bool backing_off, CURLcode *code);
extern void lsm_pool_waits_over(void);
extern void *lsm_pool_abort_next(void);

/*
 * lsm_pool_socket_opened: socket fd was opened by src/net/socket.c's open
 * callback, which will report its close; only such a socket may stay in
 * the wait's kept WaitEventSet while libcurl does not watch it.  Raises
 * nothing.
 */
extern void lsm_pool_socket_opened(curl_socket_t fd);

/*
 * lsm_pool_socket_closed: libcurl is closing socket fd (called by
 * src/net/socket.c's close callback); the wait's kept WaitEventSet is
 * built afresh before the next wait.  Raises nothing.
 */
extern void lsm_pool_socket_closed(curl_socket_t fd);

/*
 * lsm_pool_invalidate_all: every pool is closed before its next request
 * (called by src/net/endpoint.c when lancelsm.allowed_endpoints
 * changes).  Raises nothing, allocates nothing.
 */
extern void lsm_pool_invalidate_all(void);

/*
 * lsm_pool_holds_wait_set: whether the wait keeps a WaitEventSet now, and
 * so holds the external descriptor it needs (src/net/socket.c budgets
 * one for it otherwise).  Raises nothing.
 */
extern bool lsm_pool_holds_wait_set(void);

#endif							/* LANCELSM_POOL_H */
