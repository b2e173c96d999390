/*-------------------------------------------------------------------------
 *
 * redact.c
 *		Mask every piece of a set of secrets in a text.
 *
 * A server, a gateway or a proxy may echo what a request was sent with:
 * the whole API key, a masked form of it ("sk_l...Q7vZ": its first and
 * last bytes), a part from its middle, or an excerpt cut anywhere.  So a
 * secret is recognised by its pieces, not from its first byte: every
 * LSM_REDACT_WINDOW-byte window of every secret is masked wherever it
 * appears, and the union of the bytes so covered is replaced run by run
 * with LSM_REDACT_MASK.  What is left holds no window of any secret: a
 * window left whole in the output lies in bytes no match covered.
 * Secrets shorter than a window are masked where they appear whole;
 * that masks innocent text as well, which is the price of such a secret.
 *
 * What the reader supplied is no secret to it.  A window of a secret that
 * occurs in an exempt text (the table name the caller passed, which a
 * server may echo), or a short secret that occurs whole in one, is kept:
 * a run of matched bytes is masked only when a window or short secret
 * that is not kept matched in it, and is left as it is when all its
 * matches are kept.  So an echo of the caller's name reads as the name
 * whatever secrets it shares windows with (were it masked, whether it
 * came back masked would tell the caller which of its windows are windows
 * of a secret, a byte at a time), while an echo of a secret is masked
 * whole unless the caller supplied every window of it.
 *
 * The windows of all secrets go into one open-addressing hash set of
 * 32-bit values, and the text is read once with a rolling window: O(n)
 * in the text's length plus O(s) in the secrets' (each short secret adds
 * a comparison per byte).  A secret holding the mask's byte could be
 * completed again by the mask itself ("a*" + "***" + ...); the text is
 * then read again until nothing matches, at most REDACT_MAX_PASSES
 * times, after which the whole text becomes the mask.
 *
 * Pure: no fmgr, no catalog, no I/O; palloc only.  Tested by
 * test/unit/redact_test.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "protocol/redact.h"

/* Reads of a text whose secrets hold a byte of the mask (see above). */
#define REDACT_MAX_PASSES 8

/* The smallest hash set, in slots (a power of two). */
#define REDACT_MIN_SLOTS 16

struct LsmRedactor
{
	uint32	   *slots;			/* windows as 32-bit values; 0: empty (no
								 * window of a C string is 0) */
	int			shift;			/* 32 - log2(number of slots) */
	bool	   *kept;			/* per slot: the window occurs in an exempt
								 * text */
	uint32		nslots;
	int			nwindows;		/* distinct windows in slots */
	int			nshort;			/* secrets shorter than a window */
	const char **short_secrets; /* the caller's strings */
	size_t	   *short_lens;
	bool	   *short_kept;		/* occurs whole in an exempt text */
	bool		refeed;			/* a secret holds a byte of the mask */
};

/*
 * redact_slot: the first slot to probe for window w (Fibonacci hashing).
 */
static inline uint32
redact_slot(const LsmRedactor *r, uint32 w)
{
	return (uint32) (w * UINT32_C(0x9E3779B1)) >> r->shift;
}

/* What a window or a short secret found in a text is. */
typedef enum RedactMatch
{
	REDACT_NONE,				/* no secret's */
	REDACT_KEPT,				/* a secret's, occurring in an exempt text */
	REDACT_MASKED				/* a secret's, to be masked */
} RedactMatch;

/*
 * redact_find: what window w is.  w == 0 (bytes of NUL) is never a
 * secret's.
 */
static inline RedactMatch
redact_find(const LsmRedactor *r, uint32 w)
{
	uint32		i = redact_slot(r, w);
	uint32		k;

	while ((k = r->slots[i]) != 0)
	{
		if (k == w)
			return r->kept[i] ? REDACT_KEPT : REDACT_MASKED;
		i = (i + 1) & (r->nslots - 1);
	}
	return REDACT_NONE;
}

/*
 * redact_add: put window w (not 0) into the set, once; kept: it occurs in
 * an exempt text.
 */
static void
redact_add(LsmRedactor *r, uint32 w, bool kept)
{
	uint32		i = redact_slot(r, w);

	while (r->slots[i] != 0)
	{
		if (r->slots[i] == w)
			return;
		i = (i + 1) & (r->nslots - 1);
	}
	r->slots[i] = w;
	r->kept[i] = kept;
	r->nwindows++;
}

