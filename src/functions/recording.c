/*-------------------------------------------------------------------------
 *
 * recording.c
 *		Who may record, and the record of declared tables written as its
 *		owner.
 *
 * The record of the declared tables is the DBA's job's: the last_* columns
 * and last_checkpoint_at of lancelsm_table, the server's messages in
 * lancelsm_table_message (1.5), and what lancelsm_last_stats and
 * lancelsm_table_counters show of a declared table (shared memory).  A
 * role may record when it may UPDATE the column last_checkpoint_at of
 * lancelsm_table, the one grant the 1.3 docs gave a job role (a grant on
 * the whole table, the table's owner and superusers may too).  What such
 * a role records is written as the owner of lancelsm_table (the role that
 * created the extension), so that recording keeps working with that one
 * grant whatever columns and relations a later version adds to the
 * record, as a 1.3 job role's did not after ALTER EXTENSION UPDATE to
 * 1.4.  The writes run with search_path pinned by their caller
 * (src/functions/declared.c) and under SECURITY_RESTRICTED_OPERATION, as
 * PostgreSQL runs maintenance commands as a table's owner.
 *
 * The record in shared memory outlives the catalog rows it is about: a
 * table removed by lancelsm_remove_table or with its server by DROP
 * SERVER ... CASCADE (src/functions/server_events.c), and every table of
 * a database whose lancelsm extension is dropped, are forgotten when the
 * transaction commits (src/record/forget.c); the extension's drop is seen
 * by an object access hook.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "foreign/foreign.h"
#include "functions/functions.h"
#include "functions/recording.h"
#include "miscadmin.h"
#include "record/record.h"
#include "wire_text.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/*
 * recording_relid: lancelsm_table in the schema of the calling function
 * (the extension's), and its column last_checkpoint_at into *attnum
 * (InvalidAttrNumber before ALTER EXTENSION UPDATE to 1.2); InvalidOid
 * when there is no such table.
 */
static Oid
recording_relid(FunctionCallInfo fcinfo, AttrNumber *attnum)
{
	Oid			nspid = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			relid = get_relname_relid("lancelsm_table", nspid);

	*attnum = OidIsValid(relid) ?
		get_attnum(relid, "last_checkpoint_at") : InvalidAttrNumber;
	return relid;
}

/*
 * recording_allowed: whether the current role may UPDATE the column
 * attnum of relid, or the whole table when attnum is invalid.
 */
static bool
recording_allowed(Oid relid, AttrNumber attnum)
{
	Oid			role = GetUserId();

	if (pg_class_aclcheck(relid, role, ACL_UPDATE) == ACLCHECK_OK)
		return true;
	return attnum != InvalidAttrNumber &&
		pg_attribute_aclcheck(relid, attnum, role, ACL_UPDATE) == ACLCHECK_OK;
}

/*
 * lsm_role_records: whether the current role may record (see the head of
 * this file), for the calling SQL function fcinfo: false when the
 * extension has no lancelsm_table.  Raises nothing.
 */
bool
lsm_role_records(FunctionCallInfo fcinfo)
{
	AttrNumber	attnum;
	Oid			relid = recording_relid(fcinfo, &attnum);

	return OidIsValid(relid) && recording_allowed(relid, attnum);
}

/*
 * lsm_role_require_record: raise unless the current role may record, for
 * the calls whose work is the record (lancelsm_checkpoint_due(),
 * lancelsm_checkpoint_all()), before they contact any server.  Nothing is
 * required of a catalog before 1.2, which records nothing.  Errors: 42501
 * naming the role, with the grant that lets it record as hint.
 */
void
lsm_role_require_record(FunctionCallInfo fcinfo)
{
	AttrNumber	attnum;
	Oid			relid = recording_relid(fcinfo, &attnum);

	if (!OidIsValid(relid) || attnum == InvalidAttrNumber ||
		recording_allowed(relid, attnum))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to record the outcomes of declared tables"),
			 errdetail("Role \"%s\" may not update column last_checkpoint_at of lancelsm_table.",
					   GetUserNameFromId(GetUserId(), false)),
			 errhint("Run the call as the role that runs the due job, or grant UPDATE (last_checkpoint_at) ON lancelsm_table to this role.")));
}

/*
 * lsm_record_as_owner: make the owner of lancelsm_table (of the calling
 * function's schema) the current user, for a write of the record by a
 * role that may record, saving the current one into *save.  The caller
 * restores it with lsm_record_as_caller; an error's (sub)transaction
 * abort restores it too.  Errors: XX000 when lancelsm_table is missing
 * (the caller checked it is there).
 */
void
lsm_record_as_owner(FunctionCallInfo fcinfo, LsmRecordUser *save)
{
	AttrNumber	attnum;
	Oid			relid = recording_relid(fcinfo, &attnum);
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	GetUserIdAndSecContext(&save->userid, &save->sec_context);
	SetUserIdAndSecContext(owner, save->sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

/*
 * lsm_record_as_caller: restore the user saved by lsm_record_as_owner.
 */
void
lsm_record_as_caller(const LsmRecordUser *save)
{
	SetUserIdAndSecContext(save->userid, save->sec_context);
}

/*
 * lsm_record_forget_removed: the declared table table_name of the server
 * named server was removed in this transaction: have the record forget
 * it at commit (src/record/forget.c).  Nothing is kept of a table whose
 * server no longer exists (its entries name a server OID no call can
 * reach again), nor of a name UTF-8 cannot hold (no request was ever
 * sent for it).  Raises only out of memory.
 */
void
lsm_record_forget_removed(const char *server, const char *table_name)
{
	ForeignServer *fs = GetForeignServerByName(server, true);

	if (fs != NULL)
		lsm_record_forget_removed_oid(fs->serverid, table_name);
}

/*
 * lsm_record_forget_removed_oid: as lsm_record_forget_removed, for the
 * foreign server of OID serverid, which may have been dropped in this
 * transaction (DROP SERVER ... CASCADE: the name no longer finds it, but
 * the record keys its entries by the OID).  Raises only out of memory.
 */
void
lsm_record_forget_removed_oid(Oid serverid, const char *table_name)
{
	bool		lossless;
	char	   *wire = lsm_text_to_wire_quiet(table_name, &lossless);

	if (lossless)
		lsm_record_forget_table(serverid, wire);
}

static object_access_hook_type recording_prev_access_hook = NULL;

/*
 * recording_object_access: when this database's lancelsm extension is
 * dropped, have the record forget the database's entries at commit;
 * every event goes to the previous hook first.
 */
static void
recording_object_access(ObjectAccessType access, Oid classId, Oid objectId,
						int subId, void *arg)
{
	if (recording_prev_access_hook)
		recording_prev_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == ExtensionRelationId &&
		objectId == get_extension_oid("lancelsm", true))
		lsm_record_forget_database();
}

/*
 * lsm_recording_init
 *		Install the object access hook that sees the extension dropped.
 *		Called once per process, by _PG_init.
 */
void
lsm_recording_init(void)
{
	recording_prev_access_hook = object_access_hook;
	object_access_hook = recording_object_access;
}
