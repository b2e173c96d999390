/*-------------------------------------------------------------------------
 *
 * option.c
 *		The lancelsm foreign-data wrapper's validator, and the resolution of
 *		its options into one LsmConfig for a server and the current role.
 *		The checks themselves, without fmgr, are in option_check.c.
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
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_user_mapping.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/syscache.h"

#include "protocol/protocol.h"
#include "functions/functions.h"
#include "functions/option.h"
#include "pg_compat.h"


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
	lsm_option_validate(untransformRelOptions(PG_GETARG_DATUM(0)),
						PG_GETARG_OID(1));
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
 * option_server_string: a palloc'd copy of server option name, or of dflt
 * (which may be NULL) when the server does not set it.
 */
static char *
option_server_string(ForeignServer *server, const char *name,
					 const char *dflt)
{
	const char *value = lsm_option_find(server->options, name);

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
	const char *value = lsm_option_find(server->options, name);
	long		seconds = dflt;

	if (value != NULL && !lsm_option_parse_timeout(value, min, max, &seconds))
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
	const char *value = lsm_option_find(server->options, "http_version");

	if (value == NULL)
		return LSM_HTTP_DEFAULT;
	return strcmp(value, "1.1") == 0 ? LSM_HTTP_1_1 : LSM_HTTP_2;
}

/*
 * option_add_header: append the line "name: value" to config's extra headers,
 * replacing an earlier one of the same name, compared as gateways compare
 * names (lsm_option_header_names_match: the mapping's "X_Tenant" replaces
 * the server's "x-tenant").  The mapping's win over the server's.  A
 * secret value is also kept for redaction.
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
		const char *colon = strchr(config->header_lines[i], ':');

		if (colon != NULL &&
			lsm_option_header_names_match(config->header_lines[i],
										  colon - config->header_lines[i],
										  name, namelen))
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
	problem = lsm_option_parse_headers(text, &n, &names, &values);
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
	lsm_option_wipe_strings(values, n);
	lsm_option_wipe_strings(names, n);
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
	char	   *host_override = lsm_option_find(server->options, "host_override");
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
	config->base_url = lsm_option_base_url(host_override, config->database,
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
	config->read_consistency_interval_ms = (int)
		option_server_seconds(server, "read_consistency_interval", 0,
							  LSM_MAX_READ_TIMEOUT, -1) * 1000;
	if (config->read_consistency_interval_ms < 0)
		config->read_consistency_interval_ms = -1;
	config->max_requests_in_flight = (int)
		option_server_seconds(server, "max_requests_in_flight", 1,
							  LSM_MAX_REQUESTS_IN_FLIGHT,
							  LSM_MAX_REQUESTS_IN_FLIGHT);
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
	option_add_headers(config, lsm_option_find(server->options, "extra_headers"),
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
	const char *user = lsm_option_find(options, "proxy_user");
	const char *password = lsm_option_find(options, "proxy_password");

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

	lsm_option_list_to_wire(server->options, ForeignServerRelationId);
	lsm_option_list_to_wire(um->options, UserMappingRelationId);
	option_fill_server(config, server);
	config->umid = um->umid;

	api_key = lsm_option_find(um->options, "api_key");
	config->api_key = api_key != NULL ? pstrdup(api_key) : NULL;
	option_add_headers(config, lsm_option_find(um->options, "extra_headers"),
					   true);
	option_fill_proxy_credentials(config, um->options);

	/*
	 * GetUserMapping built um->options with untransformRelOptions in our
	 * memory context: zero that copy of the key now rather than leaving it
	 * in memory until the context is reset.  (The catalog tuple in the
	 * syscache keeps its own copy; that one is not ours to touch.)
	 */
	lsm_option_wipe_secrets(um->options);
	list_free_deep(um->options);
	pfree(um);

	return config;
}

/*
 * option_header_override_problem: the 42501 failure of a server whose
 * current user mapping replaces a header the server's credentials go
 * with (one written before the server's options changed, or before
 * lancelsm was loaded), naming the header; NULL when there is none.
 * Never raises for it: a use reports it, and nothing is dropped silently.
 */
static LsmFailure *
option_header_override_problem(ForeignServer *server)
{
	UserMapping *um = GetUserMapping(GetUserId(), server->serverid);
	char	   *header = lsm_header_override(server->options,
											 um->options);

	lsm_option_wipe_secrets(um->options);
	if (header == NULL)
		return NULL;
	return lsm_fault_new(ERRCODE_INSUFFICIENT_PRIVILEGE,
						 pstrdup(_(LSM_OVERRIDE_DETAIL)),
						 pstrdup(_(LSM_OVERRIDE_HINT)),
						 LSM_FAULT_HEADER_OVERRIDE, server->servername,
						 header);
}

/*
 * lsm_config_try_resolve: as lsm_config_resolve, but a server that cannot be
 * used is reported instead of raised: returns NULL and sets *failure (42704
 * unknown server or no user mapping, 42809 a server of another wrapper, 42501
 * no USAGE privilege, or a user mapping whose extra_headers replace a header
 * of a server with server-level credentials).  Only HV002, a server stored without database
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
	if (*failure == NULL)
		*failure = option_header_override_problem(server);
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
 * privilege on the server or a user mapping that replaces a header of a
 * server with server-level credentials (naming the header), HV002 a server
 * without database (only if its options were stored without this
 * validator).
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
	lsm_option_wipe_strings(config->header_lines, config->nheaders);
	/* proxy_password is among the secrets: wiped and freed with them */
	lsm_option_wipe_strings(config->secrets, config->nsecrets);
	config->proxy_password = NULL;
	config->header_lines = config->secrets = NULL;
	config->nheaders = config->nsecrets = 0;
	if (config->api_key == NULL)
		return;
	explicit_bzero(config->api_key, strlen(config->api_key));
	pfree(config->api_key);
	config->api_key = NULL;
}
