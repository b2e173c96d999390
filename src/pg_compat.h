/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *		The differences between the PostgreSQL majors lancelsm supports
 *		(15 to 19), in one place.
 *
 * The code is written for the newest PostgreSQL; for an older one this
 * header supplies what the newer headers have, each guard written from the
 * PostgreSQL headers of the version that introduced the change.  A block
 * that redefines a name first includes the header declaring it, so the
 * header may come anywhere after postgres.h (the .c files put it last).
 *
 * Version 16 is covered by these guards but is neither compiled nor tested
 * here (docs/install.md, "Supported PostgreSQL versions").
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_PG_COMPAT_H
#define LANCELSM_PG_COMPAT_H

#include "postgres.h"

#include "fmgr.h"

/*
 * 18 replaced the postfix pg_attribute_noreturn() with the function
 * specifier pg_noreturn, written before the declaration.  GCC and clang
 * accept the older attribute in that place too.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * 18 lets a module name itself and its version in its magic block; before,
 * the plain block.
 */
#ifndef PG_MODULE_MAGIC_EXT
#define PG_MODULE_MAGIC_EXT(...) PG_MODULE_MAGIC
#endif

/*
 * A setting's extra lives in GUC memory since 16 (guc_malloc, guc_free);
 * before, it was malloc'd and freed with free().
 */
#if PG_VERSION_NUM < 160000
#define guc_malloc(elevel, size) malloc(size)
#define guc_free(ptr) free(ptr)
#endif

/*
 * 19 declares get_database_name in utils/lsyscache.h; before, in
 * commands/dbcommands.h.
 */
#if PG_VERSION_NUM < 190000
#include "commands/dbcommands.h"
#else
#include "utils/lsyscache.h"
#endif

/* fmgr.h declares _PG_init since 16 */
#if PG_VERSION_NUM < 160000
extern PGDLLEXPORT void _PG_init(void);
#endif

/*
 * 16 replaced the per-kind ACL checks with object_aclcheck(classid, ...).
 * lancelsm checks foreign servers only.
 */
#if PG_VERSION_NUM < 160000
#include "catalog/pg_foreign_server.h"
#include "utils/acl.h"

#define object_aclcheck(classid, objectid, roleid, mode) \
	(AssertMacro((classid) == ForeignServerRelationId), \
	 pg_foreign_server_aclcheck((objectid), (roleid), (mode)))
#endif

/*
 * 17: a WaitEventSet belongs to a ResourceOwner, which frees it on error;
 * before, it lived in a memory context (the current one here).
 */
#if PG_VERSION_NUM < 170000
#include "storage/latch.h"

#define CreateWaitEventSet(resowner, nevents) \
	CreateWaitEventSet(CurrentMemoryContext, (nevents))
#endif

/*
 * 17: makeJsonLexContextCstringLen takes the context to fill (NULL: a new
 * one) and a size_t length, and freeJsonLexContext frees what it made.
 */
#if PG_VERSION_NUM < 170000
#include "common/jsonapi.h"

#define makeJsonLexContextCstringLen(lex, json, len, encoding, need_escapes) \
	(AssertMacro((lex) == NULL), \
	 makeJsonLexContextCstringLen((char *) (json), (int) (len), (encoding), \
								  (need_escapes)))

static inline void
freeJsonLexContext(JsonLexContext *lex)
{
	if (lex->strval != NULL)
	{
		pfree(lex->strval->data);
		pfree(lex->strval);
	}
	pfree(lex);
}
#endif

/*
 * 16: the JSON semantic actions return a JsonParseErrorType, and one that
 * is not JSON_SUCCESS ends the parse with that result.  Before 16 they
 * return nothing.  For 15, JsonSemAction here names a table of 16's kind of
 * actions, and pg_parse_json runs them through adapters of 15's kind: after
 * an action fails, no further action runs and pg_parse_json returns that
 * failure (15's parser still reads to the end to do so).
 */
#if PG_VERSION_NUM < 160000
#include "common/jsonapi.h"

typedef struct PgCompatJsonSemAction
{
	void	   *semstate;
	JsonParseErrorType (*object_start) (void *state);
	JsonParseErrorType (*object_end) (void *state);
	JsonParseErrorType (*array_start) (void *state);
	JsonParseErrorType (*array_end) (void *state);
	JsonParseErrorType (*object_field_start) (void *state, char *fname,
											  bool isnull);
	JsonParseErrorType (*object_field_end) (void *state, char *fname,
											bool isnull);
	JsonParseErrorType (*array_element_start) (void *state, bool isnull);
	JsonParseErrorType (*array_element_end) (void *state, bool isnull);
	JsonParseErrorType (*scalar) (void *state, char *token,
								  JsonTokenType tokentype);
} PgCompatJsonSemAction;

