/*-------------------------------------------------------------------------
 *
 * mapping.c
 *		The check of a lancelsm user mapping as it is written: its
 *		extra_headers may not replace a header of a server that
 *		authenticates with server-level credentials (bearer_token_file or
 *		a client certificate).
 *
 * The validator cannot do it: PostgreSQL hands it the mapping's options
 * but not its server's.  An object access hook, installed by _PG_init,
 * runs after each user mapping is created or altered; the validator of
 * any lancelsm server's mapping has loaded this library by then.  A
 * mapping written before its server gained the credentials (or before
 * the library was loaded) is caught at use instead (src/functions/option.c,
 * lsm_config_try_resolve).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/reloptions.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_user_mapping.h"
#include "foreign/foreign.h"
#include "functions/functions.h"
#include "functions/option.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

static object_access_hook_type mapping_prev_access_hook = NULL;

/*
 * mapping_check
 *		Refuse, with 42501 naming the header, the user mapping umid of a
 *		lancelsm server when its extra_headers replace a header of a
 *		server with server-level credentials (lsm_header_override).  Reads
 *		the mapping with SnapshotSelf: it runs in the command that wrote
 *		it.
 */
static void
mapping_check(Oid umid)
{
	Relation	rel = table_open(UserMappingRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *header = NULL;
	ForeignServer *server = NULL;

	ScanKeyInit(&key, Anum_pg_user_mapping_oid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(umid));
	scan = systable_beginscan(rel, UserMappingOidIndexId, true, SnapshotSelf,
							  1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_user_mapping form = (Form_pg_user_mapping) GETSTRUCT(tuple);
		bool		isnull;
		Datum		datum = heap_getattr(tuple, Anum_pg_user_mapping_umoptions,
										 RelationGetDescr(rel), &isnull);
		List	   *options = isnull ? NIL : untransformRelOptions(datum);

		server = GetForeignServer(form->umserver);
		if (strcmp(GetForeignDataWrapper(server->fdwid)->fdwname,
				   LSM_FDW_NAME) == 0)
			header = lsm_header_override(server->options, options);
		lsm_option_wipe_secrets(options);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (header != NULL)
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("user mapping for server \"%s\" cannot replace the server's header \"%s\"",
					   server->servername, header),
				errdetail(LSM_OVERRIDE_DETAIL),
				errhint(LSM_OVERRIDE_HINT));
}

/*
 * mapping_object_access
 *		The object access hook: after a user mapping is created or
 *		altered, mapping_check; every event goes to the previous hook
 *		first.
 */
static void
mapping_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					  int subId, void *arg)
{
	if (mapping_prev_access_hook)
		mapping_prev_access_hook(access, classId, objectId, subId, arg);
	if ((access == OAT_POST_CREATE || access == OAT_POST_ALTER) &&
		classId == UserMappingRelationId)
		mapping_check(objectId);
}

/*
 * lsm_mapping_init
 *		Install the object access hook that checks user mappings as they
 *		are written.  Called once per process, by _PG_init.
 */
void
lsm_mapping_init(void)
{
	mapping_prev_access_hook = object_access_hook;
	object_access_hook = mapping_object_access;
}
