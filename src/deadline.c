/*-------------------------------------------------------------------------
 *
 * deadline.c
 *		The statement's deadline, in one place (deadline.h): when it is,
 *		how long is left of it, and the error when it has passed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "deadline.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

/*
 * lsm_statement_deadline: when statement_timeout ends the current
 * statement, or 0 without a timeout.  Used to clamp every request and wait
 * even where PostgreSQL's own timer is not armed.
 */
TimestampTz
lsm_statement_deadline(void)
{
	if (StatementTimeout <= 0)
		return 0;
	return TimestampTzPlusMilliseconds(GetCurrentStatementStartTimestamp(),
									   StatementTimeout);
}

/*
 * lsm_statement_row_deadline: when a call of many tables stops waiting so
 * that it can still return a row for each: the statement's deadline less
 * a margin of LSM_ROW_MARGIN_MS or a tenth of statement_timeout,
 * whichever is shorter; 0 without a timeout.
 */
TimestampTz
lsm_statement_row_deadline(void)
{
	if (StatementTimeout <= 0)
		return 0;
	return TimestampTzPlusMilliseconds(GetCurrentStatementStartTimestamp(),
									   StatementTimeout -
									   Min(LSM_ROW_MARGIN_MS,
										   StatementTimeout / 10));
}

/*
 * lsm_deadline_remaining_ms: milliseconds left until deadline (0: no
 * deadline), at least 1 while there is a deadline.  Raises nothing.
 */
long
lsm_deadline_remaining_ms(TimestampTz deadline)
{
	long		ms;

	if (deadline == 0)
		return 0;
	/* round up: curl must not give up before the deadline itself */
	ms = (long) ((deadline - GetCurrentTimestamp() + 999) / 1000);
	return Max(ms, 1);
}

/*
 * lsm_deadline_passed: the statement's deadline has passed.  Let
 * PostgreSQL raise its own timeout error if its timer fired; where no timer
 * is armed (a background worker), raise the same error ourselves.  Never
 * returns.  Errors: 57014.
 */
void
lsm_deadline_passed(void)
{
	CHECK_FOR_INTERRUPTS();
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("canceling statement due to statement timeout")));
}
