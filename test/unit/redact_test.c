/*-------------------------------------------------------------------------
 *
 * redact_test.c
 *		Standalone unit tests of src/protocol/redact.c, the matcher that
 *		masks every piece of a set of secrets in a text (no PostgreSQL
 *		backend).
 *
 * Exact outputs for windows of a secret at the start, in the middle and
 * at the end of a text, a masked echo ("sk_l...Q7vZ"), overlapping and
 * adjacent secrets, a 3-byte secret, empty secrets and texts, NUL bytes
 * and a secret holding the mask's byte; exempt texts (what the caller
 * passed): their windows and the short secrets they hold are not masked,
 * and an echo of a name built from the key's known prefix and a right or
 * a wrong next byte reads the same but for the name; then random texts
 * and exempt texts over a small alphabet against a naive reference (every
 * window of every secret compared at every position, skipped when it
 * occurs in an exempt text); then the time to scan a 64 kB body with
 * an API key, header values and a 16 kB bearer token, printed, not
 * asserted.  After every case the palloc arena must be empty once the
 * redactor and the outputs are freed.
 *
 * Prints "N passed, M failed" and exits non-zero when a check fails.
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness_check.h"
#include "harness_palloc.h"
#include "protocol/redact.h"

/*
 * Free the redactor and check that only the output (when there is one)
 * is left; then free everything.
 */
static void
end_case(const char *name, LsmRedactor *r, const char *out)
{
	lsm_redactor_free(r);
	check(harness_live_blocks() == (out != NULL ? 1 : 0), name,
		  "%zu blocks left", harness_live_blocks());
	harness_free_all();
}

/*
 * Mask text (len bytes) with secrets less what the exempt texts hold
 * (both NULL-terminated lists) and check the output: expected NULL means
 * nothing masked.
 */
static void
expect_n(const char *name, const char *const *secrets,
		 const char *const *exempt, const char *text, size_t len,
		 const char *expected, size_t expected_len)
{
	int			n = 0;
	int			nexempt = 0;
	LsmRedactor *r;
	char	   *out;
	size_t		out_len = 12345;

	while (secrets[n] != NULL)
		n++;
	while (exempt[nexempt] != NULL)
		nexempt++;
	r = lsm_redactor_new(secrets, n, exempt, nexempt);
	out = lsm_redact(r, text, len, &out_len);
	if (expected == NULL)
		check(out == NULL, name, "masked to \"%s\", expected nothing masked",
			  out ? out : "");
	else
		check(out != NULL && out_len == expected_len &&
			  memcmp(out, expected, expected_len) == 0 &&
			  out[out_len] == '\0', name,
			  "\"%s\" (%zu bytes), expected \"%s\"", out ? out : "(NULL)",
			  out ? out_len : 0, expected);
	end_case(name, r, out);
}

static void
expect(const char *name, const char *const *secrets, const char *text,
	   const char *expected)
{
	expect_n(name, secrets, (const char *[]) {NULL}, text, strlen(text),
			 expected, expected ? strlen(expected) : 0);
}

#define KEY "sk_live_4f9a2c7e1b8d3f6aQ7vZ"

/* expect, less what the exempt texts (NULL-terminated) hold. */
static void
expect_exempt(const char *name, const char *const *secrets,
			  const char *const *exempt, const char *text,
			  const char *expected)
{
	expect_n(name, secrets, exempt, text, strlen(text), expected,
			 expected ? strlen(expected) : 0);
}

/*
 * The caller's own text: windows of the key that occur in a table name
 * the caller passed are not masked where a server echoes them; the key's
 * other windows still are.  A name of the key's known prefix and a right
 * next byte ("sk_li") or a wrong one ("sk_lX") comes back as itself both
 * times: the echo tells nothing of the key.
 */
