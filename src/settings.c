/*-------------------------------------------------------------------------
 *
 * settings.c
 *		The storage of lancelsm's settings (GUC variables) and their boot
 *		values.
 *
 * _PG_init (src/lancelsm.c) registers every setting with PostgreSQL; the
 * variables live here, below every layer, so that the transport, protocol
 * and task code read them without depending on the SQL entry points.
 * Their meaning, units and ranges are documented at their registration
 * and in docs/configuration.md, "Settings".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "settings.h"

int			lsm_retry_budget = 8;
int			lsm_reissue_budget = 3;
int			lsm_backoff_base_ms = 100;
int			lsm_backoff_max_ms = 5000;
int			lsm_poll_interval_min_ms = 50;
int			lsm_poll_interval_max_ms = 5000;
int			lsm_max_idle_polls = 0;
int			lsm_max_response_size_kb = 64 * 1024;
bool		lsm_share_checkpoints = true;
char	   *lsm_allowed_endpoints = NULL;
int			lsm_log_min_duration_ms = -1;
int			lsm_max_name_lookups = 16;
int			lsm_max_cluster_name_lookups = 256;
bool		lsm_due_plan = true;
int			lsm_max_read_interval_s = 900;
