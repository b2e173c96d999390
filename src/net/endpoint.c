/*-------------------------------------------------------------------------
 *
 * endpoint.c
 *		lancelsm.allowed_endpoints: parsing the setting and testing the
 *		names and addresses of endpoints against it.
 *
 * An entry is either a host entry, host[:port] (a name or an address
 * literal, an IPv6 one in brackets; without a port, any port), or an
 * address range, an address with an optional /bits (10.0.0.0/8, ::1).
 * A host entry allows a URL whose host is that name, whatever it resolves
 * to; an address range allows the addresses actually connected to, tested
 * in the socket callback (src/net/socket.c), so that no DNS answer can
 * move a request outside them.  The list is parsed by the check hook with
 * PostgreSQL's own parsers (SplitGUCList, pg_getaddrinfo_all with
 * AI_NUMERICHOST, pg_sockaddr_cidr_mask, as pg_hba.conf is), kept as the
 * setting's extra, and read without allocating, from libcurl's callbacks
 * too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <netdb.h>

#include "common/ip.h"
#include "libpq/ifaddr.h"
#include "net/endpoint.h"
#include "net/pool.h"
#include "pg_compat.h"
#include "utils/varlena.h"

typedef struct EndpointEntry
{
	bool		is_range;
	int			port;			/* host entries: 0 for any port */
	char		host[ENDPOINT_HOST_LEN];	/* lower case, without brackets */
	struct sockaddr_storage addr;	/* ranges: the network */
	struct sockaddr_storage mask;	/* ranges: its mask */
} EndpointEntry;

typedef struct EndpointList
{
	int			nentries;
	int			nranges;
	EndpointEntry entries[FLEXIBLE_ARRAY_MEMBER];
} EndpointList;

/* the parsed setting (its GUC extra); NULL before the first assignment */
static const EndpointList *endpoint_list = NULL;

/*
 * endpoint_parse_address
 *		Parse a numeric address (no name is looked up) and the number of
 *		bits of its network (NULL: the whole address) into addr and mask.
 *		Returns false when either is not valid.
 */
static bool
endpoint_parse_address(const char *text, char *bits,
					   struct sockaddr_storage *addr,
					   struct sockaddr_storage *mask)
{
	struct addrinfo hints;
	struct addrinfo *res = NULL;
	bool		ok;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (pg_getaddrinfo_all(text, NULL, &hints, &res) != 0 || res == NULL)
	{
		if (res != NULL)
			pg_freeaddrinfo_all(hints.ai_family, res);
		return false;
	}
	memset(addr, 0, sizeof(*addr));
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	ok = pg_sockaddr_cidr_mask(mask, bits, addr->ss_family) == 0;
	pg_freeaddrinfo_all(hints.ai_family, res);
	return ok;
}

/*
 * endpoint_split_host
 *		Split len bytes of host[:port] (an IPv6 literal in brackets) into a
 *		lower-case host without brackets and a port (0 when absent).
 *		Returns false when the text is no such thing.
 */
static bool
endpoint_split_host(const char *s, size_t len, char *host, int *port)
{
	const char *end = s + len;
	const char *hend;
	const char *colon;

	*port = 0;
	if (len > 0 && s[0] == '[')
	{
		hend = memchr(s, ']', len);
		if (hend == NULL)
			return false;
		s++;
		colon = hend + 1 < end ? hend + 1 : NULL;
		if (colon != NULL && *colon != ':')
			return false;
	}
	else
	{
		colon = memchr(s, ':', len);
		hend = colon ? colon : end;
		for (const char *p = s; p < hend; p++)
			if (!isalnum((unsigned char) *p) && *p != '-' && *p != '.')
				return false;
	}
	if (hend == s || hend - s >= ENDPOINT_HOST_LEN)
		return false;
	for (int i = 0; i < hend - s; i++)
		host[i] = pg_ascii_tolower((unsigned char) s[i]);
	host[hend - s] = '\0';
	if (colon == NULL)
		return true;
	if (colon + 1 == end || end - colon > 6)
		return false;
	for (const char *p = colon + 1; p < end; p++)
	{
		if (!isdigit((unsigned char) *p))
			return false;
		*port = *port * 10 + (*p - '0');
	}
	return *port >= 1 && *port <= 65535;
}