static void
test_exempt(void)
{
	const char *key[] = {KEY, NULL};
	const char *right[] = {"sk_li", NULL};
	const char *wrong[] = {"sk_lX", NULL};
	const char *shorts[] = {"k9z", NULL};
	const char *none[] = {NULL};
	const char *nulls[] = {NULL, "", "sk_li"};

	expect_exempt("echo of a name with the right next byte", key, right,
				  "Table 'sk_li' not found", NULL);
	expect_exempt("echo of a name with a wrong next byte", key, wrong,
				  "Table 'sk_lX' not found", NULL);
	/* without the exemption the two differ: that is the oracle */
	expect("no exemption: right next byte", key, "Table 'sk_li' not found",
		   "Table '***' not found");
	expect("no exemption: wrong next byte", key, "Table 'sk_lX' not found",
		   "Table '***X' not found");
	/*
	 * a gateway that echoes the key itself: the run of the key's windows
	 * holds windows the name lacks, so it is masked whole, whatever the
	 * name (windows exempted one by one would leave "sk***" for a right
	 * next byte and "s***" for a wrong one: the oracle again)
	 */
	expect_exempt("the key elsewhere, right next byte", key, right,
				  "Table 'sk_li': key " KEY, "Table 'sk_li': key ***");
	expect_exempt("the key elsewhere, wrong next byte", key, wrong,
				  "Table 'sk_lX': key " KEY, "Table 'sk_lX': key ***");
	expect_exempt("a kept run next to a masked one is one run", key, right,
				  "sk_live_", "***");
	expect_exempt("an echo of all the name is: kept", key,
				  (const char *[]) {"x-sk_live_4f9a-y", NULL},
				  "[sk_live_4f9a]", NULL);
	expect_exempt("two names, each kept", key,
				  (const char *[]) {"sk_li", "7e1b", NULL},
				  "sk_li, 7e1b, 8d3f", "sk_li, 7e1b, ***");
	expect_exempt("a middle piece of the key is masked", key, wrong,
				  "sk_lX 9a2c7e1b", "sk_lX ***");
	expect_exempt("a short secret in the name is not masked", shorts,
				  (const char *[]) {"tk9z", NULL}, "Table 'tk9z'", NULL);
	expect_exempt("a short secret the name lacks is masked", shorts,
				  (const char *[]) {"tk9", NULL}, "Table 'tk9z'", "Table 't***'");
	expect_exempt("a name shorter than a window exempts no window", key,
				  (const char *[]) {"sk_", NULL}, "sk_l", "***");
	expect_exempt("no exempt texts", key, none, "key sk_l", "key ***");
	{
		LsmRedactor *r = lsm_redactor_new(key, 1, nulls, 3);
		size_t		len = 0;
		char	   *out = lsm_redact(r, "Table 'sk_li'", 13, &len);

		check(out == NULL, "NULL and empty exempt texts skipped",
			  "masked to \"%s\"", out ? out : "");
		end_case("NULL and empty exempt texts skipped", r, out);
	}
}

