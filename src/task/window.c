/*-------------------------------------------------------------------------
 *
 * window.c
 *		The window of requests in flight of one call on one server and
 *		role (src/task/driver.c's gate): it follows the round trip and
 *		never floods the server.
 *
 * A call can only send about window / round trip requests a second, so at
 * a cloud's 50 ms a fixed small window bounds it, and a large one floods a
 * server that is already struggling.  As TCP's congestion window does
 * (RFC 5681), the window starts at LSM_WINDOW_START and grows by one for
 * each answer that came back fine (doubling every round trip) until the
 * first overload answer; from then on it grows by one per window's worth
 * of fine answers (one per round trip).  A 429 or 503 halves it, once per
 * window: the overload answers to requests sent before that cut do not cut
 * again, since they tell of the same load.  It stays between 1 and the
 * ceiling: the server's max_requests_in_flight, at most
 * LSM_MAX_REQUESTS_IN_FLIGHT.
 *
 * The retry policy is retry.c's and unchanged: a request answered 429 or
 * 503 is retried after its backoff; the window only decides how many of
 * the call's requests are out at once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "task/window.h"

/*
 * lsm_window_init: a window of a new call, never above ceiling (clamped to
 * 1 or more).
 */
void
lsm_window_init(LsmWindow *w, int ceiling)
{
	memset(w, 0, sizeof(*w));
	w->ceiling = Max(ceiling, 1);
	w->cap = Min(w->ceiling, LSM_WINDOW_START);
	w->slow_start = true;
}

/*
 * lsm_window_sent: a request goes out under window w; returns its number,
 * to be handed back with its answer (lsm_window_answered).
 */
uint64
lsm_window_sent(LsmWindow *w)
{
	return ++w->sent;
}

/*
 * lsm_window_answered: request number seq (lsm_window_sent) was answered
 * with signal; grow or cut the window.
 */
void
lsm_window_answered(LsmWindow *w, uint64 seq, LsmWindowSignal signal)
{
	if (signal == LSM_WINDOW_OVERLOADED)
	{
		if (seq <= w->recover)
			return;				/* sent before the last cut */
		w->cap = Max(w->cap / 2, 1);
		w->fine = 0;
		w->slow_start = false;
		w->recover = w->sent;
		return;
	}
	if (signal != LSM_WINDOW_FINE || w->cap >= w->ceiling)
		return;
	if (w->slow_start || ++w->fine >= w->cap)
	{
		w->cap++;
		w->fine = 0;
	}
}
