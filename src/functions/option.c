/*-------------------------------------------------------------------------
 *
 * option.c
 *		Validation of the lancelsm foreign-data wrapper's options, and their
 *		resolution into one LsmConfig for a server and the current role.
 *
 * Options live on two objects: the foreign server (where to connect and
 * how) and the user mapping (the API key, and extra headers whose values
 * are secrets).  The wrapper itself, foreign
 * tables and their columns take no options.
 *
 * PostgreSQL calls the validator with the complete option list the object
 * will have once the command succeeds: on ALTER SERVER / ALTER USER MAPPING
 * ... OPTIONS it merges the stored options with the ADD/SET/DROP actions
 * first (transformGenericOptions in commands/foreigncmds.c), so checks that
 * span several options, such as "database is required", are sound.
 *
 * The API key and the user mapping's extra headers are secrets: no
 * message ever prints an option value, and the copies this file makes are
 * zeroed as soon as they are no longer needed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "protocol/fault.h"
#include "protocol/lsm_json.h"
#include "functions/option.h"
#include "pg_compat.h"
#include "wire_text.h"

/* Name of the foreign-data wrapper the extension script creates. */
#define LSM_FDW_NAME "lancelsm"

#define LSM_DEFAULT_REGION "us-east-1"
#define LSM_DEFAULT_ID_DELIMITER "$"
#define LSM_MAX_DELIMITER_BYTES 8
#define LSM_MAX_CONNECT_TIMEOUT 3600	/* seconds */
#define LSM_MAX_READ_TIMEOUT 86400	/* seconds */
#define LSM_DEFAULT_READ_TIMEOUT 300	/* seconds, as the SDKs */

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
 * option_parse_timeout: parse value as a whole number of seconds between min
 * and max: digits only, nothing else.  Returns false when it is not one;
 * *seconds is set only on success.
 */
static bool
option_parse_timeout(const char *value, long min, long max, long *seconds)
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

	if (!option_parse_timeout(defGetString(def), 1, LSM_MAX_CONNECT_TIMEOUT,
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

	if (!option_parse_timeout(defGetString(def), 0, LSM_MAX_READ_TIMEOUT,
							  &seconds))
		option_reject_value(def,
							"The read timeout must be a whole number of seconds between 0 and 86400.");
}

/*
 * Headers lancelsm sets itself (or that belong to the HTTP layer): an
 * extra header must not replace them.  Compared without regard to case.
 */
static const char *const option_reserved_headers[] = {
	"authorization", "connection", "content-length", "content-type",
	"expect", "host", "transfer-encoding", "user-agent", "x-api-key",
	"x-lancedb-database", "x-lancedb-database-prefix", "x-lancedb-user-id",
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
		if (pg_strcasecmp(name, option_reserved_headers[i]) == 0)
			return psprintf("Header \"%s\" is set by lancelsm itself%s.",
							name, pg_strcasecmp(name, "authorization") == 0 ?
							"; use option \"bearer_token_file\" for a bearer token" : "");
	for (const unsigned char *p = (const unsigned char *) value; *p; p++)
		if (*p < 0x20 || *p == 0x7F)
			return psprintf("The value of header \"%s\" contains control characters.",
							name);
	return NULL;
}

/*
 * option_wipe_strings: zero and free n palloc'd strings and their array
 * (NULL: nothing).
 */
static void
option_wipe_strings(char **strings, int n)
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
 * option_parse_headers: decode an extra_headers value (a JSON object of
 * strings, in UTF-8) into palloc'd names and values.  Returns NULL, or why it is
 * refused (a sentence that quotes no value).  Names are checked to be HTTP
 * tokens lancelsm does not set itself and distinct without regard to case,
 * values to hold no control characters (JSON escapes such as \r\n included).
 */
static char *
option_parse_headers(const char *text, int *n, char ***names, char ***values)
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
			if (pg_strcasecmp((*names)[i], (*names)[j]) == 0)
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
	char	   *problem = option_parse_headers(defGetString(def), &n, &names,
											   &values);

	option_wipe_strings(values, n);
	option_wipe_strings(names, n);
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
 * option_check_url: host_override is an http:// or https:// URL with a host,
 * an optional port and path, and no credentials, query, fragment or blanks.
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
 * option_list_to_wire: option_value_to_wire for every option of a
 * resolved server's or user mapping's list (the caller's own copy).
 */
static void
option_list_to_wire(List *options, Oid catalog)
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
 * option_find: the value of option name in a DefElem list, or NULL.
 */
static char *
option_find(List *options, const char *name)
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
	const char *database = option_find(options, "database");

	if (database == NULL)
		ereport(ERROR,
				errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
				errmsg("option \"%s\" is required for lancelsm servers",
					   "database"),
				errhint("Name the LanceDB database with OPTIONS (database '...')."));

	if (option_find(options, "host_override") == NULL &&
		!option_is_label(database))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("invalid value for option \"%s\"", "database"),
				errdetail("Without option \"host_override\" the database name is part of the host name, so it may contain only letters, digits and hyphens."));

	/* through a proxy, plain http would show the API key to the proxy */
	if (option_find(options, "proxy") != NULL &&
		option_find(options, "host_override") != NULL &&
		pg_strncasecmp(option_find(options, "host_override"), "http://", 7) == 0)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("cannot send requests to a plain-http server through a proxy"),
				errdetail("The proxy would see the API key: only https targets go through a proxy, in a CONNECT tunnel."),
				errhint("Use an https:// host_override, or drop option \"proxy\"."));
}

