/*-------------------------------------------------------------------------
 *
 * token.h
 *		The bearer token of a bearer_token_file, re-read when the file
 *		changes (src/net/token.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_TOKEN_H
#define LANCELSM_TOKEN_H

extern const char *lsm_bearer_token(const char *path);
extern const char *lsm_bearer_token_try(const char *path, char **problem);
extern const char *lsm_bearer_token_peek(const char *path);

#endif							/* LANCELSM_TOKEN_H */
