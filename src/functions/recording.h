/*-------------------------------------------------------------------------
 *
 * recording.h
 *		Who may record the outcomes of declared tables, and their writes
 *		as the owner of lancelsm_table (src/functions/recording.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_RECORDING_H
#define LANCELSM_RECORDING_H

#include "fmgr.h"

/* The user and security context a write as the owner replaced. */
typedef struct LsmRecordUser
{
	Oid			userid;
	int			sec_context;
} LsmRecordUser;

extern bool lsm_role_records(FunctionCallInfo fcinfo);
extern void lsm_role_require_record(FunctionCallInfo fcinfo);
extern void lsm_record_as_owner(FunctionCallInfo fcinfo,
								LsmRecordUser *save);
extern void lsm_record_as_caller(const LsmRecordUser *save);
extern void lsm_record_forget_removed(const char *server,
									  const char *table_name);
extern void lsm_record_forget_removed_oid(Oid serverid,
										  const char *table_name);

#endif							/* LANCELSM_RECORDING_H */