/*
 * option_wipe_secrets: zero the value of every api_key, extra_headers and
 * proxy_password option in a DefElem list.  The list must be the caller's
 * own copy (as untransformRelOptions and GetUserMapping return), never a
 * catalog or cache entry.
 */
static void
option_wipe_secrets(List *options)
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

PG_FUNCTION_INFO_V1(lancelsm_fdw_validator);

/*
 * lancelsm_fdw_validator: validator of the lancelsm foreign-data wrapper.
 *
 * Arguments: text[] of "name=value" options (the object's complete option
 * list after the command, never NULL: PostgreSQL passes an empty array), and
 * the OID of the catalog of the object they belong to.  Returns void; an
 * invalid list raises an error and the command fails.
 *
 * Servers (pg_foreign_server) take database (required), region,
 * host_override, id_delimiter, connect_timeout, read_timeout, ssl_ca_file,
 * ssl_cert_file, ssl_key_file, extra_headers, database_prefix, user_id,
 * bearer_token_file, http_version and proxy; user mappings (pg_user_mapping)
 * take api_key, extra_headers, proxy_user and proxy_password (secret
 * values but proxy_user); the wrapper, foreign tables and columns
 * take none.
 *
 * Errors:
 *	HV00D (fdw_invalid_option_name): option not valid for this object.
 *	42501 (insufficient_privilege): a non-superuser sets an ssl_* option
 *		or bearer_token_file.
 *	22023 (invalid_parameter_value): a value with control characters, or
 *		one the option does not accept.
 *	HV002 (fdw_dynamic_parameter_value_needed): a server without database.
 *	22023 also: a proxy with a plain-http host_override (the proxy would
 *		see the API key); a proxy_password without proxy_user.
 * No message quotes an option value.
 */
Datum
lancelsm_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	ListCell   *lc;

	foreach(lc, options)
		option_check_one(lfirst_node(DefElem, lc), catalog);

	if (catalog == ForeignServerRelationId)
		option_check_server(options);
	if (catalog == UserMappingRelationId &&
		option_find(options, "proxy_password") != NULL &&
		option_find(options, "proxy_user") == NULL)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("option \"%s\" needs option \"%s\"",
					   "proxy_password", "proxy_user"));

	/* our copy of the key; the command stores its own */
	option_wipe_secrets(options);

	PG_RETURN_VOID();
}

/*
 * option_server_problem: look up server server_name and check that it belongs
 * to the lancelsm wrapper and, when check_usage, that the current role may
 * use it. Returns NULL and sets *server_out, or the failure without raising:
 * 42704 unknown server, 42809 server of another wrapper, 42501 no USAGE
 * privilege.
 */