/*
 * endpoint_parse_entry
 *		Parse one entry of the setting into e.  Returns false when it is
 *		neither an address range nor host[:port].
 */
static bool
endpoint_parse_entry(char *item, EndpointEntry *e)
{
	char	   *slash = strchr(item, '/');

	memset(e, 0, sizeof(*e));
	e->is_range = true;
	if (slash != NULL)
	{
		*slash = '\0';
		return endpoint_parse_address(item, slash + 1, &e->addr, &e->mask);
	}
	if (endpoint_parse_address(item, NULL, &e->addr, &e->mask))
		return true;
	e->is_range = false;
	return endpoint_split_host(item, strlen(item), e->host, &e->port);
}

/*
 * lsm_endpoints_check
 *		The check hook of lancelsm.allowed_endpoints: parse the comma list
 *		into the setting's extra, or refuse it naming the entry at fault.
 */
bool
lsm_endpoints_check(char **newval, void **extra, GucSource source)
{
	char	   *raw = pstrdup(*newval);
	List	   *items;
	EndpointList *list;
	ListCell   *lc;

	if (!SplitGUCList(raw, ',', &items))
	{
		GUC_check_errdetail("List syntax is invalid.");
		return false;
	}
	list = guc_malloc(LOG, offsetof(EndpointList, entries) +
					  Max(list_length(items), 1) * sizeof(EndpointEntry));
	if (list == NULL)
		return false;
	list->nentries = 0;
	list->nranges = 0;
	foreach(lc, items)
	{
		char	   *item = (char *) lfirst(lc);
		char	   *shown = pstrdup(item);
		EndpointEntry *e = &list->entries[list->nentries];

		if (!endpoint_parse_entry(item, e))
		{
			GUC_check_errdetail("Entry \"%s\" is neither host[:port] nor an address range such as 10.0.0.0/8.",
								shown);
			guc_free(list);
			return false;
		}
		list->nentries++;
		list->nranges += e->is_range ? 1 : 0;
	}
	*extra = list;
	return true;
}

/*
 * endpoint_lists_equal
 *		Whether two parsed settings hold the same entries in the same order
 *		(NULL, not assigned yet, is the empty list).  The check hook zeroes
 *		every entry before filling it, so entries compare byte for byte.
 */
static bool
endpoint_lists_equal(const EndpointList *a, const EndpointList *b)
{
	int			na = a ? a->nentries : 0;
	int			nb = b ? b->nentries : 0;

	if (na != nb)
		return false;
	return na == 0 ||
		memcmp(a->entries, b->entries, na * sizeof(EndpointEntry)) == 0;
}

/*
 * lsm_endpoints_assign
 *		The assign hook of lancelsm.allowed_endpoints: use the list the
 *		check hook parsed.  When the entries changed (a reload, SET, or the
 *		end of a transaction that SET it), every connection pool of the
 *		backend is marked to be closed before its next request: a pooled
 *		connection was checked against the old list when it opened, and
 *		reusing it would not check it again (a name allowed to be checked at
 *		its address opens no socket when a connection is reused).  The
 *		next request connects afresh and is checked by name and address.
 *		Only marks: allocates nothing and never raises.
 */
void
lsm_endpoints_assign(const char *newval, void *extra)
{
	const EndpointList *list = (const EndpointList *) extra;

	if (!endpoint_lists_equal(endpoint_list, list))
		lsm_pool_invalidate_all();
	endpoint_list = list;
}

/*
 * endpoint_unrestricted
 *		Whether the setting is empty (or not assigned yet).
 */
static bool
endpoint_unrestricted(void)
{
	return endpoint_list == NULL || endpoint_list->nentries == 0;
}

/*
 * lsm_endpoint_address_allowed
 *		Whether an address about to be connected to lies in an address
 *		range of the setting (always, when it is empty).  Allocates
 *		nothing and never raises: it runs in libcurl's socket callback.
 */
