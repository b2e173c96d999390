/*-------------------------------------------------------------------------
 *
 * option_check.c
 *		The pure part of the lancelsm foreign-data wrapper's options: which
 *		options exist where, the check of each value and of a whole list,
 *		the headers of extra_headers, and the base URL of a server.  No
 *		fmgr, and no catalog access but superuser() (the role's row, for
 *		the options only a superuser may set), so that fuzz/ links it
 *		alone with stand-ins for superuser() and the few server functions
 *		it calls.
 *
 * The validator itself (lancelsm_fdw_validator) and the resolution of a
 * server and user mapping into an LsmConfig are in option.c.  No message
 * ever prints an option value: the API key and the user mapping's extra
 * headers are secrets.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_foreign_server.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "functions/functions.h"
#include "functions/option.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "protocol/protocol.h"
#include "utils/varlena.h"

#include "pg_compat.h"
#include "wire_text.h"

#define LSM_MAX_DELIMITER_BYTES 8

/* Largest edit distance for which "Perhaps you meant ..." is offered. */
#define LSM_MAX_SUGGESTION_DISTANCE 3

typedef void (*OptionCheck) (DefElem *def);

/* One valid option: where it may be set and how its value is checked. */
typedef struct LsmOption
{
	const char *name;
	Oid			catalog;		/* ForeignServerRelationId or
								 * UserMappingRelationId */
	OptionCheck check;			/* NULL: any value without control chars */
	bool		superuser_only; /* lets the backend read server files */
} LsmOption;

pg_noreturn static void option_reject_value(const DefElem *def,
											const char *detail);
pg_noreturn static void option_reject_name(const DefElem *def, Oid catalog);
static void option_check_nonempty(DefElem *def);
static void option_check_region(DefElem *def);
static void option_check_url(DefElem *def);
static void option_check_delimiter(DefElem *def);
static void option_check_timeout(DefElem *def);
static void option_check_read_timeout(DefElem *def);
static void option_check_consistency(DefElem *def);
static void option_check_max_requests(DefElem *def);
static void option_check_headers(DefElem *def);
static void option_check_http_version(DefElem *def);
static void option_check_proxy(DefElem *def);
static void option_check_proxy_user(DefElem *def);

static const LsmOption lsm_options[] = {
	{"database", ForeignServerRelationId, option_check_nonempty, false},
	{"region", ForeignServerRelationId, option_check_region, false},
	{"host_override", ForeignServerRelationId, option_check_url, false},
	{"id_delimiter", ForeignServerRelationId, option_check_delimiter, false},
	{"connect_timeout", ForeignServerRelationId, option_check_timeout, false},
	{"read_timeout", ForeignServerRelationId, option_check_read_timeout, false},
	{"read_consistency_interval", ForeignServerRelationId, option_check_consistency, false},
	{"max_requests_in_flight", ForeignServerRelationId, option_check_max_requests, false},
	{"ssl_ca_file", ForeignServerRelationId, option_check_nonempty, true},
	{"ssl_cert_file", ForeignServerRelationId, option_check_nonempty, true},
	{"ssl_key_file", ForeignServerRelationId, option_check_nonempty, true},
	{"extra_headers", ForeignServerRelationId, option_check_headers, false},
	{"database_prefix", ForeignServerRelationId, option_check_nonempty, false},
	{"user_id", ForeignServerRelationId, option_check_nonempty, false},
	{"bearer_token_file", ForeignServerRelationId, option_check_nonempty, true},
	{"http_version", ForeignServerRelationId, option_check_http_version, false},
	{"proxy", ForeignServerRelationId, option_check_proxy, false},
	{"api_key", UserMappingRelationId, NULL, false},
	{"extra_headers", UserMappingRelationId, option_check_headers, false},
	{"proxy_user", UserMappingRelationId, option_check_proxy_user, false},
	{"proxy_password", UserMappingRelationId, NULL, false},
	{NULL, InvalidOid, NULL, false}
};

/*
 * option_is_alnum: true for an ASCII letter or digit, whatever the locale.
 */
static bool
option_is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9');
}

/*
 * option_is_label: true when s is non-empty and made of ASCII letters, digits
 * and hyphens only: safe to place in a host name.
 */