static LsmFailure *
option_server_problem(const char *server_name, bool check_usage,
					  ForeignServer **server_out)
{
	ForeignServer *server = GetForeignServerByName(server_name, true);
	ForeignDataWrapper *fdw;

	if (server == NULL)
		return lsm_fault_new(ERRCODE_UNDEFINED_OBJECT, NULL, NULL,
							 LSM_FAULT_NO_SERVER, server_name);
	fdw = GetForeignDataWrapper(server->fdwid);
	if (strcmp(fdw->fdwname, LSM_FDW_NAME) != 0)
		return lsm_fault_new(ERRCODE_WRONG_OBJECT_TYPE,
							 psprintf("Server \"%s\" uses foreign-data wrapper \"%s\".",
									  server->servername, fdw->fdwname),
							 NULL, LSM_FAULT_OTHER_WRAPPER, server->servername);
	if (check_usage &&
		object_aclcheck(ForeignServerRelationId, server->serverid,
						GetUserId(), ACL_USAGE) != ACLCHECK_OK)
		return lsm_fault_new(ERRCODE_INSUFFICIENT_PRIVILEGE, NULL, NULL,
							 LSM_FAULT_NO_USAGE, server->servername);
	*server_out = server;
	return NULL;
}

/*
 * lsm_server_problem: why server_name cannot be declared or used as a
 * lancelsm server (42704 unknown, 42809 another wrapper), or NULL.  Checks
 * neither USAGE nor user mappings, raises nothing.
 */
LsmFailure *
lsm_server_problem(const char *server_name)
{
	ForeignServer *server;

	return option_server_problem(server_name, false, &server);
}

/*
 * option_user_mapping_problem: check that the current role has a user mapping
 * for server, or that PUBLIC has one.  Returns NULL, or the 42704 failure
 * naming the user and the server (PostgreSQL 15's GetUserMapping names
 * neither), without raising.
 */
static LsmFailure *
option_user_mapping_problem(ForeignServer *server)
{
	Oid			userid = GetUserId();
	Oid			umid;

	umid = GetSysCacheOid2(USERMAPPINGUSERSERVER, Anum_pg_user_mapping_oid,
						   ObjectIdGetDatum(userid),
						   ObjectIdGetDatum(server->serverid));
	if (!OidIsValid(umid))
		umid = GetSysCacheOid2(USERMAPPINGUSERSERVER, Anum_pg_user_mapping_oid,
							   ObjectIdGetDatum(InvalidOid),
							   ObjectIdGetDatum(server->serverid));
	if (OidIsValid(umid))
		return NULL;
	return lsm_fault_new(ERRCODE_UNDEFINED_OBJECT, NULL,
						 psprintf("Create a user mapping for this user or for PUBLIC on server \"%s\".",
								  server->servername),
						 LSM_FAULT_NO_USER_MAPPING,
						 GetUserNameFromId(userid, false), server->servername);
}

/*
 * option_base_url: the URL requests go to: host_override with a lower-case
 * scheme and without trailing slashes, or the LanceDB Cloud URL of database
 * in region.
 */
static char *
option_base_url(const char *host_override, const char *database,
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

/*
 * option_server_string: a palloc'd copy of server option name, or of dflt
 * (which may be NULL) when the server does not set it.
 */
static char *
option_server_string(ForeignServer *server, const char *name,
					 const char *dflt)
{
	const char *value = option_find(server->options, name);

	if (value == NULL)
		value = dflt;
	return value != NULL ? pstrdup(value) : NULL;
}

/*
 * option_server_seconds: server option name as whole seconds between min and
 * max, or dflt when the server does not set it.  A stored value the validator
 * would refuse raises 22023.
 */
static long
option_server_seconds(ForeignServer *server, const char *name, long min,
					  long max, long dflt)
{
	const char *value = option_find(server->options, name);
	long		seconds = dflt;

	if (value != NULL && !option_parse_timeout(value, min, max, &seconds))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("stored option \"%s\" of server \"%s\" is invalid",
						name, server->servername)));
	return seconds;
}

/*
 * option_server_http_version: the server's http_version option (unset:
 * LSM_HTTP_DEFAULT).
 */
static LsmHttpVersion
option_server_http_version(ForeignServer *server)
{
	const char *value = option_find(server->options, "http_version");

	if (value == NULL)
		return LSM_HTTP_DEFAULT;
	return strcmp(value, "1.1") == 0 ? LSM_HTTP_1_1 : LSM_HTTP_2;
}