bool
lsm_endpoint_address_allowed(const struct sockaddr *addr, socklen_t addrlen)
{
	struct sockaddr_storage ss;

	if (endpoint_unrestricted())
		return true;
	if (addrlen > sizeof(ss))
		return false;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, addrlen);
	for (int i = 0; i < endpoint_list->nentries; i++)
	{
		const EndpointEntry *e = &endpoint_list->entries[i];

		if (e->is_range && e->addr.ss_family == ss.ss_family &&
			pg_range_sockaddr(&ss, &e->addr, &e->mask))
			return true;
	}
	return false;
}

/*
 * endpoint_literal_verdict
 *		The verdict on a host that is an address literal: allowed when an
 *		address range holds it (nothing resolves it, so it is the address
 *		connected to).  Returns false when host is not such a literal.
 */
static bool
endpoint_literal_verdict(const char *host, LsmEndpointVerdict *verdict)
{
	struct sockaddr_storage addr;
	struct sockaddr_storage mask;
	char		copy[ENDPOINT_HOST_LEN];

	strlcpy(copy, host, sizeof(copy));
	if (!endpoint_parse_address(copy, NULL, &addr, &mask))
		return false;
	*verdict = lsm_endpoint_address_allowed((struct sockaddr *) &addr,
											sizeof(addr)) ?
		LSM_ENDPOINT_ALLOWED : LSM_ENDPOINT_DENIED;
	return true;
}

/*
 * lsm_endpoint_url_host
 *		The host of an http:// or https:// URL (lower case, an IPv6
 *		literal without brackets) into host (ENDPOINT_HOST_LEN bytes, see
 *		endpoint.h), and its port, the scheme's default when it names none.
 *		Returns false when the URL names no such host.  Never raises.
 */
bool
lsm_endpoint_url_host(const char *url, char *host, int *port)
{
	const char *auth = strstr(url, "://");

	if (auth == NULL ||
		!endpoint_split_host(auth + 3, strcspn(auth + 3, "/?#"), host, port))
		return false;
	if (*port == 0)
		*port = pg_strncasecmp(url, "https:", 6) == 0 ? 443 : 80;
	return true;
}

/*
 * lsm_endpoint_url_verdict
 *		The verdict of the setting on the endpoint of an http:// or
 *		https:// URL (its default port when it names none): allowed by a
 *		host entry naming it, or (for an address literal) by an address
 *		range holding it; else, for a name, to be checked at its address
 *		when the setting has address ranges, unless name_only (a proxy's
 *		CONNECT target, which the proxy resolves).  endpoint receives
 *		"host:port" for messages.  Never raises.
 */
LsmEndpointVerdict
lsm_endpoint_url_verdict(const char *url, bool name_only, char *endpoint,
						 size_t endpointlen)
{
	char		host[ENDPOINT_HOST_LEN];
	int			port;
	LsmEndpointVerdict verdict;

	if (!lsm_endpoint_url_host(url, host, &port))
	{
		strlcpy(endpoint, url, endpointlen);
		return endpoint_unrestricted() ? LSM_ENDPOINT_ALLOWED :
			LSM_ENDPOINT_DENIED;
	}
	snprintf(endpoint, endpointlen, strchr(host, ':') ? "[%s]:%d" : "%s:%d",
			 host, port);
	if (endpoint_unrestricted())
		return LSM_ENDPOINT_ALLOWED;
	for (int i = 0; i < endpoint_list->nentries; i++)
	{
		const EndpointEntry *e = &endpoint_list->entries[i];

		if (!e->is_range && strcmp(e->host, host) == 0 &&
			(e->port == 0 || e->port == port))
			return LSM_ENDPOINT_ALLOWED;
	}
	if (endpoint_literal_verdict(host, &verdict))
		return verdict;
	return (endpoint_list->nranges > 0 && !name_only) ?
		LSM_ENDPOINT_CHECK_ADDRESS : LSM_ENDPOINT_DENIED;
}