/* the state the adapters get: the 16-style table and the first failure */
typedef struct PgCompatJsonParse
{
	const PgCompatJsonSemAction *sem;
	JsonParseErrorType result;
} PgCompatJsonParse;

/* PG_COMPAT_JSON_ADAPTER: a 15-style action calling the 16-style one */
#define PG_COMPAT_JSON_ADAPTER(field, params, args) \
static inline void \
pg_compat_json_##field params \
{ \
	PgCompatJsonParse *parse = (PgCompatJsonParse *) state; \
	if (parse->result == JSON_SUCCESS) \
		parse->result = parse->sem->field args; \
}

PG_COMPAT_JSON_ADAPTER(object_start, (void *state), (parse->sem->semstate))
PG_COMPAT_JSON_ADAPTER(object_end, (void *state), (parse->sem->semstate))
PG_COMPAT_JSON_ADAPTER(array_start, (void *state), (parse->sem->semstate))
PG_COMPAT_JSON_ADAPTER(array_end, (void *state), (parse->sem->semstate))
PG_COMPAT_JSON_ADAPTER(object_field_start,
					   (void *state, char *fname, bool isnull),
					   (parse->sem->semstate, fname, isnull))
PG_COMPAT_JSON_ADAPTER(object_field_end,
					   (void *state, char *fname, bool isnull),
					   (parse->sem->semstate, fname, isnull))
PG_COMPAT_JSON_ADAPTER(array_element_start, (void *state, bool isnull),
					   (parse->sem->semstate, isnull))
PG_COMPAT_JSON_ADAPTER(array_element_end, (void *state, bool isnull),
					   (parse->sem->semstate, isnull))
PG_COMPAT_JSON_ADAPTER(scalar,
					   (void *state, char *token, JsonTokenType tokentype),
					   (parse->sem->semstate, token, tokentype))

/* pg_parse_json with a table of 16-style actions (unset ones stay unset) */
static inline JsonParseErrorType
pg_compat_parse_json(JsonLexContext *lex, const PgCompatJsonSemAction *sem)
{
	PgCompatJsonParse parse = {.sem = sem, .result = JSON_SUCCESS};
	JsonSemAction adapters = {.semstate = &parse};
	JsonParseErrorType error;

#define PG_COMPAT_JSON_SET(field) \
	if (sem->field != NULL) \
		adapters.field = pg_compat_json_##field
	PG_COMPAT_JSON_SET(object_start);
	PG_COMPAT_JSON_SET(object_end);
	PG_COMPAT_JSON_SET(array_start);
	PG_COMPAT_JSON_SET(array_end);
	PG_COMPAT_JSON_SET(object_field_start);
	PG_COMPAT_JSON_SET(object_field_end);
	PG_COMPAT_JSON_SET(array_element_start);
	PG_COMPAT_JSON_SET(array_element_end);
	PG_COMPAT_JSON_SET(scalar);
#undef PG_COMPAT_JSON_SET
	error = pg_parse_json(lex, &adapters);
	return parse.result != JSON_SUCCESS ? parse.result : error;
}

#define JsonSemAction PgCompatJsonSemAction
#define pg_parse_json(lex, sem) pg_compat_parse_json((lex), (sem))
#endif

/*
 * 17 lets an extension name its wait events (WaitEventExtensionNew, in
 * utils/wait_event.h, returning the event to pass to a wait); before, all
 * of them are the generic Extension.
 */
#if PG_VERSION_NUM < 170000
#include "utils/wait_event.h"

#define WaitEventExtensionNew(name) ((void) (name), (uint32) PG_WAIT_EXTENSION)
#endif

/*
 * 19 sizes a shared hash table by one number of elements; before, by an
 * initial and a maximum size.  lancelsm's are allocated whole at start.
 */
#include "storage/shmem.h"
#if PG_VERSION_NUM < 190000
#define lsm_shmem_init_hash(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (nelems), (info), (flags))
#else
#define lsm_shmem_init_hash(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (info), (flags))
#endif

#endif							/* LANCELSM_PG_COMPAT_H */