static bool
option_is_label(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
	{
		if (!option_is_alnum(*s) && *s != '-')
			return false;
	}
	return true;
}

/*
 * option_reject_value: raise the error for an unacceptable value of option
 * def.  detail must be a full sentence and must not quote the value: values
 * may be secrets.
 */
static void
option_reject_value(const DefElem *def, const char *detail)
{
	ereport(ERROR,
			errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			errmsg("invalid value for option \"%s\"", def->defname),
			errdetail("%s", detail));
	pg_unreachable();
}

/*
 * option_lookup: the entry of lsm_options named name, or NULL.  Unless
 * any_catalog, only an entry for catalog matches.
 */
static const LsmOption *
option_lookup(const char *name, Oid catalog, bool any_catalog)
{
	const LsmOption *opt;

	for (opt = lsm_options; opt->name != NULL; opt++)
	{
		if (!any_catalog && opt->catalog != catalog)
			continue;
		if (strcmp(opt->name, name) == 0)
			return opt;
	}
	return NULL;
}

/*
 * option_valid_names: a palloc'd, comma-separated list of the options valid
 * for catalog, or NULL when there are none.
 */
static char *
option_valid_names(Oid catalog)
{
	const LsmOption *opt;
	StringInfoData buf;

	initStringInfo(&buf);
	for (opt = lsm_options; opt->name != NULL; opt++)
	{
		if (opt->catalog != catalog)
			continue;
		appendStringInfo(&buf, "%s%s", buf.len > 0 ? ", " : "", opt->name);
	}
	return buf.len > 0 ? buf.data : NULL;
}

/*
 * option_closest_name: the option valid for catalog closest to name by
 * Levenshtein distance, if that distance is small enough to be a plausible
 * typo; else NULL.
 */
static const char *
option_closest_name(const char *name, Oid catalog)
{
	const LsmOption *opt;
	const char *best = NULL;
	int			best_distance = LSM_MAX_SUGGESTION_DISTANCE + 1;
	int			len = strlen(name);

	/* option names are identifiers; anything longer is no typo of ours */
	if (len >= NAMEDATALEN)
		return NULL;

	for (opt = lsm_options; opt->name != NULL; opt++)
	{
		int			d;

		if (opt->catalog != catalog)
			continue;
		d = varstr_levenshtein(name, len, opt->name, strlen(opt->name),
							   1, 1, 1, true);
		if (d < best_distance && d < (int) strlen(opt->name))
		{
			best = opt->name;
			best_distance = d;
		}
	}
	return best;
}

/*
 * option_reject_name: raise the error for option def, which is not valid for
 * catalog. The hint says where the option belongs if it is valid elsewhere,
 * else suggests a close name, else lists the valid options.
 */
static void
option_reject_name(const DefElem *def, Oid catalog)
{
	const LsmOption *elsewhere = option_lookup(def->defname, InvalidOid, true);
	const char *closest = option_closest_name(def->defname, catalog);
	char	   *valid = option_valid_names(catalog);

	if (elsewhere != NULL && elsewhere->catalog == UserMappingRelationId)
		ereport(ERROR,
				errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				errmsg("invalid option \"%s\"", def->defname),
				errhint("Set option \"%s\" in a user mapping instead.",
						def->defname));
	else if (elsewhere != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				errmsg("invalid option \"%s\"", def->defname),
				errhint("Set option \"%s\" on the foreign server instead.",
						def->defname));
	else if (closest != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				errmsg("invalid option \"%s\"", def->defname),
				errhint("Perhaps you meant the option \"%s\".", closest));
	else if (valid != NULL)
		ereport(ERROR,
				errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				errmsg("invalid option \"%s\"", def->defname),
				errhint("Valid options in this context are: %s.", valid));
	else
		ereport(ERROR,
				errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				errmsg("invalid option \"%s\"", def->defname),
				errhint("There are no valid options in this context."));
	pg_unreachable();
}

/*
 * option_check_controls: refuse a value holding control characters (bytes
 * below 0x20 and 0x7F): values end up in HTTP headers and URLs, where a CR or
 * LF would inject headers.
 */
