/*-------------------------------------------------------------------------
 *
 * harness_check.c
 *		The checks of the unit tests in test/unit/: counters of passed and failed
 *		checks (harness_check.h).
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>

#include "harness_check.h"

static int	npassed = 0;
static int	nfailed = 0;

/* Record one check; print the case name and the reason when it fails. */
void
check(int ok, const char *name, const char *fmt,...)
{
	va_list		args;

	if (ok)
	{
		npassed++;
		return;
	}
	nfailed++;
	printf("FAIL %s: ", name);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	printf("\n");
}

/* Print "N passed, M failed"; 0 when nothing failed, else 1. */
int
harness_check_summary(void)
{
	printf("%d passed, %d failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
