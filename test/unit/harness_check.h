/*-------------------------------------------------------------------------
 *
 * harness_check.h
 *		The checks of the unit tests in test/unit/ (decode_test.c, redact_test.c):
 *		each check counts as passed or failed, a failure prints its case
 *		and reason, and the summary line gives the exit status.
 *
 *-------------------------------------------------------------------------
 */
#ifndef HARNESS_CHECK_H
#define HARNESS_CHECK_H

/* Record one check; print the case name and the reason when it fails. */
extern void check(int ok, const char *name, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Print "N passed, M failed"; 0 when nothing failed, else 1. */
extern int	harness_check_summary(void);

#endif							/* HARNESS_CHECK_H */