static void
option_check_controls(DefElem *def)
{
	const unsigned char *p = (const unsigned char *) defGetString(def);

	for (; *p != '\0'; p++)
	{
		if (*p < 0x20 || *p == 0x7F)
			option_reject_value(def,
								"Option values must not contain control characters.");
	}
}

/*
 * option_check_nonempty: refuse an empty value.
 */
static void
option_check_nonempty(DefElem *def)
{
	if (defGetString(def)[0] == '\0')
		option_reject_value(def, "The value must not be empty.");
}

/*
 * option_check_region: a region is a non-empty host-name label: letters,
 * digits, hyphens.
 */
static void
option_check_region(DefElem *def)
{
	if (!option_is_label(defGetString(def)))
		option_reject_value(def,
							"A region must be non-empty and contain only letters, digits and hyphens.");
}

/*
 * option_check_delimiter: the namespace delimiter: 1 to
 * LSM_MAX_DELIMITER_BYTES bytes, no '/' (the table identifier is a single URL
 * path segment).
 */
static void
option_check_delimiter(DefElem *def)
{
	const char *value = defGetString(def);

	if (value[0] == '\0' || strlen(value) > LSM_MAX_DELIMITER_BYTES)
		option_reject_value(def,
							"The delimiter must be between 1 and 8 bytes long.");
	if (strchr(value, '/') != NULL)
		option_reject_value(def,
							"The delimiter must not contain \"/\".");
}

/*
 * lsm_option_parse_timeout: parse value as a whole number of seconds between min
 * and max: digits only, nothing else.  Returns false when it is not one;
 * *seconds is set only on success.
 */
bool
lsm_option_parse_timeout(const char *value, long min, long max, long *seconds)
{
	char	   *end;
	long		v;

	/* strtol would also accept leading blanks and a sign */
	if (value[0] < '0' || value[0] > '9')
		return false;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*seconds = v;
	return true;
}

/*
 * option_check_timeout: connect_timeout is a whole number of seconds from 1
 * to 3600.
 */
static void
option_check_timeout(DefElem *def)
{
	long		seconds;

	if (!lsm_option_parse_timeout(defGetString(def), 1, LSM_MAX_CONNECT_TIMEOUT,
							  &seconds))
		option_reject_value(def,
							"The connection timeout must be a whole number of seconds between 1 and 3600.");
}

/*
 * option_check_read_timeout: read_timeout is a whole number of seconds from 0
 * (off) to 86400.
 */
static void
option_check_read_timeout(DefElem *def)
{
	long		seconds;

	if (!lsm_option_parse_timeout(defGetString(def), 0, LSM_MAX_READ_TIMEOUT,
							  &seconds))
		option_reject_value(def,
							"The read timeout must be a whole number of seconds between 0 and 86400.");
}

/*
 * option_check_consistency: read_consistency_interval is a whole number of
 * seconds from 0 (every request asks for the server's state as of its
 * sending) to 86400.
 */
static void
option_check_consistency(DefElem *def)
{
	long		seconds;

	if (!lsm_option_parse_timeout(defGetString(def), 0, LSM_MAX_READ_TIMEOUT,
								  &seconds))
		option_reject_value(def,
							"The read consistency interval must be a whole number of seconds between 0 and 86400.");
}

/*
 * option_check_max_requests: max_requests_in_flight is a whole number from
 * 1 to LSM_MAX_REQUESTS_IN_FLIGHT (64).
 */
static void
option_check_max_requests(DefElem *def)
{
	long		n;

	if (!lsm_option_parse_timeout(defGetString(def), 1,
								  LSM_MAX_REQUESTS_IN_FLIGHT, &n))
		option_reject_value(def,
							"The most requests in flight must be a whole number between 1 and 64.");
}

/*
 * Headers lancelsm sets itself (or that belong to the HTTP layer): an
 * extra header must not replace them.  Compared as gateways compare
 * names (lsm_option_header_names_match).
 */
static const char *const option_reserved_headers[] = {
	"authorization", "connection", "content-length", "content-type",
	"expect", "host", "transfer-encoding", "user-agent", "x-api-key",
	"x-lancedb-database", "x-lancedb-database-prefix",
	"x-lancedb-min-read-version", "x-lancedb-min-timestamp", "x-lancedb-user-id",
	"x-request-id", NULL
};

