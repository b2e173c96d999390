/*-------------------------------------------------------------------------
 *
 * option.h
 *		Server and user-mapping options of the lancelsm foreign-data wrapper,
 *		and their resolution into one connection configuration.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_OPTION_H
#define LANCELSM_OPTION_H

#include "postgres.h"

#include "nodes/pg_list.h"

/* The HTTP version a server's requests use (option http_version). */
typedef enum LsmHttpVersion
{
	LSM_HTTP_DEFAULT,			/* HTTP/2 over TLS when offered (ALPN), else 1.1 */
	LSM_HTTP_1_1,				/* HTTP/1.1 only */
	LSM_HTTP_2					/* HTTP/2, over plain http:// too */
} LsmHttpVersion;

/*
 * Everything a request needs to reach one LanceDB server as one role.
 * Allocated in the caller's memory context by lsm_config_resolve().
 * api_key is NULL or "" when the mapping has none; callers must wipe it,
 * and proxy_password (lsm_config_wipe), when they are done with them.
 */
typedef struct LsmConfig
{
	Oid			serverid;
	Oid			umid;			/* user mapping used (InvalidOid: none) */
	char	   *server_name;
	char	   *base_url;		/* no trailing slash */
	char	   *database;
	bool		host_override;	/* send x-lancedb-database */
	char	   *id_delimiter;	/* "$" unless set */
	long		connect_timeout_ms; /* 0: libcurl's default */
	long		read_timeout_s; /* longest silence of the server; 0: none */
	LsmHttpVersion http_version;
	char	   *proxy;			/* http://host:port; NULL: no proxy at all */
	char	   *proxy_user;		/* the mapping's; NULL: none */
	char	   *proxy_password; /* secret: also in secrets[] */
	char	   *ssl_ca_file;	/* NULL when unset */
	char	   *ssl_cert_file;
	char	   *ssl_key_file;
	char	   *api_key;
	char	   *database_prefix;	/* x-lancedb-database-prefix; NULL: none */
	char	   *user_id;		/* x-lancedb-user-id; NULL: none */
	char	   *bearer_token_file;	/* NULL: no authorization header */
	int			nheaders;		/* extra_headers of server and mapping */
	char	  **header_lines;	/* "name: value"; the mapping's are secret */
	int			nsecrets;		/* values of the mapping's extra_headers */
	char	  **secrets;		/* wiped by lsm_config_wipe */
} LsmConfig;

struct LsmFailure;

/* the name of the wrapper whose servers are lancelsm's */
#define LSM_FDW_NAME "lancelsm"

/* why a user mapping may not replace a server's header, and the fix */
#define LSM_OVERRIDE_DETAIL \
	gettext_noop("The server authenticates every role that has USAGE on it with its bearer_token_file or client certificate, so a user mapping may not replace its headers.")
#define LSM_OVERRIDE_HINT \
	gettext_noop("Remove the header from the user mapping's extra_headers, or from the server's.")

/* in option.c */
extern char *lsm_header_override(List *server_options,
								 List *mapping_options);
extern void lsm_options_wipe(List *options);
extern LsmConfig *lsm_config_resolve(const char *server_name);
extern LsmConfig *lsm_config_try_resolve(const char *server_name,
										 struct LsmFailure **failure);
extern struct LsmFailure *lsm_server_problem(const char *server_name);

/* in mapping.c */
extern void lsm_mapping_init(void);
extern void lsm_config_wipe(LsmConfig *config);

#endif							/* LANCELSM_OPTION_H */