/* The cases of the brief, with exact outputs. */
static void
test_cases(void)
{
	const char *key[] = {KEY, NULL};
	const char *two[] = {"abcdefgh", "efghijkl", NULL};
	const char *apart[] = {"abcdefgh", "WXYZ1234", NULL};
	const char *shorts[] = {"k9z", "ab", NULL};
	const char *empty[] = {"", NULL};
	const char *none[] = {NULL};
	const char *star[] = {"b***", NULL};
	const char *withnull[] = {NULL, KEY, "", NULL};

	expect("whole key", key, "bad key " KEY ".", "bad key ***.");
	expect("window at the start", key, "sk_lZZZZ", "***ZZZZ");
	expect("first 4 bytes, then other text", key, "key sk_l-rest", "key ***-rest");
	expect("window in the middle", key, "got 9a2c7e1b here", "got *** here");
	expect("window at the end", key, "cut: 3f6aQ7vZ", "cut: ***");
	expect("cut short at the end of the text", key, "x sk_live_4f9", "x ***");
	expect("masked echo", key, "key sk_l\xe2\x80\xa6Q7vZ rejected",
		   "key ***\xe2\x80\xa6*** rejected");
	expect("masked echo with dots", key, "sk_l...Q7vZ", "***...***");
	expect("3 bytes of a window are left", key, "sk_ Q7v", NULL);
	expect("two windows apart", key, "7e1b and 8d3f", "*** and ***");
	expect("overlapping secrets, one run", two, "xxabcdefghijklyy", "xx***yy");
	expect("adjacent secrets, one run", apart, "[abcdWXYZ]", "[***]");
	expect("secrets one byte apart", apart, "abcd-WXYZ", "***-***");
	expect("3-byte secret whole", shorts, "ak9zbk9z", "a***b***");
	expect("3-byte secret cut is left", shorts, "k9 z9k", NULL);
	expect("2-byte secret, innocent words too", shorts, "cab", "c***");
	expect("empty secret masks nothing", empty, "anything", NULL);
	expect("no secrets", none, "anything", NULL);
	expect("empty text", key, "", NULL);
	expect("text shorter than a window", key, "sk_", NULL);
	expect("no match", key, "nothing to see here", NULL);
	expect("whole text", key, "2c7e", "***");
	/* a secret holding the mask's byte: the mask cannot complete it */
	expect("secret with the mask's byte", star, "bb***", "***");
	expect("the mask completes a window again", star, "xbb***y", "x***y");
	{
		LsmRedactor *r = lsm_redactor_new(withnull, 3, NULL, 0);
		size_t		len = 0;
		char	   *out = lsm_redact(r, "x" KEY, strlen(KEY) + 1, &len);

		check(out != NULL && strcmp(out, "x***") == 0 && len == 4,
			  "NULL and empty entries skipped", "\"%s\"", out ? out : "(NULL)");
		end_case("NULL and empty entries skipped", r, out);
	}
	expect_n("NUL bytes never match", key, none, "\0\0\0\0sk_l\0", 9,
			 "\0\0\0\0***\0", 8);
}

/*
 * The naive reference: mark every byte covered by a window of a secret
 * (or a whole short secret) found at any position, then replace each run
 * of marked bytes with the mask, unless every mark in the run is of a
 * window (or short secret) that occurs in exempt.  One read; secrets without the mask's byte
 * only.
 */
static size_t
naive_redact(const char *const *secrets, const char *exempt,
			 const char *text, size_t len, char *out)
{
	/* per byte: 0 unmatched, 1 matched by kept pieces only, 2 by others */
	char	   *mark = calloc(len + 1, 1);
	size_t		o = 0;

	for (int s = 0; secrets[s] != NULL; s++)
	{
		size_t		sl = strlen(secrets[s]);
		size_t		w = sl >= LSM_REDACT_WINDOW ? LSM_REDACT_WINDOW : sl;

		for (size_t j = 0; sl > 0 && j + w <= sl; j++)
		{
			char		kind = memmem(exempt, strlen(exempt),
									  secrets[s] + j, w) ? 1 : 2;

			for (size_t i = 0; i + w <= len; i++)
				if (memcmp(text + i, secrets[s] + j, w) == 0)
					for (size_t k = i; k < i + w; k++)
						mark[k] = mark[k] > kind ? mark[k] : kind;
		}
	}
	for (size_t i = 0; i < len;)
	{
		size_t		end = i;
		bool		masked = false;

		while (end < len && mark[end])
			masked |= mark[end++] == 2;
		if (end == i)
			out[o++] = text[i++];
		else if (!masked)
		{
			memcpy(out + o, text + i, end - i);
			o += end - i;
			i = end;
		}
		else
		{
			memcpy(out + o, LSM_REDACT_MASK, strlen(LSM_REDACT_MASK));
			o += strlen(LSM_REDACT_MASK);
			i = end;
		}
	}
	free(mark);
	return o;
}

/* A random string of len bytes over alphabet, NUL-terminated. */
static void
random_string(char *buf, size_t len, const char *alphabet)
{
	size_t		n = strlen(alphabet);

	for (size_t i = 0; i < len; i++)
		buf[i] = alphabet[rand() % n];
	buf[len] = '\0';
}