/*
 * option_is_token: true when s is a non-empty HTTP token (RFC 9110): letters,
 * digits and !#$%&'*+-.^_`|~ only.  Header names must be tokens.
 */
static bool
option_is_token(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
	{
		if (!option_is_alnum(*s) && strchr("!#$%&'*+-.^_`|~", *s) == NULL)
			return false;
	}
	return true;
}

/*
 * option_header_fold: a byte of a header name as gateways compare it:
 * ASCII letters in lower case, '_' as '-'.
 */
static char
option_header_fold(char c)
{
	c = pg_ascii_tolower(c);
	return c == '_' ? '-' : c;
}

/*
 * lsm_option_header_names_match: whether header names a (alen bytes) and
 * b (blen bytes) name the same header for a gateway or proxy: equal
 * without regard to ASCII case, '_' and '-' alike.  HTTP compares names
 * without regard to case; nginx (underscores_in_headers), CGI and WSGI
 * servers and many gateways also read "X_Tenant" as "X-Tenant", so
 * lancelsm treats them as one name wherever it compares two.
 */
bool
lsm_option_header_names_match(const char *a, size_t alen, const char *b,
							  size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (option_header_fold(a[i]) != option_header_fold(b[i]))
			return false;
	return true;
}

/*
 * option_header_names_match: lsm_option_header_names_match of two
 * NUL-terminated names.
 */
static bool
option_header_names_match(const char *a, const char *b)
{
	return lsm_option_header_names_match(a, strlen(a), b, strlen(b));
}

/*
 * option_header_problem: why one extra header is refused, as a full sentence,
 * or NULL.  The name is quoted (names are not secret), the value never is.
 */
static char *
option_header_problem(const char *name, const char *value)
{
	if (!option_is_token(name))
		return psprintf("Header name \"%s\" is not an HTTP token: use letters, digits and !#$%%&'*+-.^_`|~ only.",
						name);
	for (int i = 0; option_reserved_headers[i] != NULL; i++)
		if (option_header_names_match(name, option_reserved_headers[i]))
			return psprintf("Header \"%s\" is set by lancelsm itself%s.",
							name, option_header_names_match(name, "authorization") ?
							"; use option \"bearer_token_file\" for a bearer token" : "");
	for (const unsigned char *p = (const unsigned char *) value; *p; p++)
		if (*p < 0x20 || *p == 0x7F)
			return psprintf("The value of header \"%s\" contains control characters.",
							name);
	return NULL;
}

/*
 * lsm_option_wipe_strings: zero and free n palloc'd strings and their array
 * (NULL: nothing).
 */
void
lsm_option_wipe_strings(char **strings, int n)
{
	if (strings == NULL)
		return;
	for (int i = 0; i < n; i++)
	{
		explicit_bzero(strings[i], strlen(strings[i]));
		pfree(strings[i]);
	}
	pfree(strings);
}

/*
 * lsm_option_parse_headers: decode an extra_headers value (a JSON object of
 * strings, in UTF-8) into palloc'd names and values.  Returns NULL, or why it is
 * refused (a sentence that quotes no value).  Names are checked to be HTTP
 * tokens lancelsm does not set itself and distinct, compared as gateways
 * compare them (lsm_option_header_names_match), values to hold no control
 * characters (JSON escapes such as \r\n included).
 */
char *
lsm_option_parse_headers(const char *text, int *n, char ***names, char ***values)
{
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	char	   *problem = NULL;

	*names = *values = NULL;
	if (!lsm_json_decode_headers(text, n, names, values, errbuf,
								 sizeof(errbuf)))
		return pstrdup(errbuf);
	for (int i = 0; problem == NULL && i < *n; i++)
	{
		problem = option_header_problem((*names)[i], (*values)[i]);
		for (int j = 0; problem == NULL && j < i; j++)
			if (option_header_names_match((*names)[i], (*names)[j]))
				problem = psprintf("Header \"%s\" is given twice.",
								   (*names)[i]);
	}
	/* text is UTF-8 (option_value_to_wire); the sentence is for SQL */
	if (problem != NULL)
	{
		bool		lossless;

		problem = lsm_text_from_wire_quiet(problem, &lossless);
	}
	return problem;
}

