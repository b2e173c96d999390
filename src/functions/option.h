/*-------------------------------------------------------------------------
 *
 * option.h
 *		Server and user-mapping options of the lancelsm foreign-data wrapper,
 *		and their resolution into one connection configuration.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_OPTION_H
#define LANCELSM_OPTION_H

#include "postgres.h"

#include "net/net.h"

struct LsmFailure;

/* in option.c */
extern LsmConfig *lsm_config_resolve(const char *server_name);
extern LsmConfig *lsm_config_try_resolve(const char *server_name,
										 struct LsmFailure **failure);
extern struct LsmFailure *lsm_server_problem(const char *server_name);
extern void lsm_config_wipe(LsmConfig *config);

#endif							/* LANCELSM_OPTION_H */
