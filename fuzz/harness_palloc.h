/*-------------------------------------------------------------------------
 *
 * harness_palloc.h
 *		The arena of the standalone palloc used by the fuzz/ programs.
 *
 * harness_palloc.c implements palloc, palloc0, pstrdup, pfree and repalloc
 * on top of malloc, so that the decoders of src/ link without a PostgreSQL
 * backend.  Every live allocation is kept in one list, which
 * harness_free_all releases in one go (the equivalent of resetting the
 * caller's memory context), so valgrind and LeakSanitizer see no leaks.
 *
 *-------------------------------------------------------------------------
 */
#ifndef HARNESS_PALLOC_H
#define HARNESS_PALLOC_H

#include <stddef.h>

/* Release every block still allocated by palloc and friends. */
extern void harness_free_all(void);

/* Number of blocks currently allocated (for leak assertions). */
extern size_t harness_live_blocks(void);

/* Bytes requested by live blocks; their high-water mark; restart it. */
extern size_t harness_live_bytes(void);
extern size_t harness_peak_bytes(void);
extern void harness_reset_peak(void);

/*
 * Make the n-th allocation from now (n >= 1) call fail instead of
 * allocating, as palloc raises out of memory; fail must not return (it
 * raises, with harness_elog.c).  n = 0 turns it off.
 */
extern void harness_fail_allocation(size_t n, void (*fail) (size_t size));

#endif							/* HARNESS_PALLOC_H */
