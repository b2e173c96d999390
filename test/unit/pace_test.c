/*-------------------------------------------------------------------------
 *
 * pace_test.c
 *		Unit tests of src/task/pace.c, the pass-end predictor: exact poll
 *		schedules for scripted pass durations, no clock, no server.
 *
 * Built and run by test/unit/Makefile against the PostgreSQL server headers
 * (pace.c calls nothing of PostgreSQL's).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdio.h>
#include <string.h>

/* the port library is not linked: plain printf */
#undef printf

#include "task/pace.h"

static int	failures = 0;

/* what the passes run since the last check_start say of its bracket */
static LsmPaceCheck check;

/*
 * check_start: a checkpoint recalls pace (as the next pass's recalled).
 */
static void
check_start(const LsmPace *pace)
{
	memset(&check, 0, sizeof(check));
	check.recalled = *pace;
}

/*
 * run_pass: poll one pass of duration_ms under pace, as a checkpoint does
 * (polls at the predicted times, a pass is over at a poll at or after its
 * duration); check it and learn; write the poll times into polls (at most
 * max_polls) and return how many there were.
 */
static int
run_pass(LsmPace *pace, bool recalled, int32 duration_ms, int32 *polls,
		 int max_polls)
{
	LsmPacePass pass;
	int			n = 0;
	int32		at;

	lsm_pace_pass_start(&pass, pace, recalled);
	at = lsm_pace_first_poll_ms(&pass, 50);
	while (n < max_polls)
	{
		polls[n++] = at;
		if (at >= duration_ms)
			break;
		at = lsm_pace_next_poll_ms(&pass, at, 50, 5000);
	}
	lsm_pace_check_pass(&check, &pass, at);
	lsm_pace_learn(pace, &pass, at);
	return n;
}

/*
 * expect_pass: run one pass and compare its poll times with want[] (a
 * list ending with -1).
 */
static void
expect_pass(const char *what, LsmPace *pace, bool recalled, int32 duration_ms,
			const int32 *want)
{
	int32		got[64];
	int			n = run_pass(pace, recalled, duration_ms, got, 64);
	int			nwant = 0;
	bool		same;

	while (want[nwant] >= 0)
		nwant++;
	same = (n == nwant);
	for (int i = 0; same && i < n; i++)
		same = (got[i] == want[i]);
	printf("%s %s: polls", same ? "ok  " : "FAIL", what);
	for (int i = 0; i < n; i++)
		printf(" %d", got[i]);
	printf(" -> bracket (%d, %d]\n", pace->lo_ms, pace->hi_ms);
	if (!same)
		failures++;
}

/*
 * expect_eq: one integer result.
 */
static void
expect_eq(const char *what, int64 got, int64 want)
{
	printf("%s %s: %lld (want %lld)\n", got == want ? "ok  " : "FAIL", what,
		   (long long) got, (long long) want);
	if (got != want)
		failures++;
}

