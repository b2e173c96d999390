/*-------------------------------------------------------------------------
 *
 * url.h
 *		The URL of an LSM route request and the percent-encoding of its
 *		table identifier.  Pure functions (palloc only), so that fuzz/ can
 *		test them without a backend; src/net/http.c is their caller.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_URL_H
#define LANCELSM_URL_H

extern char *lsm_url_encode_segment(const char *s);
extern char *lsm_url_build(const char *base_url, const char *id_delimiter,
						   const char *table, const char *route_path);

#endif							/* LANCELSM_URL_H */
