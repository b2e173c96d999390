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
#include "nodes/pg_list.h"

struct LsmFailure;

/* the name of the wrapper whose servers are lancelsm's */
#define LSM_FDW_NAME "lancelsm"

/* why a user mapping may not replace a server's header, and the fix */
#define LSM_OVERRIDE_DETAIL \
	gettext_noop("The server authenticates every role that has USAGE on it with its bearer_token_file or client certificate, so a user mapping may not replace its headers.")
#define LSM_OVERRIDE_HINT \
	gettext_noop("Remove the header from the user mapping's extra_headers, or from the server's.")

/* in option.c */
extern char *lsm_header_override(List *server_options,
								 List *mapping_options);
extern LsmConfig *lsm_config_resolve(const char *server_name);
extern LsmConfig *lsm_config_try_resolve(const char *server_name,
										 struct LsmFailure **failure);
extern struct LsmFailure *lsm_server_problem(const char *server_name);

extern void lsm_config_wipe(LsmConfig *config);

#endif							/* LANCELSM_OPTION_H */