int
main(void)
{
	LsmPace		pace = {0};

	/*
	 * 303 ms passes, nothing known: the doubling, then the bracket halves;
	 * a pass still running at its first poll inside is polled at the end
	 * once what is left is within 4 tolerances (4th, 5th: not at 302, then
	 * 312, as when every poll halved down to 2 tolerances)
	 */
	expect_pass("cold 303", &pace, false, 303, (const int32[]) {50, 150, 350, -1});
	expect_pass("2nd 303", &pace, false, 303, (const int32[]) {250, 300, 325, -1});
	expect_pass("3rd 303", &pace, false, 303, (const int32[]) {312, -1});
	expect_pass("4th 303", &pace, false, 303, (const int32[]) {293, 312, -1});
	expect_pass("5th 303", &pace, false, 303, (const int32[]) {302, 312, -1});
	expect_pass("6th 303", &pace, false, 303, (const int32[]) {312, -1});
	expect_eq("6th 303: bracket widened down", pace.lo_ms, 292);

	/* a bracket learnt with a poll just before the end: 2 polls, not 3 */
	pace.lo_ms = 257;
	pace.hi_ms = 312;
	expect_pass("305 in (257, 312]", &pace, false, 305, (const int32[]) {284, 312, -1});
	/* what is left wider than 4 tolerances: halved again */
	pace.lo_ms = 150;
	pace.hi_ms = 350;
	expect_pass("310 in (150, 350]", &pace, false, 310, (const int32[]) {250, 300, 325, -1});

	/* passes get shorter: the bracket widens by its width until it holds */
	{
		int32		polls[64];
		int			passes = 0;

		do
			run_pass(&pace, false, 200, polls, 64);
		while (++passes < 20 && polls[0] > 200 + lsm_pace_tolerance_ms(200));
		expect_eq("passes until 300 ms -> 200 ms is polled in time", passes, 5);
	}
	/* passes get longer: past hi, steps from the tolerance, doubling */
	pace.lo_ms = 290;
	pace.hi_ms = 300;
	expect_pass("longer 400", &pace, false, 400, (const int32[]) {300, 309, 327, 363, 435, -1});

	/* a prediction from an earlier call is checked at half its lower bound */
	pace.lo_ms = 1000;
	pace.hi_ms = 1030;
	expect_pass("hedge, now 100", &pace, true, 100, (const int32[]) {500, -1});
	pace.lo_ms = 1000;
	pace.hi_ms = 1030;
	expect_pass("hedge, still 1010", &pace, true, 1010, (const int32[]) {500, 1030, -1});
	/* a hedge's early poll is not inside: the first poll inside halves */
	pace.lo_ms = 600;
	pace.hi_ms = 1000;
	expect_pass("hedge, wide, now 950", &pace, true, 950,
				(const int32[]) {300, 800, 900, 1000, -1});
	/* past a hedge: steps of a quarter of the time elapsed */
	pace.lo_ms = 1000;
	pace.hi_ms = 1030;
	expect_pass("hedge, now 3000", &pace, true, 3000,
				(const int32[]) {500, 1030, 1287, 1608, 2010, 2512, 3140, -1});

	/*
	 * A checkpoint's passes against the bracket it recalled: a hedge's
	 * early poll and one at the end pin nothing; a poll seen running
	 * within 3 tolerances of its end does (agreed once more); a pass seen
	 * over before it, or running past it, contradicts it (agreed 0)
	 */
	pace = (LsmPace) {1000, 1030};
	check_start(&pace);
	expect_pass("check: hedge, 1010", &pace, true, 1010, (const int32[]) {500, 1030, -1});
	expect_eq("check: hedge, 1010: agreed", lsm_pace_check_agreed(&check), 0);
	pace = (LsmPace) {950, 1030};
	check_start(&pace);
	expect_pass("check: hedge, wide, 1010", &pace, true, 1010,
				(const int32[]) {475, 990, 1030, -1});
	expect_eq("check: seen running at 990: agreed", lsm_pace_check_agreed(&check), 1);
	pace = (LsmPace) {1000, 1030};
	check_start(&pace);
	expect_pass("check: hedge, 300", &pace, true, 300, (const int32[]) {500, -1});
	expect_eq("check: over before it: agreed", lsm_pace_check_agreed(&check), 0);
	pace = (LsmPace) {.lo_ms = 1000, .hi_ms = 1030, .agreed = 2};
	check_start(&pace);
	expect_pass("check: steady, 1100", &pace, true, 1100, (const int32[]) {1030, 1062, 1126, -1});
	expect_eq("check: steady, running past it: agreed", lsm_pace_check_agreed(&check), 0);

	/*
	 * Agreed once is not steady: the next checkpoint still checks early;
	 * its passes ending inside unseen keep the count, one seen to makes
	 * it steady, and the next checkpoint has no early poll
	 */
	pace = (LsmPace) {.lo_ms = 990, .hi_ms = 1030, .agreed = 1};
	check_start(&pace);
	expect_pass("agreed once: a hedge", &pace, true, 1010, (const int32[]) {495, 1030, -1});
	pace.agreed = lsm_pace_check_agreed(&check);
	expect_eq("agreed once, inside unseen: agreed", pace.agreed, 1);
	pace = (LsmPace) {.lo_ms = 950, .hi_ms = 1030, .agreed = 1};
	check_start(&pace);
	expect_pass("agreed once, 1010", &pace, true, 1010, (const int32[]) {475, 990, 1030, -1});
	pace.agreed = lsm_pace_check_agreed(&check);
	expect_eq("agreed twice: agreed", pace.agreed, 2);
	check_start(&pace);
	expect_pass("agreed twice: steady", &pace, true, 1010, (const int32[]) {1030, -1});
	expect_eq("steady, inside unseen: agreed", lsm_pace_check_agreed(&check), 2);
	pace = (LsmPace) {.lo_ms = 1000, .hi_ms = 1030, .agreed = 1};
	check_start(&pace);
	expect_pass("agreed once, 300", &pace, true, 300, (const int32[]) {500, -1});
	expect_eq("agreed once, over before it: agreed", lsm_pace_check_agreed(&check), 0);

	/*
	 * A steady bracket: no early poll, and widened downwards only after
	 * two passes in a row seen over at their first poll
	 */
	pace = (LsmPace) {.lo_ms = 1000, .hi_ms = 1030, .agreed = 2};
	check_start(&pace);
	expect_pass("steady 1010", &pace, true, 1010, (const int32[]) {1030, -1});
	expect_eq("steady 1010: not widened", pace.lo_ms, 1000);
	expect_pass("steady 1010, 2nd", &pace, false, 1010, (const int32[]) {1030, -1});
	expect_eq("steady 1010, 2nd: widened", pace.lo_ms, 968);
	expect_pass("steady 1010, 3rd", &pace, false, 1010, (const int32[]) {1030, -1});
	expect_pass("steady 1010, 4th", &pace, false, 1010, (const int32[]) {1030, -1});
	expect_pass("steady 1010, 5th", &pace, false, 1010, (const int32[]) {968, 1030, -1});
	expect_eq("steady 1010: agreed", lsm_pace_check_agreed(&check), 2);
	/* a hedge is not steady: widened after each */
	pace = (LsmPace) {1000, 1030};
	expect_pass("in-call 1010", &pace, false, 1010, (const int32[]) {1030, -1});
	expect_eq("in-call 1010: widened", pace.lo_ms, 968);
	/* agreed once is not steady either */
	pace = (LsmPace) {.lo_ms = 1000, .hi_ms = 1030, .agreed = 1};
	expect_pass("agreed once, in-call 1010", &pace, false, 1010, (const int32[]) {1030, -1});
	expect_eq("agreed once, in-call 1010: widened", pace.lo_ms, 968);
	/* nothing recalled: never agreed */
	memset(&check, 0, sizeof(check));
	expect_eq("nothing recalled: agreed", lsm_pace_check_agreed(&check), 0);

	/* 10 s passes: the doubling bounded by poll_interval_max */
	pace = (LsmPace) {0};
	expect_pass("cold 10 s", &pace, false, 10005,
				(const int32[]) {50, 150, 350, 750, 1550, 3150, 6350, 11350, -1});
	expect_pass("2nd 10 s", &pace, false, 10005, (const int32[]) {8850, 10100, -1});

	/* a call's passes on one server, queued for permits in rank order */
	{
		LsmPaceDrain drain = {0};
		int64		end_ms = -1;

		for (int r = 1; r <= 40; r++)
			expect_eq("rank in trigger order", lsm_pace_drain_rank(&drain, 1000 + r), r);
		expect_eq("outstanding after 40 triggers", drain.outstanding, 40);
		lsm_pace_drain_seen(&drain, 1, 1300, false);
		lsm_pace_drain_seen(&drain, 5, 1310, false);
		expect_eq("4 ranks seen: no prediction",
				  lsm_pace_drain_predict(&drain, 30, &end_ms), false);
		lsm_pace_drain_seen(&drain, 9, 1320, false);
		expect_eq("8 ranks in 20 ms, shorter than the first pass: none",
				  lsm_pace_drain_predict(&drain, 30, &end_ms), false);
		lsm_pace_drain_seen(&drain, 3, 1350, false);
		expect_eq("a lower rank moves nothing", drain.last_ms, 1320);
		lsm_pace_drain_seen(&drain, 20, 1700, false);
		expect_eq("outstanding after 5 seen", drain.outstanding, 35);
		expect_eq("19 ranks in 400 ms: predicts",
				  lsm_pace_drain_predict(&drain, 30, &end_ms), true);
		/* 1700 + 3/4 of 10 ranks x 400 ms / 19 ranks */
		expect_eq("rank 30 ends at", end_ms, 1857);
		/* eight passes in a row seen over at once: aim half as far */
		for (int r = 21; r <= 28; r++)
			lsm_pace_drain_seen(&drain, r, 1700 + (r - 20) * 21, true);
		lsm_pace_drain_predict(&drain, 38, &end_ms);
		expect_eq("after 8 at once, rank 38 ends at", end_ms,
				  1868 + ((10 * 568 * 3 / (27 * 4)) >> 1));
		lsm_pace_drain_running(&drain);
		lsm_pace_drain_predict(&drain, 38, &end_ms);
		expect_eq("one seen running: three quarters again", end_ms,
				  1868 + 10 * 568 * 3 / (27 * 4));
		lsm_pace_drain_seen(&drain, 100, 2600, false);
		lsm_pace_drain_predict(&drain, 15, &end_ms);
		expect_eq("rank 15, below one seen over, is due", end_ms, 2600);
		lsm_pace_drain_predict(&drain, 100, &end_ms);
		expect_eq("rank 100, the one seen over", end_ms, 2600);
		for (int i = 0; i < 40; i++)
			lsm_pace_drain_drop(&drain);
		expect_eq("outstanding never below 0", drain.outstanding, 0);
	}

	expect_eq("tolerance of 100 ms", lsm_pace_tolerance_ms(100), 5);
	expect_eq("tolerance of 10 s", lsm_pace_tolerance_ms(10000), 312);
	expect_eq("jitter never earlier", lsm_pace_jitter_ms(300, 4, 0.0), 300);
	expect_eq("jitter at most spread", lsm_pace_jitter_ms(300, 4, 0.99), 303);
	printf("%s\n", failures ? "pace: FAILED" : "pace: all passed");
	return failures ? 1 : 0;
}
