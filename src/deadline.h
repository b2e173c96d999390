/*-------------------------------------------------------------------------
 *
 * deadline.h
 *		The statement's deadline: when statement_timeout ends the current
 *		statement, the grace PostgreSQL's own timer gets, and the error
 *		raised when the deadline passes.
 *
 * Every wait of lancelsm (a request, the pool's wait, a herd's wait) is
 * clamped by this deadline, so that it holds even where PostgreSQL's timer
 * is not armed.  A root file: it includes nothing of src/'s folders, and
 * every folder may include it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_DEADLINE_H
#define LANCELSM_DEADLINE_H

#include "datatype/timestamp.h"

#include "pg_compat.h"

/* Our own deadline check waits this long for PostgreSQL's timer first. */
#define LSM_DEADLINE_GRACE_MS 10

/*
 * A call of many tables stops waiting this long, or a tenth of
 * statement_timeout when that is shorter, before the statement's deadline,
 * to return its rows (lsm_statement_row_deadline).
 */
#define LSM_ROW_MARGIN_MS 1000

extern TimestampTz lsm_statement_deadline(void);
extern TimestampTz lsm_statement_row_deadline(void);
extern long lsm_deadline_remaining_ms(TimestampTz deadline);
pg_noreturn extern void lsm_deadline_passed(void);

#endif							/* LANCELSM_DEADLINE_H */
