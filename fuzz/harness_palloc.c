/*-------------------------------------------------------------------------
 *
 * harness_palloc.c
 *		A standalone palloc for linking src/lsm_json.c outside a backend.
 *
 * The decoder calls palloc, palloc0 and pstrdup, and postgres.h (through
 * port.h) turns its snprintf calls into pg_snprintf.  This file provides
 * those symbols, plus pfree and repalloc for completeness, on top of malloc.
 * It includes postgres.h so the compiler checks every definition against
 * PostgreSQL's own prototype.  Allocation failure aborts, as palloc's
 * ERROR would end the statement.
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

/* Undo port.h's redirections: pg_snprintf is implemented with libc's. */
#undef snprintf
#undef vsnprintf
#undef fprintf

/* The header in front of every block; the union keeps blocks max-aligned. */
typedef union HarnessBlock
{
	struct
	{
		union HarnessBlock *prev;
		union HarnessBlock *next;
	}			link;
	max_align_t align;
} HarnessBlock;

static HarnessBlock *harness_blocks = NULL;
static size_t harness_nblocks = 0;

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
}

/* Allocate size bytes (zeroed if zero) in the arena; aborts on failure. */
static void *
harness_alloc(Size size, bool zero)
{
	HarnessBlock *block;

	block = zero ? calloc(1, sizeof(HarnessBlock) + size) :
		malloc(sizeof(HarnessBlock) + size);
	if (block == NULL)
	{
		fprintf(stderr, "harness_palloc: out of memory (%zu bytes)\n",
				(size_t) size);
		abort();
	}
	harness_link(block);
	return block + 1;
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
	harness_link(moved);
	return moved + 1;
}

int
pg_snprintf(char *str, size_t count, const char *fmt,...)
{
	va_list		args;
	int			len;

	va_start(args, fmt);
	len = vsnprintf(str, count, fmt, args);
	va_end(args);
	return len;
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
}

size_t
harness_live_blocks(void)
{
	return harness_nblocks;
}