/*
 * Random texts and secrets over a 3-letter alphabet (so that windows
 * match often, overlapping and adjacent): lsm_redact agrees with the
 * naive reference byte for byte.
 */
static void
test_against_reference(void)
{
	int			mismatches = 0;
	int			masked = 0;

	srand(37);
	for (int round = 0; round < 20000; round++)
	{
		char		sbuf[3][16];
		const char *secrets[4];
		char		text[96];
		char		exempt[16];
		char		want[96 * 3 + 1];
		size_t		len = rand() % 64;
		size_t		want_len;
		size_t		got_len = 0;
		LsmRedactor *r;
		char	   *got;

		for (int s = 0; s < 3; s++)
		{
			random_string(sbuf[s], rand() % 9, "abc");
			secrets[s] = sbuf[s];
		}
		secrets[3] = NULL;
		random_string(text, len, "abcd");
		/* every other round, an exempt text of up to 8 bytes */
		random_string(exempt, round % 2 ? rand() % 9 : 0, "abc");
		want_len = naive_redact(secrets, exempt, text, len, want);
		r = lsm_redactor_new(secrets, 3, (const char *[]) {exempt}, 1);
		got = lsm_redact(r, text, len, &got_len);
		if (got == NULL)
		{
			got_len = len;
			if (want_len != len || memcmp(want, text, len) != 0)
				mismatches++;
		}
		else
		{
			masked++;
			if (got_len != want_len || memcmp(got, want, want_len) != 0)
				mismatches++;
		}
		lsm_redactor_free(r);
		harness_free_all();
	}
	check(mismatches == 0 && masked > 1000, "against the reference",
		  "%d of 20000 differ (%d masked)", mismatches, masked);
}

/*
 * A 64 kB error body (the cap of error bodies) holding pieces of the
 * secrets, scanned with an API key, three header values, a proxy
 * password and a 16 kB bearer token: the best of 20 scans, printed.
 */
static void
test_timing(void)
{
	static char body[64 * 1024 + 1];
	static char token[16 * 1024 + 1];
	const char *secrets[7];
	LsmRedactor *r;
	double		best = 1e9;
	double		prepare = 0;
	size_t		out_len = 0;
	struct timespec t0,
				t1;

	srand(64);
	random_string(token, sizeof(token) - 1,
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
	random_string(body, sizeof(body) - 1,
				  "abcdefghijklmnopqrstuvwxyz {}\":,.0123456789");
	secrets[0] = KEY;
	secrets[1] = "tenant-secret-value-1";
	secrets[2] = "gw-secret-2";
	secrets[3] = "x9";
	secrets[4] = "proxy-pass-3";
	secrets[5] = token;
	secrets[6] = NULL;
	/* echoes every 4 kB: the key's middle, the token's end, a masked key */
	for (size_t at = 100; at + 64 < sizeof(body) - 1; at += 4096)
	{
		memcpy(body + at, "9a2c7e1b", 8);
		memcpy(body + at + 20, token + sizeof(token) - 13, 12);
		memcpy(body + at + 40, "sk_l...Q7vZ", 11);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = lsm_redactor_new(secrets, 6, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	prepare = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (int i = 0; i < 20; i++)
	{
		char	   *out;
		double		secs;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		out = lsm_redact(r, body, sizeof(body) - 1, &out_len);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (secs < best)
			best = secs;
		check(out != NULL && strstr(out, "9a2c") == NULL &&
			  strstr(out, "Q7vZ") == NULL, "64 kB body",
			  "pieces of the secrets left");
	}
	printf("scanned a %zu-byte body for 6 secrets (%zu bytes) in %.3f ms "
		   "(best of 20; preparing them: %.3f ms); %zu bytes left\n",
		   sizeof(body) - 1,
		   strlen(KEY) + 21 + 11 + 2 + 12 + strlen(token),
		   best * 1e3, prepare * 1e3, out_len);
	lsm_redactor_free(r);
	harness_free_all();
}

int
main(void)
{
	test_cases();
	test_exempt();
	test_against_reference();
	test_timing();
	return harness_check_summary();
}