/*
 * option_check_headers: extra_headers is a JSON object of header names and
 * string values: {"X-Tenant": "acme"}.  The decoded copies are wiped.
 */
static void
option_check_headers(DefElem *def)
{
	char	  **names;
	char	  **values;
	int			n;
	char	   *problem = lsm_option_parse_headers(defGetString(def), &n, &names,
											   &values);

	lsm_option_wipe_strings(values, n);
	lsm_option_wipe_strings(names, n);
	if (problem != NULL)
		option_reject_value(def, problem);
}

/*
 * option_check_port: port (portlen bytes, not NUL-terminated) is a TCP port:
 * 1 to 5 digits, value 1 to 65535.
 */
static bool
option_check_port(const char *port, size_t portlen)
{
	int			value = 0;
	size_t		i;

	if (portlen == 0 || portlen > 5)
		return false;
	for (i = 0; i < portlen; i++)
	{
		if (port[i] < '0' || port[i] > '9')
			return false;
		value = value * 10 + (port[i] - '0');
	}
	return value >= 1 && value <= 65535;
}

/*
 * option_check_authority: auth (len bytes: the URL between "://" and the
 * first '/') is a host, optionally followed by ":port".  The host is a name
 * made of letters, digits, '-', '_' and '.', or an IPv6 literal in brackets.
 */
static bool
option_check_authority(const char *auth, size_t len)
{
	size_t		hostlen;
	size_t		i;

	if (len > 0 && auth[0] == '[')
	{
		const char *close = memchr(auth, ']', len);

		if (close == NULL || close == auth + 1)
			return false;
		for (i = 1; auth + i < close; i++)
		{
			if (strchr("0123456789abcdefABCDEF:.", auth[i]) == NULL)
				return false;
		}
		hostlen = close - auth + 1;
	}
	else
	{
		for (hostlen = 0; hostlen < len && auth[hostlen] != ':'; hostlen++)
		{
			if (!option_is_alnum(auth[hostlen]) &&
				strchr("-_.", auth[hostlen]) == NULL)
				return false;
		}
		if (hostlen == 0)
			return false;
	}
	if (hostlen == len)
		return true;
	return auth[hostlen] == ':' &&
		option_check_port(auth + hostlen + 1, len - hostlen - 1);
}

/*
 * option_check_url_path: the path of host_override (path: from its first
 * '/' after the authority, or "") is put before the routes'
 * /v1/table/..., as the SDK puts host_override before them, so that an
 * endpoint behind a gateway's path prefix is reached.  A path that
 * already holds the routes' prefix (ending in /v1, trailing slashes
 * aside, or holding /v1/table) would make every request a 404: refused.
 */
static void
option_check_url_path(DefElem *def, const char *path)
{
	size_t		len = strlen(path);

	while (len > 0 && path[len - 1] == '/')
		len--;
	if ((len >= 3 && pg_strncasecmp(path + len - 3, "/v1", 3) == 0) ||
		strstr(path, "/v1/table") != NULL)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("invalid value for option \"%s\"", def->defname),
				errdetail("lancelsm appends the routes, beginning with /v1/table/, to the URL's path."),
				errhint("Give the URL without /v1, as for the LanceDB SDK's host_override: only the scheme, host, port and any path prefix of a gateway."));
}

/*
 * option_check_url: host_override is an http:// or https:// URL with a host,
 * an optional port and path (not the routes' /v1), and no credentials,
 * query, fragment or blanks.
 */
static void
option_check_url(DefElem *def)
{
	const char *url = defGetString(def);
	const char *auth;
	size_t		authlen;

	if (pg_strncasecmp(url, "http://", 7) == 0)
		auth = url + 7;
	else if (pg_strncasecmp(url, "https://", 8) == 0)
		auth = url + 8;
	else
		option_reject_value(def,
							"The URL must begin with \"http://\" or \"https://\".");

	if (strpbrk(url, " ?#") != NULL)
		option_reject_value(def,
							"The URL must not contain blanks, a query or a fragment.");

	authlen = strcspn(auth, "/");
	if (memchr(auth, '@', authlen) != NULL)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("invalid value for option \"%s\"", def->defname),
				errdetail("The URL must not contain credentials."),
				errhint("Put the API key in a user mapping: OPTIONS (api_key '...')."));

	if (!option_check_authority(auth, authlen))
		option_reject_value(def,
							"The URL must name a host, optionally followed by a port number between 1 and 65535.");
	option_check_url_path(def, auth + authlen);
}

