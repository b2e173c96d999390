/*-------------------------------------------------------------------------
 *
 * connections.c
 *		The SQL functions over the backend's pooled connections, as
 *		postgres_fdw has them for its own: lancelsm_get_connections(),
 *		lancelsm_disconnect(server) and lancelsm_disconnect_all().
 *
 * A backend keeps one connection pool per (server, user mapping) it sent
 * requests to (src/net/pool.c); its keep-alive connections serve every
 * later call.  These functions show and close the pools of the calling
 * backend only, never another's, so EXECUTE is granted to PUBLIC, as
 * postgres_fdw does.  A pool with requests in flight is never closed: no
 * request of this backend runs while it executes one of these functions,
 * so that only guards against a call from inside a request.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_user_mapping.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "functions/functions.h"
#include "functions/option.h"
#include "miscadmin.h"
#include "net/net.h"
#include "protocol/protocol.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

/*
 * connections_user_name: the role a user mapping is for, as
 * postgres_fdw_get_connections() shows it: "public" for a mapping FOR
 * PUBLIC, NULL when there is no mapping (umid InvalidOid) or it, or its
 * role, was dropped since.
 */
static char *
connections_user_name(Oid umid)
{
	HeapTuple	tup;
	Oid			role;

	if (!OidIsValid(umid))
		return NULL;
	tup = SearchSysCache1(USERMAPPINGOID, ObjectIdGetDatum(umid));
	if (!HeapTupleIsValid(tup))
		return NULL;
	role = ((Form_pg_user_mapping) GETSTRUCT(tup))->umuser;
	ReleaseSysCache(tup);
	if (!OidIsValid(role))
		return pstrdup("public");
	return GetUserNameFromId(role, true);
}

/*
 * connections_server_name: the name of server serverid, NULL when it was
 * dropped since.
 */
static char *
connections_server_name(Oid serverid)
{
	ForeignServer *server = GetForeignServerExtended(serverid,
													 FSV_MISSING_OK);

	return server ? server->servername : NULL;
}

/*
 * connections_put_text: values[*i] and nulls[*i] from a string that may
 * be NULL; advances *i.
 */
static void
connections_put_text(Datum *values, bool *nulls, int *i, const char *s)
{
	nulls[*i] = (s == NULL);
	values[*i] = s ? CStringGetTextDatum(s) : (Datum) 0;
	(*i)++;
}

PG_FUNCTION_INFO_V1(lancelsm_get_connections);

/*
 * lancelsm_get_connections() RETURNS TABLE (server_name text, user_name
 * text, connections int4, requests int4, valid bool)
 *		One row per connection pool of the calling backend: the foreign
 *		server (NULL once dropped), the user mapping's role ("public" for a
 *		mapping FOR PUBLIC; NULL without a mapping, or once it is dropped),
 *		the connections it holds open, busy or idle (a connection the server
 *		closed counts until the next request on the pool notices), the
 *		requests in flight on it (0 from SQL: none runs while this does),
 *		and valid, false once the server's or the mapping's options or
 *		lancelsm.allowed_endpoints changed: such a pool is closed before its
 *		next request.  Sends no request.  Errors: 0A000 when the function
 *		is declared with other columns (ALTER EXTENSION UPDATE not run).
 */
Datum
lancelsm_get_connections(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_CONNECTIONS_COLS);
	int			n;
	LsmPoolInfo *pools = lsm_pool_list(&n);

	for (int p = 0; p < n; p++)
	{
		Datum		values[LSM_CONNECTIONS_COLS];
		bool		nulls[LSM_CONNECTIONS_COLS] = {0};
		int			i = 0;

		connections_put_text(values, nulls, &i,
							 connections_server_name(pools[p].serverid));
		connections_put_text(values, nulls, &i,
							 connections_user_name(pools[p].umid));
		values[i++] = Int32GetDatum(pools[p].connections);
		values[i++] = Int32GetDatum(pools[p].requests);
		values[i++] = BoolGetDatum(pools[p].valid);
		lsm_put_row(rsinfo, values, nulls, i);
	}
	return (Datum) 0;
}

/*
 * connections_disconnect: close the pools of serverid (InvalidOid: all)
 * and say whether any was; a pool left open because requests are in
 * flight on it raises a WARNING (55006) naming its server.
 */
static bool
connections_disconnect(Oid serverid)
{
	Oid			busy;
	int			closed = lsm_pool_disconnect(serverid, &busy);

	if (OidIsValid(busy))
	{
		char	   *name = connections_server_name(busy);

		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot close the connections of server \"%s\" while requests are in flight on them",
						name ? name : "(dropped)")));
	}
	return closed > 0;
}

PG_FUNCTION_INFO_V1(lancelsm_disconnect);

/*
 * lancelsm_disconnect(server text) RETURNS bool
 *		Close the calling backend's connection pools of the named server,
 *		for every user mapping, with their connections; the next request
 *		connects afresh.  Returns true when a pool was closed, false when
 *		the backend held none for the server.  Errors: 42704 when no
 *		foreign server has that name, 42809 when it is not a lancelsm
 *		server, as every function taking a server refuses them.  A pool
 *		with requests in flight is left open with a WARNING (55006).
 */
Datum
lancelsm_disconnect(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	LsmFailure *problem = lsm_server_problem(name);

	if (problem != NULL)
		lsm_fault_raise(problem);
	PG_RETURN_BOOL(connections_disconnect(GetForeignServerByName(name, false)->serverid));
}

PG_FUNCTION_INFO_V1(lancelsm_disconnect_all);

/*
 * lancelsm_disconnect_all() RETURNS bool
 *		Close every connection pool of the calling backend, with their
 *		connections.  Returns true when a pool was closed, false when there
 *		was none.  A pool with requests in flight is left open with a
 *		WARNING (55006).
 */
Datum
lancelsm_disconnect_all(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(connections_disconnect(InvalidOid));
}
