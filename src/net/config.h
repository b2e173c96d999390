/*-------------------------------------------------------------------------
 *
 * config.h
 *		The connection configuration a request needs: one LanceDB server
 *		reached as one role.  Plain types only; src/functions/option.c
 *		fills it from the server and user-mapping options.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_CONFIG_H
#define LANCELSM_CONFIG_H

#include "postgres.h"

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

#endif							/* LANCELSM_CONFIG_H */