/*
 * option_has_port: the authority auth (len bytes, already checked by
 * option_check_authority) ends in ":port".
 */
static bool
option_has_port(const char *auth, size_t len)
{
	const char *close = memchr(auth, ']', len);
	const char *colon = NULL;

	for (size_t i = 0; i < len; i++)
		if (auth[i] == ':')
			colon = auth + i;
	return colon != NULL && (close == NULL || colon > close);
}

/*
 * option_check_http_version: http_version is "1.1" or "2".
 */
static void
option_check_http_version(DefElem *def)
{
	const char *value = defGetString(def);

	if (strcmp(value, "1.1") != 0 && strcmp(value, "2") != 0)
		option_reject_value(def,
							"The HTTP version must be \"1.1\" or \"2\"; leave the option unset to negotiate.");
}

/*
 * option_check_proxy: proxy is an http:// URL naming a host and a port,
 * with nothing after them but an optional "/": no credentials, no https
 * proxy (libcurl would then need TLS options of its own for it).
 */
static void
option_check_proxy(DefElem *def)
{
	const char *url = defGetString(def);
	const char *auth;
	size_t		authlen;

	if (pg_strncasecmp(url, "http://", 7) != 0)
		option_reject_value(def, "The proxy URL must begin with \"http://\".");
	auth = url + 7;
	authlen = strcspn(auth, "/");
	if (memchr(auth, '@', authlen) != NULL)
		option_reject_value(def,
							"The proxy URL must not contain credentials.");
	if (!option_check_authority(auth, authlen) ||
		!option_has_port(auth, authlen) ||
		(auth[authlen] != '\0' && strcmp(auth + authlen, "/") != 0))
		option_reject_value(def,
							"The proxy URL must name a host and a port number between 1 and 65535, and nothing else.");
}

/*
 * option_check_proxy_user: a proxy user name is not empty and holds no
 * ':' (libcurl would split "user:password" there).
 */
static void
option_check_proxy_user(DefElem *def)
{
	const char *value = defGetString(def);

	if (value[0] == '\0' || strchr(value, ':') != NULL)
		option_reject_value(def,
							"A proxy user name must not be empty nor contain \":\".");
}

/*
 * option_value_to_wire: replace the value of option def (of an object in
 * catalog) by its UTF-8 form, the one requests carry (and the one the
 * checks read: extra_headers is JSON); the old value is wiped.  File
 * names (ssl_*, bearer_token_file) name files of this host and stay as
 * they are.  A value UTF-8 cannot hold raises PostgreSQL's conversion
 * error (22P05; 22021 for bytes of a SQL_ASCII database that are not
 * UTF-8); a user mapping's value but proxy_user may be a secret, which
 * that error would quote: it raises the same SQLSTATE naming the option
 * only.
 */
static void
option_value_to_wire(DefElem *def, Oid catalog)
{
	char	   *value = defGetString(def);
	char	   *wire;
	bool		lossless = true;

	if (strncmp(def->defname, "ssl_", 4) == 0 ||
		strcmp(def->defname, "bearer_token_file") == 0)
		return;
	if (catalog == UserMappingRelationId &&
		strcmp(def->defname, "proxy_user") != 0)
		wire = lsm_text_to_wire_quiet(value, &lossless);
	else
		wire = lsm_text_to_wire(value);
	if (!lossless)
	{
		explicit_bzero(wire, strlen(wire));
		ereport(ERROR,
				errcode(GetDatabaseEncoding() == PG_SQL_ASCII ?
						ERRCODE_CHARACTER_NOT_IN_REPERTOIRE :
						ERRCODE_UNTRANSLATABLE_CHARACTER),
				errmsg("the value of option \"%s\" has no equivalent in encoding \"%s\"",
					   def->defname, "UTF8"));
	}
	if (wire == value)
		return;
	explicit_bzero(value, strlen(value));
	/* untransformRelOptions makes every value a String */
	castNode(String, def->arg)->sval = wire;
}