/*
 * redact_occurs: whether the len bytes at s occur in one of the nexempt
 * NUL-terminated texts of exempt (NULL entries skipped).
 */
static bool
redact_occurs(const char *s, size_t len, const char *const *exempt,
			  int nexempt)
{
	for (int i = 0; i < nexempt; i++)
		if (exempt[i] != NULL &&
			memmem(exempt[i], strlen(exempt[i]), s, len) != NULL)
			return true;
	return false;
}

/*
 * lsm_redactor_new
 *		Prepare the nsecrets secrets (NUL-terminated; NULL and empty
 *		entries are skipped) for lsm_redact, in CurrentMemoryContext.  A
 *		window of a secret that occurs in one of the nexempt texts of
 *		exempt (NUL-terminated; NULL entries skipped; exempt may be NULL
 *		when nexempt is 0), or a secret shorter than a window that occurs
 *		whole in one, is kept: it masks nothing by itself (lsm_redact).
 *		The strings of
 *		secrets shorter than LSM_REDACT_WINDOW bytes are referenced, not
 *		copied: they must outlive the redactor.  Free it with
 *		lsm_redactor_free, which wipes what it holds of the secrets.
 */
LsmRedactor *
lsm_redactor_new(const char *const *secrets, int nsecrets,
				 const char *const *exempt, int nexempt)
{
	LsmRedactor *r = palloc0(sizeof(LsmRedactor));
	size_t		nwindows = 0;
	int			bits = 0;

	r->short_secrets = palloc0((nsecrets + 1) * sizeof(char *));
	r->short_lens = palloc0((nsecrets + 1) * sizeof(size_t));
	r->short_kept = palloc0((nsecrets + 1) * sizeof(bool));
	for (int i = 0; i < nsecrets; i++)
	{
		size_t		len = secrets[i] ? strlen(secrets[i]) : 0;

		if (len >= LSM_REDACT_WINDOW)
			nwindows += len - LSM_REDACT_WINDOW + 1;
		else if (len > 0)
		{
			r->short_secrets[r->nshort] = secrets[i];
			r->short_kept[r->nshort] = redact_occurs(secrets[i], len,
													 exempt, nexempt);
			r->short_lens[r->nshort++] = len;
		}
		if (len > 0 && strpbrk(secrets[i], LSM_REDACT_MASK) != NULL)
			r->refeed = true;
	}
	/* at most half full: probes stay short, and an empty slot exists */
	while (((size_t) 1 << bits) < Max(2 * nwindows, REDACT_MIN_SLOTS))
		bits++;
	r->nslots = (uint32) 1 << bits;
	r->shift = 32 - bits;
	r->slots = palloc0(r->nslots * sizeof(uint32));
	r->kept = palloc0(r->nslots * sizeof(bool));
	for (int i = 0; i < nsecrets; i++)
	{
		const unsigned char *s = (const unsigned char *) secrets[i];
		size_t		len = s ? strlen(secrets[i]) : 0;
		uint32		w = 0;

		for (size_t j = 0; len >= LSM_REDACT_WINDOW && j < len; j++)
		{
			w = (w << 8) | s[j];
			if (j + 1 >= LSM_REDACT_WINDOW)
				redact_add(r, w,
						   redact_occurs(secrets[i] + j + 1 - LSM_REDACT_WINDOW,
										 LSM_REDACT_WINDOW, exempt, nexempt));
		}
		explicit_bzero(&w, sizeof(w));
	}
	return r;
}

/*
 * redact_flush: the masked run of text from start to end is decided: out
 * (*out, allocated at the first masked run; *o bytes long) gets the bytes
 * of text from *copied to start, then the mask; *copied becomes end.
 */
static void
redact_flush(const char *text, size_t len, size_t start, size_t end,
			 char **out, size_t *o, size_t *copied)
{
	if (*out == NULL)
	{
		/* a run of one byte becomes the whole mask: 3 bytes */
		*out = palloc(len * strlen(LSM_REDACT_MASK) + 1);
		*o = 0;
	}
	memcpy(*out + *o, text + *copied, start - *copied);
	*o += start - *copied;
	memcpy(*out + *o, LSM_REDACT_MASK, strlen(LSM_REDACT_MASK));
	*o += strlen(LSM_REDACT_MASK);
	*copied = end;
}

/*
 * redact_pass: one read of text (len bytes, may hold NUL) masking each
 * run of bytes matched by windows of r's secrets, and by r's short
 * secrets when with_short, in which something not kept matched; NULL
 * when nothing was masked, else a palloc'd NUL-terminated copy with its
 * length in *out_len.  A run is a stretch of consecutive matched bytes
 * (of overlapping or adjacent matches).
 */
