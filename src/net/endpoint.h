/*-------------------------------------------------------------------------
 *
 * endpoint.h
 *		lancelsm.allowed_endpoints: the endpoints a superuser allows
 *		requests to go to, as host[:port] names and CIDR address ranges.
 *
 * The setting's check and assign hooks (registered in src/lancelsm.c)
 * parse it once; the validator (src/functions/option.c) and every request
 * (src/net/http.c, src/net/socket.c) test names and addresses against the
 * parsed list.  An empty setting allows everything.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_ENDPOINT_H
#define LANCELSM_ENDPOINT_H

#include "postgres.h"

#include <sys/socket.h>

#include "utils/guc.h"

/* room for "host:port" of the longest host name */
#define LSM_ENDPOINT_TEXT_LEN 272

/* the verdict on the name of an endpoint */
typedef enum LsmEndpointVerdict
{
	LSM_ENDPOINT_ALLOWED,		/* unrestricted, or a host entry names it */
	LSM_ENDPOINT_CHECK_ADDRESS, /* allowed only at an address in a range */
	LSM_ENDPOINT_DENIED			/* no entry can allow it */
} LsmEndpointVerdict;

extern bool lsm_endpoints_check(char **newval, void **extra,
								GucSource source);
extern void lsm_endpoints_assign(const char *newval, void *extra);
extern LsmEndpointVerdict lsm_endpoint_url_verdict(const char *url,
												   bool name_only,
												   char *endpoint,
												   size_t endpointlen);
extern bool lsm_endpoint_address_allowed(const struct sockaddr *addr,
										 socklen_t addrlen);

#endif							/* LANCELSM_ENDPOINT_H */