/*
 * lsm_option_list_to_wire: option_value_to_wire for every option of a
 * resolved server's or user mapping's list (the caller's own copy).
 * Errors: 22P05 or 22021 as option_value_to_wire.
 */
void
lsm_option_list_to_wire(List *options, Oid catalog)
{
	ListCell   *lc;

	foreach(lc, options)
		option_value_to_wire(lfirst_node(DefElem, lc), catalog);
}

/*
 * option_check_one: validate one option of an object stored in catalog: known
 * there, settable by the current role, value acceptable (in UTF-8, as sent).
 */
static void
option_check_one(DefElem *def, Oid catalog)
{
	const LsmOption *opt = option_lookup(def->defname, catalog, false);

	if (opt == NULL)
		option_reject_name(def, catalog);

	if (opt->superuser_only && !superuser())
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("permission denied to set option \"%s\"",
					   def->defname),
				errhint("Only superusers may set this option."));

	option_value_to_wire(def, catalog);
	option_check_controls(def);
	if (opt->check != NULL)
		opt->check(def);
}

/*
 * lsm_option_find: the value of option name in a DefElem list, or NULL.
 */
char *
lsm_option_find(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, name) == 0)
			return defGetString(def);
	}
	return NULL;
}

/*
 * option_check_server: checks spanning a server's whole (merged) option list:
 * database is required, and without host_override it becomes part of the host
 * name, so it must then be a host-name label; a proxy takes https targets
 * only.
 */
static void
option_check_server(List *options)
{
	const char *database = lsm_option_find(options, "database");

	if (database == NULL)
		ereport(ERROR,
				errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
				errmsg("option \"%s\" is required for lancelsm servers",
					   "database"),
				errhint("Name the LanceDB database with OPTIONS (database '...')."));

	if (lsm_option_find(options, "host_override") == NULL &&
		!option_is_label(database))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("invalid value for option \"%s\"", "database"),
				errdetail("Without option \"host_override\" the database name is part of the host name, so it may contain only letters, digits and hyphens."));

	/* through a proxy, plain http would show the API key to the proxy */
	if (lsm_option_find(options, "proxy") != NULL &&
		lsm_option_find(options, "host_override") != NULL &&
		pg_strncasecmp(lsm_option_find(options, "host_override"), "http://", 7) == 0)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("cannot send requests to a plain-http server through a proxy"),
				errdetail("The proxy would see the API key: only https targets go through a proxy, in a CONNECT tunnel."),
				errhint("Use an https:// host_override, or drop option \"proxy\"."));
}

/*
 * lsm_option_wipe_secrets: zero the value of every api_key, extra_headers and
 * proxy_password option in a DefElem list.  The list must be the caller's
 * own copy (as untransformRelOptions and GetUserMapping return), never a
 * catalog or cache entry.
 */
void
lsm_option_wipe_secrets(List *options)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if ((strcmp(def->defname, "api_key") == 0 ||
			 strcmp(def->defname, "extra_headers") == 0 ||
			 strcmp(def->defname, "proxy_password") == 0) &&
			def->arg != NULL && IsA(def->arg, String))
		{
			char	   *value = strVal(def->arg);

			explicit_bzero(value, strlen(value));
		}
	}
}

/*
 * option_check_endpoints: refuse a server whose endpoint (its proxy's, and
 * through a proxy its target's too) lancelsm.allowed_endpoints cannot
 * allow, with 42501.  A name that an address range may allow is accepted
 * here and checked at its address on every connection.
 */
static void
option_check_endpoints(List *options)
{
	const char *proxy = lsm_option_find(options, "proxy");
	const char *region = lsm_option_find(options, "region");
	char	   *url = lsm_option_base_url(lsm_option_find(options, "host_override"),
										  lsm_option_find(options, "database"),
										  region ? region : LSM_DEFAULT_REGION);
	char		endpoint[LSM_ENDPOINT_TEXT_LEN];

	if ((proxy != NULL &&
		 lsm_endpoint_url_verdict(url, true, endpoint,
								  sizeof(endpoint)) == LSM_ENDPOINT_DENIED) ||
		lsm_endpoint_url_verdict(proxy ? proxy : url, false, endpoint,
								 sizeof(endpoint)) == LSM_ENDPOINT_DENIED)
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("endpoint \"%s\" is not allowed by lancelsm.allowed_endpoints",
					   endpoint),
				errhint("A superuser can allow the endpoint in lancelsm.allowed_endpoints."));
}