static char *
redact_pass(const LsmRedactor *r, const char *text, size_t len,
			bool with_short, size_t *out_len)
{
	const unsigned char *t = (const unsigned char *) text;
	size_t		cover = 0;		/* the current run ends before this */
	size_t		start = 0;		/* the current run starts here */
	bool		masked = false; /* something not kept matched in it */
	size_t		copied = 0;		/* bytes of text accounted for in out */
	char	   *out = NULL;
	size_t		o = 0;
	uint32		w = 0;

	/* the rolling window holds the bytes from i to i + WINDOW - 1 */
	for (size_t k = 0; k + 1 < LSM_REDACT_WINDOW && k < len; k++)
		w = (w << 8) | t[k];
	for (size_t i = 0; i < len; i++)
	{
		RedactMatch m = REDACT_NONE;
		size_t		end = i;

		if (i + LSM_REDACT_WINDOW <= len)
		{
			w = (w << 8) | t[i + LSM_REDACT_WINDOW - 1];
			m = redact_find(r, w);
			if (m != REDACT_NONE)
				end = i + LSM_REDACT_WINDOW;
		}
		for (int s = 0; with_short && s < r->nshort; s++)
			if (r->short_lens[s] <= len - i &&
				memcmp(t + i, r->short_secrets[s], r->short_lens[s]) == 0)
			{
				m = Max(m, r->short_kept[s] ? REDACT_KEPT : REDACT_MASKED);
				end = Max(end, i + r->short_lens[s]);
			}
		if (m == REDACT_NONE)
			continue;
		if (i > cover)
		{
			/* a new run: the one before is decided */
			if (masked)
				redact_flush(text, len, start, cover, &out, &o, &copied);
			start = i;
			masked = false;
		}
		cover = Max(cover, end);
		masked |= (m == REDACT_MASKED);
	}
	if (masked)
		redact_flush(text, len, start, cover, &out, &o, &copied);
	explicit_bzero(&w, sizeof(w));
	if (out == NULL)
		return NULL;
	memcpy(out + o, text + copied, len - copied);
	o += len - copied;
	out[o] = '\0';
	*out_len = o;
	return out;
}

/*
 * redact_discard: wipe and free an intermediate text of len bytes.
 */
static void
redact_discard(char *text, size_t len)
{
	explicit_bzero(text, len);
	pfree(text);
}

/*
 * lsm_redact
 *		text (len bytes, may hold NUL) with every run of bytes covered by
 *		LSM_REDACT_WINDOW-byte windows of the secrets of redactor, or by
 *		whole secrets shorter than that, replaced with LSM_REDACT_MASK,
 *		unless all that matched in the run is kept (lsm_redactor_new).
 *		Returns NULL when there was nothing to mask (text is then free of
 *		them), else a palloc'd NUL-terminated copy with its length in
 *		*out_len.  redactor NULL: nothing to mask.  Time O(len) per read,
 *		one read unless a secret holds a byte of the mask (file header).
 */
char *
lsm_redact(const LsmRedactor *redactor, const char *text, size_t len,
		   size_t *out_len)
{
	char	   *out;

	if (redactor == NULL || (redactor->nwindows == 0 && redactor->nshort == 0))
		return NULL;
	out = redact_pass(redactor, text, len, true, out_len);
	if (out == NULL || !redactor->refeed)
		return out;
	for (int pass = 1;; pass++)
	{
		size_t		next_len;
		char	   *next = redact_pass(redactor, out, *out_len, false,
									   &next_len);

		if (next == NULL)
			return out;
		redact_discard(out, *out_len);
		if (pass == REDACT_MAX_PASSES)
		{
			redact_discard(next, next_len);
			*out_len = strlen(LSM_REDACT_MASK);
			return pstrdup(LSM_REDACT_MASK);
		}
		out = next;
		*out_len = next_len;
	}
}

/*
 * lsm_redactor_free
 *		Wipe the windows redactor holds and free it (NULL: nothing).
 */
void
lsm_redactor_free(LsmRedactor *redactor)
{
	if (redactor == NULL)
		return;
	explicit_bzero(redactor->slots, redactor->nslots * sizeof(uint32));
	pfree(redactor->slots);
	pfree(redactor->kept);
	pfree(redactor->short_secrets);
	pfree(redactor->short_lens);
	pfree(redactor->short_kept);
	pfree(redactor);
}
