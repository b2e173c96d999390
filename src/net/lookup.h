/*-------------------------------------------------------------------------
 *
 * lookup.h
 *		Host name lookups of the HTTP client, bounded per backend by
 *		lancelsm.max_name_lookups.  Used by src/net/http.c only, which hands
 *		the addresses to libcurl (CURLOPT_RESOLVE) so that libcurl never
 *		starts a resolver thread of its own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_LOOKUP_H
#define LANCELSM_LOOKUP_H

#include "postgres.h"

#include "datatype/timestamp.h"

/*
 * Room for the addresses of one name, as CURLOPT_RESOLVE takes them:
 * "192.0.2.1,[2001:db8::1]"; addresses past it are left out.
 */
#define LSM_LOOKUP_ADDRESSES_LEN 1024

/* How a lookup ended. */
typedef enum LsmLookupStatus
{
	LSM_LOOKUP_FOUND,			/* addresses holds the name's addresses */
	LSM_LOOKUP_FAILED,			/* the name did not resolve, or no slot
								 * came in time: problem says which */
	LSM_LOOKUP_NO_DESCRIPTOR	/* no file descriptor left to look it up */
} LsmLookupStatus;

extern LsmLookupStatus lsm_lookup(const char *host, int port,
								  TimestampTz deadline, long connect_timeout_ms,
								  char *addresses, size_t addresseslen,
								  char *problem, size_t problemlen);
extern bool lsm_lookup_is_address(const char *host);

#endif							/* LANCELSM_LOOKUP_H */
