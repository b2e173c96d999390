/*-------------------------------------------------------------------------
 *
 * lsm_json.h
 *		Strict decoding of get_lsm_stats and get_lsm_write_spec answers and
 *		of error bodies; the request bodies.
 *
 * lsm_json_decode_stats streams through PostgreSQL's JSON parser
 * (src/protocol/lsm_stats_json.c); lsm_json_decode_error, the write spec answer and
 * the request bodies use jansson (src/protocol/lsm_json.c).  The functions allocate their
 * results with palloc in CurrentMemoryContext and never raise an error for
 * bad input: they return false and write a one-line description naming the
 * offending field into errbuf.  That keeps them usable from a standalone
 * harness (fuzz/, valgrind) that provides palloc itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LSM_JSON_H
#define LSM_JSON_H

#include "protocol/lsm_types.h"

#define LSM_JSON_ERRBUF_SIZE 256

extern bool lsm_json_decode_stats(const char *body, size_t len,
								  bool with_rows, LsmStats *out,
								  char *errbuf, size_t errlen);
extern bool lsm_json_decode_error(const char *body, size_t len,
								  LsmErrorBody *out);
extern char *lsm_json_stats_request_body(bool include_generation_rows,
										 LsmKeySpelling keys);
extern char *lsm_json_write_spec_body(const LsmWriteSpec *spec);
extern bool lsm_json_decode_headers(const char *text, int *n, char ***names,
									char ***values, char *errbuf,
									size_t errlen);
extern bool lsm_json_decode_write_spec(const char *body, size_t len,
									   LsmWriteSpec *out, char *errbuf,
									   size_t errlen);

#endif							/* LSM_JSON_H */
