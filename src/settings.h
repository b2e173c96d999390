/*-------------------------------------------------------------------------
 *
 * settings.h
 *		Settings (GUCs) shared by the lancelsm source files, at every layer.
 *
 * The variables live in src/settings.c and are registered in src/lancelsm.c
 * (_PG_init); their meaning, units and defaults are documented there and
 * in docs/configuration.md.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_SETTINGS_H
#define LANCELSM_SETTINGS_H

/*
 * LANCELSM_VERSION is the SQL version X.Y (lancelsm.control's
 * default_version), which the library compares with the extension's
 * catalog; LANCELSM_RELEASE is the release X.Y.Z (META.json), which the
 * library reports (lancelsm_info, the User-Agent, the module magic).
 */
#ifndef LANCELSM_VERSION
#error "LANCELSM_VERSION must come from the Makefile (lancelsm.control)"
#endif
#ifndef LANCELSM_RELEASE
#error "LANCELSM_RELEASE must come from the Makefile (META.json)"
#endif

extern int	lsm_retry_budget;		/* retries per request (429, 503) */
extern int	lsm_reissue_budget;		/* checkpoint re-issues after 421 */
extern int	lsm_backoff_base_ms;	/* first backoff */
extern int	lsm_backoff_max_ms;		/* backoff cap */
extern int	lsm_poll_interval_min_ms;	/* shortest checkpoint poll interval */
extern int	lsm_poll_interval_max_ms;	/* longest checkpoint poll interval */
extern int	lsm_max_idle_polls;		/* 0: no progress bound */
extern int	lsm_max_response_size_kb;	/* response body cap */
extern bool lsm_share_checkpoints;	/* join or skip running checkpoints */
extern char *lsm_allowed_endpoints; /* "": any endpoint */
extern int	lsm_log_min_duration_ms;	/* -1: actions not logged */
extern int	lsm_max_name_lookups;	/* name lookups pending per backend */
extern int	lsm_max_cluster_name_lookups;	/* ... in the cluster */
extern bool lsm_due_plan;			/* due runs read only planned tables */
extern int	lsm_max_read_interval_s;	/* longest time between reads */

#endif							/* LANCELSM_SETTINGS_H */
