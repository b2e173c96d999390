/*-------------------------------------------------------------------------
 *
 * socket.h
 *		The sockets of lancelsm's transfers: opened and closed through
 *		PostgreSQL's external-FD accounting and, when
 *		lancelsm.allowed_endpoints has address ranges, only to an address
 *		inside one.  Used by src/net/http.c only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_SOCKET_H
#define LANCELSM_SOCKET_H

#include "postgres.h"

#include <curl/curl.h>

#include "net/endpoint.h"
#include "net/net.h"

/*
 * What the socket callbacks of one transfer may do and what they refused.
 * Lives in the request, as long as its easy handle.
 */
typedef struct LsmSocketGate
{
	bool		deny_all;		/* the endpoint's name is not allowed */
	bool		check_address;	/* only addresses in an allowed range */
	LsmTransport refusal;		/* LSM_TRANSPORT_PENDING: none */
	char		refused[LSM_ENDPOINT_TEXT_LEN];	/* the endpoint refused */
} LsmSocketGate;

extern void lsm_socket_configure(CURL *easy, LsmSocketGate *gate,
								 const LsmConfig *config);
extern LsmTransport lsm_socket_refusal(const LsmSocketGate *gate,
									   CURLcode code, char *text,
									   size_t textlen);

#endif							/* LANCELSM_SOCKET_H */