/*
 * lsm_header_override: the name of the first header of a user mapping's
 * extra_headers (in mapping_options) that would replace one of
 * the server's, when the server authenticates with server-level
 * credentials (bearer_token_file or ssl_cert_file): every role with USAGE
 * sends those, so a mapping must not present another tenant's header
 * with them.  Names are compared as gateways compare them: "X_Tenant"
 * replaces "x-tenant" (lsm_option_header_names_match).  NULL when there
 * is no such header.  Values are wiped.
 */
char *
lsm_header_override(List *server_options, List *mapping_options)
{
	const char *server_headers = lsm_option_find(server_options, "extra_headers");
	const char *mapping_headers = lsm_option_find(mapping_options, "extra_headers");
	char	  **snames = NULL;
	char	  **svalues = NULL;
	char	  **mnames = NULL;
	char	  **mvalues = NULL;
	int			ns = 0;
	int			nm = 0;
	char	   *found = NULL;
	bool		valid;

	if (mapping_headers == NULL || server_headers == NULL ||
		(lsm_option_find(server_options, "bearer_token_file") == NULL &&
		 lsm_option_find(server_options, "ssl_cert_file") == NULL))
		return NULL;
	/* a stored value the validator would refuse raises later, when used */
	valid = lsm_option_parse_headers(server_headers, &ns, &snames, &svalues) == NULL;
	valid &= lsm_option_parse_headers(mapping_headers, &nm, &mnames, &mvalues) == NULL;
	for (int i = 0; valid && i < nm && found == NULL; i++)
		for (int j = 0; j < ns && found == NULL; j++)
			if (option_header_names_match(mnames[i], snames[j]))
				found = pstrdup(mnames[i]);
	lsm_option_wipe_strings(svalues, ns);
	lsm_option_wipe_strings(snames, ns);
	lsm_option_wipe_strings(mvalues, nm);
	lsm_option_wipe_strings(mnames, nm);
	return found;
}

/*
 * lsm_option_validate: validate the complete option list of an object
 * stored in catalog (pg_foreign_server, pg_user_mapping, or another, which
 * takes none), as lancelsm_fdw_validator (option.c) documents, then wipe
 * the list's secret values.  options must be the caller's own copy.
 * Errors: HV00D, 42501, 22023, HV002 (see lancelsm_fdw_validator).
 */
void
lsm_option_validate(List *options, Oid catalog)
{
	ListCell   *lc;

	foreach(lc, options)
		option_check_one(lfirst_node(DefElem, lc), catalog);

	if (catalog == ForeignServerRelationId)
	{
		option_check_server(options);
		option_check_endpoints(options);
	}
	if (catalog == UserMappingRelationId &&
		lsm_option_find(options, "proxy_password") != NULL &&
		lsm_option_find(options, "proxy_user") == NULL)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("option \"%s\" needs option \"%s\"",
					   "proxy_password", "proxy_user"));

	/* our copy of the key; the command stores its own */
	lsm_option_wipe_secrets(options);
}

/*
 * lsm_option_base_url: the URL requests go to: host_override with a lower-case
 * scheme and without trailing slashes, or the LanceDB Cloud URL of database
 * in region.
 */
char *
lsm_option_base_url(const char *host_override, const char *database,
				const char *region)
{
	char	   *url;
	char	   *p;
	size_t		len;

	if (host_override == NULL)
		return psprintf("https://%s.%s.api.lancedb.com", database, region);

	url = pstrdup(host_override);
	len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		url[--len] = '\0';

	/* the validator accepted any case; callers may compare the scheme */
	for (p = url; *p != ':' && *p != '\0'; p++)
		*p = pg_ascii_tolower((unsigned char) *p);
	return url;
}
