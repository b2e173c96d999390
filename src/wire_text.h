/*-------------------------------------------------------------------------
 *
 * wire_text.h
 *		Text between the database encoding and the UTF-8 that LanceDB
 *		speaks: names on their way out, server text on its way in.
 *
 * Below every layer (like settings.h): the SQL functions convert names
 * and shown values, src/protocol/fault.c the server's text in a detail,
 * src/record/ what it keeps in shared memory.  Plain C types only;
 * the implementation (src/wire_text.c) keeps its fmgr use to itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_WIRE_TEXT_H
#define LANCELSM_WIRE_TEXT_H

#include <stdbool.h>

extern char *lsm_text_to_wire(const char *s);
extern char *lsm_text_to_wire_quiet(const char *s, bool *lossless);
extern char *lsm_text_from_wire(const char *s, const char *column);
extern char *lsm_text_from_wire_quiet(const char *s, bool *lossless);

#endif							/* LANCELSM_WIRE_TEXT_H */