/*
 * option_add_header: append the line "name: value" to config's extra headers,
 * replacing an earlier one of the same name (the mapping's win over the
 * server's).  A secret value is also kept for redaction.
 */
static void
option_add_header(LsmConfig *config, const char *name, const char *value,
				  bool secret)
{
	char	   *line = psprintf("%s: %s", name, value);
	size_t		namelen = strlen(name);
	int			i;

	for (i = 0; i < config->nheaders; i++)
	{
		if (pg_strncasecmp(config->header_lines[i], name, namelen) == 0 &&
			config->header_lines[i][namelen] == ':')
			break;
	}
	if (i == config->nheaders)
		config->nheaders++;
	else
	{
		explicit_bzero(config->header_lines[i],
					   strlen(config->header_lines[i]));
		pfree(config->header_lines[i]);
	}
	config->header_lines[i] = line;
	if (secret)
		config->secrets[config->nsecrets++] = pstrdup(value);
}

/*
 * option_add_headers: add the headers of an extra_headers value (NULL: none)
 * to config; secret for the user mapping's.  A stored value the validator
 * would refuse raises 22023 without quoting it.
 */
static void
option_add_headers(LsmConfig *config, const char *text, bool secret)
{
	char	  **names;
	char	  **values;
	int			n;
	char	   *problem;

	if (text == NULL)
		return;
	problem = option_parse_headers(text, &n, &names, &values);
	if (problem == NULL)
	{
		config->header_lines = config->header_lines == NULL ?
			palloc((n + 1) * sizeof(char *)) :
			repalloc(config->header_lines,
					 (config->nheaders + n + 1) * sizeof(char *));
		config->secrets = config->secrets == NULL ?
			palloc((n + 1) * sizeof(char *)) :
			repalloc(config->secrets,
					 (config->nsecrets + n + 1) * sizeof(char *));
		for (int i = 0; i < n; i++)
			option_add_header(config, names[i], values[i], secret);
	}
	option_wipe_strings(values, n);
	option_wipe_strings(names, n);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("stored option \"extra_headers\" of server \"%s\" or its user mapping is invalid",
						config->server_name),
				 errdetail("%s", problem)));
}

/*
 * option_fill_server: fill the server part of config from server's options.
 */
static void
option_fill_server(LsmConfig *config, ForeignServer *server)
{
	char	   *host_override = option_find(server->options, "host_override");
	char	   *region;

	config->serverid = server->serverid;
	config->server_name = pstrdup(server->servername);
	config->database = option_server_string(server, "database", NULL);
	if (config->database == NULL)
		ereport(ERROR,
				errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
				errmsg("option \"%s\" is required for lancelsm servers",
					   "database"),
				errdetail("Server \"%s\" has no option \"%s\".",
						  server->servername, "database"));

	region = option_server_string(server, "region", LSM_DEFAULT_REGION);
	config->base_url = option_base_url(host_override, config->database,
									   region);
	config->host_override = (host_override != NULL);
	config->id_delimiter = option_server_string(server, "id_delimiter",
												LSM_DEFAULT_ID_DELIMITER);
	config->connect_timeout_ms =
		option_server_seconds(server, "connect_timeout", 1,
							  LSM_MAX_CONNECT_TIMEOUT, 0) * 1000L;
	config->read_timeout_s =
		option_server_seconds(server, "read_timeout", 0,
							  LSM_MAX_READ_TIMEOUT, LSM_DEFAULT_READ_TIMEOUT);
	config->http_version = option_server_http_version(server);
	config->proxy = option_server_string(server, "proxy", NULL);
	config->ssl_ca_file = option_server_string(server, "ssl_ca_file", NULL);
	config->ssl_cert_file = option_server_string(server, "ssl_cert_file", NULL);
	config->ssl_key_file = option_server_string(server, "ssl_key_file", NULL);
	config->database_prefix = option_server_string(server, "database_prefix",
												   NULL);
	config->user_id = option_server_string(server, "user_id", NULL);
	config->bearer_token_file = option_server_string(server,
													 "bearer_token_file",
													 NULL);
	option_add_headers(config, option_find(server->options, "extra_headers"),
					   false);
}

/*
 * option_fill_proxy_credentials: the user mapping's proxy_user and
 * proxy_password (options: its list) into config; the password is kept
 * with the secrets, so that no error can carry it.
 */
