/*-------------------------------------------------------------------------
 *
 * window.h
 *		How many requests one call keeps in flight on one server and role:
 *		a window that follows the round trip and backs off on overload
 *		(additive increase, multiplicative decrease).  window.c is pure,
 *		no I/O; window_kept.c keeps a statement's windows per server and
 *		role.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_CHECKPOINT_WINDOW_H
#define LANCELSM_CHECKPOINT_WINDOW_H

/*
 * The window of a call starts at this many requests in flight (or the
 * ceiling, when lower).
 */
#define LSM_WINDOW_START 8

/* What an answer says about the server's load */
typedef enum LsmWindowSignal
{
	LSM_WINDOW_FINE,			/* answered as expected (2xx) */
	LSM_WINDOW_OVERLOADED,		/* 429 or 503: the server asks for less */
	LSM_WINDOW_NEUTRAL			/* anything else: no change */
} LsmWindowSignal;

typedef struct LsmWindow
{
	int			ceiling;		/* never more in flight (1 or more) */
	int			cap;			/* the most in flight now, 1..ceiling */
	int			fine;			/* fine answers since cap last grew */
	bool		slow_start;		/* until the first cut: +1 per fine answer */
	uint64		sent;			/* requests sent, numbered from 1 */
	uint64		recover;		/* sent when cap was last cut: overload
								 * answers to requests up to it do not cut
								 * again */
} LsmWindow;

/* in window.c (pure) */
extern void lsm_window_init(LsmWindow *w, int ceiling);
extern uint64 lsm_window_sent(LsmWindow *w);
extern void lsm_window_answered(LsmWindow *w, uint64 seq,
								LsmWindowSignal signal);

/* in window_kept.c: the windows a statement reached, per server and role */
extern void lsm_window_recall(Oid serverid, Oid umid, int ceiling,
							  LsmWindow *w);
extern void lsm_window_keep(Oid serverid, Oid umid, const LsmWindow *w);

#endif							/* LANCELSM_CHECKPOINT_WINDOW_H */
