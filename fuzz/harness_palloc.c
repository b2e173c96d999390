/*-------------------------------------------------------------------------
 *
 * harness_palloc.c
 *		A standalone palloc for linking the decoders outside a backend.
 *
 * src/protocol/lsm_stats_json.c, src/protocol/lsm_json.c and the frontend JSON parser of
 * libpgcommon (common/jsonapi.c) call palloc, palloc0, pstrdup, pnstrdup,
 * pfree and repalloc.  This file provides them on top of malloc, in place of
 * libpgcommon's fe_memutils (pg_snprintf comes from libpgport).  It also
 * counts the bytes held, for the memory figure of decode_mem.c.  It includes postgres.h so the compiler checks every definition against
 * PostgreSQL's own prototype.  Allocation failure aborts, as palloc's
 * ERROR would end the statement; a test can instead make one chosen
 * allocation raise (harness_fail_allocation).
 *
 * Each block is preceded by a header linking it into a doubly linked list
 * of live blocks; harness_free_all releases them all, like a memory context
 * reset.  Not thread-safe (neither is a backend's memory context).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_palloc.h"

/* Undo port.h's redirection: report with libc's fprintf. */
#undef fprintf

/* The header in front of every block; the union keeps blocks max-aligned. */
typedef union HarnessBlock
{
	struct
	{
		union HarnessBlock *prev;
		union HarnessBlock *next;
		size_t		size;		/* bytes requested by the caller */
	}			link;
	max_align_t align;
} HarnessBlock;

static HarnessBlock *harness_blocks = NULL;
static size_t harness_nblocks = 0;
static size_t harness_bytes = 0;	/* bytes requested by live blocks */
static size_t harness_peak = 0; /* the high-water mark of harness_bytes */

/* harness_fail_allocation: allocations left before the failing one. */
static size_t harness_fail_countdown = 0;
static void (*harness_fail) (size_t size) = NULL;

static void *harness_alloc(Size size, bool zero);
static void harness_unlink(HarnessBlock *block);
static void harness_link(HarnessBlock *block);

/* Push block at the head of the live list. */
static void
harness_link(HarnessBlock *block)
{
	block->link.prev = NULL;
	block->link.next = harness_blocks;
	if (harness_blocks != NULL)
		harness_blocks->link.prev = block;
	harness_blocks = block;
	harness_nblocks++;
	harness_bytes += block->link.size;
	if (harness_bytes > harness_peak)
		harness_peak = harness_bytes;
}

/* Remove block from the live list. */
static void
harness_unlink(HarnessBlock *block)
{
	if (block->link.prev != NULL)
		block->link.prev->link.next = block->link.next;
	else
		harness_blocks = block->link.next;
	if (block->link.next != NULL)
		block->link.next->link.prev = block->link.prev;
	harness_nblocks--;
	harness_bytes -= block->link.size;
}

/* Allocate size bytes (zeroed if zero) in the arena; aborts on failure. */
static void *
harness_alloc(Size size, bool zero)
{
	HarnessBlock *block;

	if (harness_fail_countdown > 0 && --harness_fail_countdown == 0)
		harness_fail(size);
	block = zero ? calloc(1, sizeof(HarnessBlock) + size) :
		malloc(sizeof(HarnessBlock) + size);
	if (block == NULL)
	{
		fprintf(stderr, "harness_palloc: out of memory (%zu bytes)\n",
				(size_t) size);
		abort();
	}
	block->link.size = size;
	harness_link(block);
	return block + 1;
}

/* Make the n-th allocation from now call fail (see harness_palloc.h). */
void
harness_fail_allocation(size_t n, void (*fail) (size_t size))
{
	harness_fail_countdown = n;
	harness_fail = fail;
}

void *
palloc(Size size)
{
	return harness_alloc(size, false);
}

void *
palloc0(Size size)
{
	return harness_alloc(size, true);
}

void *
palloc_extended(Size size, int flags)
{
	return harness_alloc(size, (flags & MCXT_ALLOC_ZERO) != 0);
}

char *
pstrdup(const char *in)
{
	size_t		len = strlen(in);
	char	   *copy = harness_alloc(len + 1, false);

	memcpy(copy, in, len + 1);
	return copy;
}

char *
pnstrdup(const char *in, Size len)
{
	size_t		n = strnlen(in, len);
	char	   *copy = harness_alloc(n + 1, false);

	memcpy(copy, in, n);
	copy[n] = '\0';
	return copy;
}

void
pfree(void *pointer)
{
	HarnessBlock *block = (HarnessBlock *) pointer - 1;

	harness_unlink(block);
	free(block);
}

void *
repalloc(void *pointer, Size size)
{
	HarnessBlock *block = (HarnessBlock *) pointer - 1;
	HarnessBlock *moved;

	harness_unlink(block);
	moved = realloc(block, sizeof(HarnessBlock) + size);
	if (moved == NULL)
	{
		fprintf(stderr, "harness_palloc: out of memory (%zu bytes)\n",
				(size_t) size);
		abort();
	}
	moved->link.size = size;
	harness_link(moved);
	return moved + 1;
}

void
harness_free_all(void)
{
	while (harness_blocks != NULL)
	{
		HarnessBlock *block = harness_blocks;

		harness_blocks = block->link.next;
		free(block);
	}
	harness_nblocks = 0;
	harness_bytes = 0;
}

size_t
harness_live_blocks(void)
{
	return harness_nblocks;
}

/* Bytes requested by live blocks, and their high-water mark. */
size_t
harness_live_bytes(void)
{
	return harness_bytes;
}

size_t
harness_peak_bytes(void)
{
	return harness_peak;
}

/* Restart the high-water mark from the current live bytes. */
void
harness_reset_peak(void)
{
	harness_peak = harness_bytes;
}
