/*-------------------------------------------------------------------------
 *
 * endpoint.h
 *		lancelsm.allowed_endpoints: the endpoints a superuser allows
 *		requests to go to, as host[:port] names and CIDR address ranges.
 *
 * The setting's check and assign hooks (registered in src/lancelsm.c)
 * parse it once (their declarations, and the name verdict's, are in
 * net/net.h); this header is private to src/net/: the address check of
 * src/net/socket.c.  They parse it once; the validator (src/functions/option.c) and every request
 * (src/net/http.c, src/net/socket.c) test names and addresses against the
 * parsed list.  An empty setting allows everything.  Also the host and
 * port of a URL, for the name lookups of src/net/http.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_ENDPOINT_H
#define LANCELSM_ENDPOINT_H

#include "postgres.h"

#include <sys/socket.h>

#include "net/net.h"

/* the longest host name of DNS, and an IPv6 literal fits */
#define ENDPOINT_HOST_LEN 256

extern bool lsm_endpoint_url_host(const char *url, char *host, int *port);
extern bool lsm_endpoint_address_allowed(const struct sockaddr *addr,
										 socklen_t addrlen);

#endif							/* LANCELSM_ENDPOINT_H */