static void
option_fill_proxy_credentials(LsmConfig *config, List *options)
{
	const char *user = option_find(options, "proxy_user");
	const char *password = option_find(options, "proxy_password");

	if (user == NULL)
		return;
	config->proxy_user = pstrdup(user);
	config->proxy_password = pstrdup(password ? password : "");
	config->secrets = config->secrets == NULL ?
		palloc(sizeof(char *)) :
		repalloc(config->secrets, (config->nsecrets + 1) * sizeof(char *));
	config->secrets[config->nsecrets++] = config->proxy_password;
}

/*
 * option_config_build: the configuration for server with the current role's
 * user mapping (found by option_user_mapping_problem), in
 * CurrentMemoryContext.
 */
static LsmConfig *
option_config_build(ForeignServer *server)
{
	UserMapping *um = GetUserMapping(GetUserId(), server->serverid);
	LsmConfig  *config = palloc0(sizeof(LsmConfig));
	char	   *api_key;

	option_list_to_wire(server->options, ForeignServerRelationId);
	option_list_to_wire(um->options, UserMappingRelationId);
	option_fill_server(config, server);
	config->umid = um->umid;

	api_key = option_find(um->options, "api_key");
	config->api_key = api_key != NULL ? pstrdup(api_key) : NULL;
	option_add_headers(config, option_find(um->options, "extra_headers"),
					   true);
	option_fill_proxy_credentials(config, um->options);

	/*
	 * GetUserMapping built um->options with untransformRelOptions in our
	 * memory context: zero that copy of the key now rather than leaving it
	 * in memory until the context is reset.  (The catalog tuple in the
	 * syscache keeps its own copy; that one is not ours to touch.)
	 */
	option_wipe_secrets(um->options);
	list_free_deep(um->options);
	pfree(um);

	return config;
}

/*
 * lsm_config_try_resolve: as lsm_config_resolve, but a server that cannot be
 * used is reported instead of raised: returns NULL and sets *failure (42704
 * unknown server or no user mapping, 42809 a server of another wrapper, 42501
 * no USAGE privilege).  Only HV002, a server stored without database
 * (impossible through this validator), and PostgreSQL's own errors still
 * raise.
 *
 * The caller owns config->api_key and must call lsm_config_wipe when done.
 */
LsmConfig *
lsm_config_try_resolve(const char *server_name, LsmFailure **failure)
{
	ForeignServer *server;

	*failure = option_server_problem(server_name, true, &server);
	if (*failure == NULL)
		*failure = option_user_mapping_problem(server);
	if (*failure != NULL)
		return NULL;
	return option_config_build(server);
}

/*
 * lsm_config_resolve: everything needed to send requests to server
 * server_name as the current role, allocated in CurrentMemoryContext.
 *
 * Errors: 42704 unknown server or no user mapping (neither for the current
 * role nor PUBLIC), 42809 a server of another wrapper, 42501 no USAGE
 * privilege on the server, HV002 a server without database (only if its
 * options were stored without this validator).
 *
 * The caller owns config->api_key and must call lsm_config_wipe when done.
 */
LsmConfig *
lsm_config_resolve(const char *server_name)
{
	LsmFailure *failure;
	LsmConfig  *config = lsm_config_try_resolve(server_name, &failure);

	if (config == NULL)
		lsm_fault_raise(failure);
	return config;
}

/*
 * lsm_config_wipe: zero and free config's secrets (the API key, the extra
 * header lines, the user mapping's header values and the proxy password)
 * and set them to NULL.
 * Safe to call on NULL, or more than once.
 */
void
lsm_config_wipe(LsmConfig *config)
{
	if (config == NULL)
		return;
	option_wipe_strings(config->header_lines, config->nheaders);
	/* proxy_password is among the secrets: wiped and freed with them */
	option_wipe_strings(config->secrets, config->nsecrets);
	config->proxy_password = NULL;
	config->header_lines = config->secrets = NULL;
	config->nheaders = config->nsecrets = 0;
	if (config->api_key == NULL)
		return;
	explicit_bzero(config->api_key, strlen(config->api_key));
	pfree(config->api_key);
	config->api_key = NULL;
}
