/*-------------------------------------------------------------------------
 *
 * protocol.h
 *		The face of src/protocol/: what an answer means (the protocol's
 *		fault table and the errors lancelsm reports for it), the decoders
 *		and request bodies, and the protocol's types.  No libcurl, no fmgr.
 *
 * The decoders and the plain types are declared in protocol/lsm_json.h and
 * protocol/lsm_types.h, which this header includes: they must stay free of
 * PostgreSQL's fmgr headers, because src/protocol/lsm_json.c includes
 * jansson.h (whose json_object and json_typeof collide with
 * utils/fmgrprotos.h).  Outside src/protocol/ include this header only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_PROTOCOL_H
#define LANCELSM_PROTOCOL_H

#include "net/net.h"
#include "pg_compat.h"
#include "protocol/lsm_json.h"

/* in lsm_json.c and lsm_stats_json.c: see protocol/lsm_json.h */

/* in fault.c */
/* What the caller should do with a finished request. */
typedef enum LsmVerdict
{
	LSM_VERDICT_OK,				/* any 2xx */
	LSM_VERDICT_RETRY,			/* 429 or 503 (draining too) */
	LSM_VERDICT_REISSUE,		/* 421: the node lost its claim */
	LSM_VERDICT_RESEND,			/* refused before the server acted on it */
	LSM_VERDICT_FORGET_VERSION, /* 412 to a read that demanded a version */
	LSM_VERDICT_FAIL			/* anything else */
} LsmVerdict;

/*
 * What failed: each value fixes the errmsg of a failure to one
 * translatable format (fault.c, fault_messages), whose arguments are the
 * table's or the server's name.
 */
typedef enum LsmFaultMessage
{
	LSM_FAULT_FLUSH,			/* the table's name */
	LSM_FAULT_COMPACT,
	LSM_FAULT_READ_STATS,
	LSM_FAULT_CHECKPOINT,
	LSM_FAULT_SET_SPEC,
	LSM_FAULT_UNSET_SPEC,
	LSM_FAULT_GET_SPEC,
	LSM_FAULT_EMPTY_TABLE_NAME, /* no argument */
	LSM_FAULT_LONG_TABLE_NAME,
	LSM_FAULT_NO_SERVER,		/* the server's name */
	LSM_FAULT_OTHER_WRAPPER,
	LSM_FAULT_NO_USAGE,
	LSM_FAULT_NO_USER_MAPPING,	/* the role's name, the server's name */
	LSM_FAULT_HEADER_OVERRIDE	/* the server's name, the header's name */
} LsmFaultMessage;

/* Most arguments an errmsg format of LsmFaultMessage takes. */
#define LSM_FAULT_MAX_ARGS 2

/*
 * A failure, ready to be raised or reported as a row.  what and args are
 * the errmsg (args unused by its format are NULL); message is the same
 * errmsg as text, for result rows; detail the errdetail (server text,
 * HTTP status, request id); hint may be NULL.  All palloc'd; built by
 * lsm_fault_new only, copied by lsm_fault_copy only.
 */
typedef struct LsmFailure
{
	int			sqlerrcode;
	LsmFaultMessage what;
	char	   *args[LSM_FAULT_MAX_ARGS];
	char	   *message;
	char	   *detail;
	char	   *hint;
} LsmFailure;

extern LsmVerdict lsm_fault_verdict(const LsmOutcome *req);
extern void lsm_fault_redact_outcome(LsmFailure *failure,
									 const LsmOutcome *req);
extern LsmFailure *lsm_fault_from_request(const LsmOutcome *req,
										  LsmFaultMessage what,
										  const char *table_name,
										  int retries);
extern LsmFailure *lsm_fault_new(int sqlerrcode, char *detail, char *hint,
								 LsmFaultMessage what,...);
extern LsmFailure *lsm_fault_copy(const LsmFailure *failure);
pg_noreturn extern void lsm_fault_raise(const LsmFailure *failure);

/* in fresh.c: the versions kept for fresh reads */
extern void lsm_fresh_init(void);
extern uint64 lsm_fresh_kept(const LsmConfig *config, const char *table);
extern void lsm_fresh_observe(const LsmConfig *config, const char *table,
							  uint64 version);
extern void lsm_fresh_forget(const LsmConfig *config, const char *table);
extern TimestampTz lsm_fresh_min_timestamp(const LsmConfig *config);

#endif							/* LANCELSM_PROTOCOL_H */
