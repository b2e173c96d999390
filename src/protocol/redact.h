/*-------------------------------------------------------------------------
 *
 * redact.h
 *		The matcher that masks every piece of a set of secrets in a text:
 *		each 4-byte window of a secret wherever it appears, and short
 *		secrets where they appear whole, less what an exempt text (the
 *		caller's own) holds.  Plain C types only; private to
 *		src/protocol/ (fault.c) and linked alone by test/unit/redact_test.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_REDACT_H
#define LANCELSM_REDACT_H

#include <stddef.h>

/*
 * The length of the windows of a secret that are masked wherever they
 * appear; a secret shorter than this is masked only where it appears
 * whole.
 */
#define LSM_REDACT_WINDOW 4

/* What every run of masked bytes becomes. */
#define LSM_REDACT_MASK "***"

/* The prepared secrets of lsm_redact; private to redact.c. */
typedef struct LsmRedactor LsmRedactor;

extern LsmRedactor *lsm_redactor_new(const char *const *secrets,
									 int nsecrets,
									 const char *const *exempt,
									 int nexempt);
extern char *lsm_redact(const LsmRedactor *redactor, const char *text,
						size_t len, size_t *out_len);
extern void lsm_redactor_free(LsmRedactor *redactor);

#endif							/* LANCELSM_REDACT_H */
