/*-------------------------------------------------------------------------
 *
 * server_events.c
 *		Declared tables follow their server: the event trigger functions
 *		behind lancelsm_server_rename (ddl_command_end of ALTER SERVER)
 *		and lancelsm_server_drop (sql_drop of DROP SERVER and DROP OWNED).
 *
 * A row of lancelsm_table names its server by name, not by OID: pg_dump
 * writes an extension's configuration rows as plain values, so an OID
 * would be stale after a restore.  A pg_depend row cannot point at a
 * table row either, so postgres_fdw's behaviour is had with event
 * triggers: a rename of a lancelsm server renames it in lancelsm_table,
 * and a drop is refused (2BP01) while tables are declared on the server,
 * unless CASCADE, which removes them; the record then forgets them at
 * commit, by the dropped server's OID, as after lancelsm_remove_table
 * (src/functions/recording.c).  While a dump is restored
 * (check_function_bodies off, as pg_dump's and pg_restore's scripts set
 * it), pg_restore --clean drops servers without CASCADE before it drops
 * and creates the extension again: such a drop is let through and keeps
 * the declarations, which the restore then brings back with the server.
 *
 * Both functions are SECURITY DEFINER: the owner of a server may rename
 * or drop it without any privilege on lancelsm_table.  Event triggers do
 * not fire in single-user mode, with event_triggers = off (PostgreSQL 17
 * and later) or with session_replication_role = replica
 * (docs/operations.md, "Servers by identity").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "fmgr.h"
#include "functions/declared.h"
#include "functions/option.h"
#include "functions/recording.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/guc.h"

/* The most declared tables a refused drop lists, as PostgreSQL's own. */
#define SERVER_EVENTS_MAX_LISTED 100

/*
 * The servers the current command dropped (d), and the condition that
 * joins them to the declared tables on them (t).
 */
#define SERVER_EVENTS_DROPPED "pg_catalog.pg_event_trigger_dropped_objects() d"
#define SERVER_EVENTS_ON_DROPPED \
	"d.object_type = 'server' AND t.server = d.address_names[1]"

/*
 * server_events_data: the trigger data of an event trigger call; raises
 * 39P01 when the function was not called as an event trigger.
 */
static EventTriggerData *
server_events_data(FunctionCallInfo fcinfo)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function can only be called as an event trigger")));
	return (EventTriggerData *) fcinfo->context;
}

/*
 * lancelsm_server_renamed() RETURNS event_trigger
 *
 * On ddl_command_end of ALTER SERVER: after ALTER SERVER old RENAME TO
 * new of a lancelsm server, the tables declared on old are declared on
 * new, their thresholds and outcomes kept.  Other ALTER SERVER commands,
 * and servers of other wrappers, change nothing.  Errors: 42710 when
 * tables are declared on a server named new already (left from a server
 * dropped while event triggers were off): the rename is refused, and the
 * hint says how to remove them.
 */
PG_FUNCTION_INFO_V1(lancelsm_server_renamed);
Datum
lancelsm_server_renamed(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata = server_events_data(fcinfo);
	RenameStmt *stmt = (RenameStmt *) trigdata->parsetree;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	char	  **rows[2];

	if (!IsA(stmt, RenameStmt) || stmt->renameType != OBJECT_FOREIGN_SERVER ||
		lsm_server_problem(stmt->newname) != NULL)
		PG_RETURN_NULL();
	args[0] = CStringGetTextDatum(strVal(stmt->object));
	args[1] = CStringGetTextDatum(stmt->newname);
	if (lsm_declared_query(fcinfo,
						   "SELECT t.server, t.table_name FROM %s t"
						   " WHERE t.server OPERATOR(pg_catalog.=) $2"
						   " LIMIT 1", 2, argtypes, args, rows) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("cannot rename server \"%s\" to \"%s\": LanceDB tables are declared on a server of that name",
						strVal(stmt->object), stmt->newname),
				 errdetail("LanceDB table \"%s\" is declared on server \"%s\".",
						   rows[1][0], stmt->newname),
				 errhint("Remove the declarations of server \"%s\" with lancelsm_remove_table, or choose another name.",
						 stmt->newname)));
	(void) lsm_declared_query(fcinfo,
							  "UPDATE %s t SET server = $2"
							  " WHERE t.server OPERATOR(pg_catalog.=) $1",
							  2, argtypes, args, NULL);
	PG_RETURN_NULL();
}

/*
 * server_events_cascade: whether the dropping command (DROP ..., DROP
 * OWNED) said CASCADE.
 */
