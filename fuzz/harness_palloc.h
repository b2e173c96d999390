/*-------------------------------------------------------------------------
 *
 * harness_palloc.h
 *		The arena of the standalone palloc used by the fuzz/ programs.
 *
 * harness_palloc.c implements palloc, palloc0, pstrdup, pfree, repalloc and
 * pg_snprintf on top of malloc, so that src/lsm_json.c links without a
 * PostgreSQL backend.  Every live allocation is kept in one list, which
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

#endif							/* HARNESS_PALLOC_H */
