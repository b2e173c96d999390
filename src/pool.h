/*-------------------------------------------------------------------------
 *
 * pool.h
 *		Connection pools: one libcurl multi handle per server and user
 *		mapping, private to src/http.c and src/pool.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_POOL_H
#define LANCELSM_POOL_H

#include "http.h"

extern bool lsm_pool_attach(LsmRequest *req);
extern void lsm_pool_detach(LsmRequest *req);

#endif							/* LANCELSM_POOL_H */
