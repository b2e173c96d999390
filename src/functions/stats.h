/*-------------------------------------------------------------------------
 *
 * stats.h
 *		The row builder of src/functions/stats.c that the functions over all
 *		declared tables share (src/functions/declared.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_STATS_H
#define LANCELSM_STATS_H

#include "protocol/protocol.h"
#include "functions/functions.h"

/* The columns of one lancelsm_stats row. */
extern int	lsm_stats_bucket_values(const LsmBucket *b,
									const LsmBucketSummary *s,
									Datum *values, bool *nulls, int i);

#endif							/* LANCELSM_STATS_H */
