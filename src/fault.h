/*-------------------------------------------------------------------------
 *
 * fault.h
 *		What an answer means (the protocol's fault table) and the errors
 *		lancelsm reports for it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_FAULT_H
#define LANCELSM_FAULT_H

#include "http.h"
#include "pg_compat.h"

/* What the caller should do with a finished request. */
typedef enum LsmVerdict
{
	LSM_VERDICT_OK,				/* the expected success */
	LSM_VERDICT_RETRY,			/* 429, or 503 that is not draining */
	LSM_VERDICT_REISSUE,		/* 421: the node lost its claim */
	LSM_VERDICT_FAIL			/* anything else */
} LsmVerdict;

/*
 * A failure, ready to be raised or reported as a row.  message is the
 * errmsg, detail the errdetail (server text, HTTP status, request id),
 * hint may be NULL.  All palloc'd.
 */
typedef struct LsmFailure
{
	int			sqlerrcode;
	char	   *message;
	char	   *detail;
	char	   *hint;
} LsmFailure;

extern LsmVerdict lsm_fault_verdict(const LsmRequest *req);
extern void lsm_fault_redact(LsmFailure *failure, const char *secret);
extern void lsm_fault_redact_config(LsmFailure *failure,
									const LsmConfig *config);
extern LsmFailure *lsm_fault_from_request(const LsmRequest *req,
										  const char *action,
										  const char *table_name,
										  int retries);
extern LsmFailure *lsm_fault_new(int sqlerrcode, const char *action,
								 const char *table_name, char *detail,
								 char *hint);
pg_noreturn extern void lsm_fault_raise(const LsmFailure *failure);

#endif							/* LANCELSM_FAULT_H */
