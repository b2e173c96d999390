/*-------------------------------------------------------------------------
 *
 * socket.c
 *		The sockets of lancelsm's transfers, opened and closed by libcurl
 *		through the callbacks here (CURLOPT_OPENSOCKETFUNCTION and
 *		CURLOPT_CLOSESOCKETFUNCTION).
 *
 * Each socket is reserved with PostgreSQL's external-FD accounting
 * (AcquireExternalFD, as postgres_fdw does for its connections) and
 * released when libcurl closes it, pooled connections included: many
 * pools cannot use up the descriptors the backend counts on.  When none is
 * left the connect fails and the request ends as LSM_TRANSPORT_NO_DESCRIPTOR.
 * The same callback refuses an address outside the address ranges of
 * lancelsm.allowed_endpoints (src/net/endpoint.c) when the endpoint's name
 * did not allow it already: LSM_TRANSPORT_DENIED.  The callbacks never
 * raise; they record what they refused in the request's LsmSocketGate.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/socket.h>
#include <unistd.h>

#include "common/ip.h"
#include "net/endpoint.h"
#include "net/pool.h"
#include "net/socket.h"
#include "storage/fd.h"

/*
 * socket_address_text
 *		"address:port" (an IPv6 address in brackets) of a socket address,
 *		into buf; without allocating.
 */
static void
socket_address_text(const struct curl_sockaddr *address, char *buf,
					size_t len)
{
	char		host[NI_MAXHOST];
	char		port[NI_MAXSERV];

	if (pg_getnameinfo_all((const struct sockaddr_storage *) &address->addr,
						   address->addrlen, host, sizeof(host),
						   port, sizeof(port),
						   NI_NUMERICHOST | NI_NUMERICSERV) != 0)
	{
		strlcpy(buf, "an unprintable address", len);
		return;
	}
	snprintf(buf, len, address->family == AF_INET6 ? "[%s]:%s" : "%s:%s",
			 host, port);
}

/*
 * socket_reserve
 *		Reserve one external descriptor for a socket, but only while one
 *		more stays free, unless the wait on the pools' sockets
 *		(src/net/pool.c) holds its wait set already: it needs one for that
 *		set after the sockets are open.
 */
static bool
socket_reserve(void)
{
	if (!AcquireExternalFD())
		return false;
	if (lsm_pool_holds_wait_set())
		return true;
	if (!AcquireExternalFD())
	{
		ReleaseExternalFD();
		return false;
	}
	ReleaseExternalFD();
	return true;
}

/*
 * socket_open
 *		libcurl's CURLOPT_OPENSOCKETFUNCTION: refuse an endpoint the gate
 *		(clientp) denies, reserve a descriptor, open the socket.
 *		CURL_SOCKET_BAD makes libcurl give up this address.
 */
static curl_socket_t
socket_open(void *clientp, curlsocktype purpose,
			struct curl_sockaddr *address)
{
	LsmSocketGate *gate = (LsmSocketGate *) clientp;
	curl_socket_t fd;
	int			type = address->socktype;

	if (gate->deny_all ||
		(gate->check_address &&
		 !lsm_endpoint_address_allowed(&address->addr, address->addrlen)))
	{
		if (!gate->deny_all)
			socket_address_text(address, gate->refused,
								sizeof(gate->refused));
		gate->refusal = LSM_TRANSPORT_DENIED;
		return CURL_SOCKET_BAD;
	}
	if (!socket_reserve())
	{
		gate->refusal = LSM_TRANSPORT_NO_DESCRIPTOR;
		return CURL_SOCKET_BAD;
	}
#ifdef SOCK_CLOEXEC
	type |= SOCK_CLOEXEC;		/* not inherited by programs the backend runs */
#endif
	fd = socket(address->family, type, address->protocol);
	if (fd == CURL_SOCKET_BAD)
		ReleaseExternalFD();
	else
		lsm_pool_socket_opened(fd);
	return fd;
}

/*
 * socket_close
 *		libcurl's CURLOPT_CLOSESOCKETFUNCTION: close a socket socket_open
 *		opened and release its descriptor.  Called when a connection
 *		closes, possibly long after the transfer that opened it: it uses
 *		no transfer's data.
 */
static int
socket_close(void *clientp, curl_socket_t fd)
{
	int			rc;

	lsm_pool_socket_closed(fd);
	rc = close(fd);
	ReleaseExternalFD();
	return rc;
}

/*
 * lsm_socket_configure
 *		Have the easy handle open and close its sockets here, with the gate
 *		(which must live as long as the handle) set from
 *		lancelsm.allowed_endpoints as it is now: a proxy's CONNECT target
 *		must be allowed by its name, and the endpoint connected to (the
 *		proxy, else the server) by its name or at its address.
 */
void
lsm_socket_configure(CURL *easy, LsmSocketGate *gate,
					 const LsmConfig *config)
{
	const char *connect_url = config->proxy ? config->proxy : config->base_url;
	LsmEndpointVerdict verdict = LSM_ENDPOINT_ALLOWED;

	memset(gate, 0, sizeof(*gate));
	gate->refusal = LSM_TRANSPORT_PENDING;
	if (config->proxy != NULL)
		verdict = lsm_endpoint_url_verdict(config->base_url, true,
										   gate->refused,
										   sizeof(gate->refused));
	if (verdict != LSM_ENDPOINT_DENIED)
		verdict = lsm_endpoint_url_verdict(connect_url, false, gate->refused,
										   sizeof(gate->refused));
	gate->deny_all = (verdict == LSM_ENDPOINT_DENIED);
	gate->check_address = (verdict == LSM_ENDPOINT_CHECK_ADDRESS);
	curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, socket_open);
	curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, gate);
	curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, socket_close);
	curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, NULL);
	if (gate->deny_all)
		/* a pooled connection opened before the setting changed */
		curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
}

/*
 * lsm_socket_refusal
 *		How a transfer that ended with code failed because of the socket
 *		callbacks: LSM_TRANSPORT_DENIED (text: the endpoint refused; always
 *		when the gate refused the endpoint by name) or
 *		LSM_TRANSPORT_NO_DESCRIPTOR; LSM_TRANSPORT_PENDING when they
 *		refused nothing, or the transfer did not end in a failed connect
 *		(it succeeded at another address of the same name, or failed
 *		later for another reason).
 */
LsmTransport
lsm_socket_refusal(const LsmSocketGate *gate, CURLcode code, char *text,
				   size_t textlen)
{
	if (gate->deny_all && code != CURLE_OK)
	{
		/* refused by name: even if the name did not resolve */
		strlcpy(text, gate->refused, textlen);
		return LSM_TRANSPORT_DENIED;
	}
	/* a refused socket is a failed connect; anything else came later */
	if (code != CURLE_COULDNT_CONNECT || gate->refusal == LSM_TRANSPORT_PENDING)
		return LSM_TRANSPORT_PENDING;
	strlcpy(text, gate->refused, textlen);
	return gate->refusal;
}