static bool
server_events_cascade(Node *parsetree)
{
	if (IsA(parsetree, DropStmt))
		return ((DropStmt *) parsetree)->behavior == DROP_CASCADE;
	if (IsA(parsetree, DropOwnedStmt))
		return ((DropOwnedStmt *) parsetree)->behavior == DROP_CASCADE;
	return false;
}

/*
 * server_events_refuse: raise 2BP01 for a drop of servers on which the n
 * declared tables (servers[i], names[i], ordered) depend, naming the
 * first server, and listing up to SERVER_EVENTS_MAX_LISTED of the tables
 * in the detail as PostgreSQL lists dependent objects.
 */
pg_noreturn static void
server_events_refuse(char **servers, char **names, uint64 n)
{
	StringInfoData detail;

	initStringInfo(&detail);
	for (uint64 i = 0; i < n && i < SERVER_EVENTS_MAX_LISTED; i++)
	{
		if (i > 0)
			appendStringInfoChar(&detail, '\n');
		appendStringInfo(&detail,
						 _("declared LanceDB table \"%s\" depends on server \"%s\""),
						 names[i], servers[i]);
	}
	if (n > SERVER_EVENTS_MAX_LISTED)
		appendStringInfo(&detail,
						 _("\nand %llu other declared tables (see lancelsm_table)"),
						 (unsigned long long) (n - SERVER_EVENTS_MAX_LISTED));
	ereport(ERROR,
			(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
			 errmsg("cannot drop server \"%s\" because declared LanceDB tables depend on it",
					servers[0]),
			 errdetail_internal("%s", detail.data),
			 errhint("Use DROP ... CASCADE to remove the declared tables too, or remove them first with lancelsm_remove_table.")));
	pg_unreachable();
}

/*
 * server_events_remove: remove the declared tables on the servers the
 * current command dropped, and have the record forget each at commit by
 * its server's OID (a rollback keeps them all).
 */
static void
server_events_remove(FunctionCallInfo fcinfo)
{
	char	  **rows[2];
	uint64		n;

	n = lsm_declared_query(fcinfo,
						   "DELETE FROM %s t USING " SERVER_EVENTS_DROPPED
						   " WHERE " SERVER_EVENTS_ON_DROPPED
						   " RETURNING d.objid::pg_catalog.text, t.table_name",
						   0, NULL, NULL, rows);
	for (uint64 i = 0; i < n; i++)
	{
		Datum		serverid = DirectFunctionCall1(oidin,
												   CStringGetDatum(rows[0][i]));

		lsm_record_forget_removed_oid(DatumGetObjectId(serverid), rows[1][i]);
	}
}

/*
 * lancelsm_server_dropped() RETURNS event_trigger
 *
 * On sql_drop of DROP SERVER and DROP OWNED: when the command dropped
 * servers on which tables are declared, with CASCADE those declarations
 * are removed, and the record (counters, last stats, histories) forgets
 * them when the transaction commits, as after lancelsm_remove_table;
 * without it the command is refused (2BP01, the tables named, a hint),
 * which keeps the servers.  While a dump is restored
 * (check_function_bodies off) a drop without CASCADE keeps the
 * declarations instead, with a NOTICE: pg_restore --clean drops the
 * servers so, then the extension, and creates all three again.
 */
PG_FUNCTION_INFO_V1(lancelsm_server_dropped);
Datum
lancelsm_server_dropped(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata = server_events_data(fcinfo);
	char	  **rows[2];
	uint64		n;

	if (server_events_cascade(trigdata->parsetree))
	{
		server_events_remove(fcinfo);
		PG_RETURN_NULL();
	}
	n = lsm_declared_query(fcinfo,
						   "SELECT t.server, t.table_name FROM %s t, "
						   SERVER_EVENTS_DROPPED " WHERE " SERVER_EVENTS_ON_DROPPED
						   " ORDER BY t.server COLLATE \"C\", t.table_name COLLATE \"C\"",
						   0, NULL, NULL, rows);
	if (n == 0)
		PG_RETURN_NULL();
	if (!check_function_bodies)
	{
		ereport(NOTICE,
				(errmsg("declared LanceDB tables of server \"%s\" are kept while a dump is restored",
						rows[0][0]),
				 errdetail("check_function_bodies is off, as pg_dump and pg_restore set it.")));
		PG_RETURN_NULL();
	}
	server_events_refuse(rows[0], rows[1], n);
}
