/*-------------------------------------------------------------------------
 *
 * fuzz_option.c
 *		libFuzzer target for the option validator of the lancelsm
 *		foreign-data wrapper (lsm_option_validate, which
 *		lancelsm_fdw_validator calls; src/functions/option_check.c) and the
 *		base URL a valid server's options give (lsm_option_base_url).
 *
 * It links src/functions/option_check.c, the validator without fmgr or
 * catalog access, through the face header functions/functions.h; the
 * backend functions that file calls are provided below as the backend
 * behaves (defGetString, superuser, varstr_levenshtein).
 *
 * Input: the first byte picks the catalog (server, user mapping, wrapper,
 * foreign table, column) and whether the role is a superuser; the rest
 * is the option list as the validator receives it, "name=value" entries
 * separated by NUL bytes (an entry without '=' has no value).  The target
 * runs the validator and aborts unless:
 *  - it accepts the list or raises one of its documented SQLSTATEs
 *    (HV00D, 42501, 22023, HV002, or 42601 for a missing value; 22P05
 *    for a user mapping's value that is not UTF-8, which a UTF-8
 *    database never holds but the fuzzer's bytes may) with a message;
 *  - no error text quotes an api_key value (values of 8 bytes or more
 *    starting "sk_" that appear nowhere else in the input: the names of
 *    options and headers are quoted on purpose);
 *  - for an accepted server, its base URL starts with http:// or https://
 *    in lower case, names a host, and does not end with '/'.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdint.h>
#include <stdlib.h>

#include "catalog/pg_attribute.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "functions/functions.h"
#include "harness_elog.h"
#include "harness_palloc.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/varlena.h"

#undef fprintf

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The role: a superuser or not. */
static bool fuzz_superuser;

/* defGetString: the String value of an option, as the backend's. */
char *
defGetString(DefElem *def)
{
	if (def->arg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s requires a parameter", def->defname)));
	return strVal(def->arg);
}

bool
superuser(void)
{
	return fuzz_superuser;
}

/*
 * varstr_levenshtein: the edit distance of source and target, each
 * operation at cost 1 as the validator asks (the backend's own is in
 * utils/adt/levenshtein.c, not part of this test).
 */
int
varstr_levenshtein(const char *source, int slen, const char *target,
				   int tlen, int ins_c, int del_c, int sub_c, bool trusted)
{
	int		   *prev = palloc((tlen + 1) * sizeof(int));
	int		   *cur = palloc((tlen + 1) * sizeof(int));
	int			d;

	for (int j = 0; j <= tlen; j++)
		prev[j] = j * ins_c;
	for (int i = 1; i <= slen; i++)
	{
		int		   *swap;

		cur[0] = i * del_c;
		for (int j = 1; j <= tlen; j++)
			cur[j] = Min(Min(prev[j] + del_c, cur[j - 1] + ins_c),
						 prev[j - 1] + (source[i - 1] == target[j - 1] ? 0 : sub_c));
		swap = prev;
		prev = cur;
		cur = swap;
	}
	d = prev[tlen];
	pfree(prev);
	pfree(cur);
	return d;
}

/*
 * lsm_endpoint_url_verdict: lancelsm.allowed_endpoints empty, as by
 * default: every endpoint is allowed (src/net/endpoint.c is not linked).
 */
LsmEndpointVerdict
lsm_endpoint_url_verdict(const char *url, bool name_only, char *endpoint,
						 size_t endpointlen)
{
	strlcpy(endpoint, url, endpointlen);
	return LSM_ENDPOINT_ALLOWED;
}

/*
 * fuzz_parse_options: the NUL-separated entries of data as a List of
 * DefElem, split at the first '=' as untransformRelOptions does.
 */
static List *
fuzz_parse_options(const char *data, size_t size)
{
	int			n = 0;
	List	   *list;
	const char *p = data;
	const char *end = data + size;

	for (size_t i = 0; i < size; i++)
		n += (data[i] == '\0');
	if (size > 0 && data[size - 1] != '\0')
		n++;
	if (n == 0)
		return NIL;
	list = palloc0(offsetof(List, initial_elements) + n * sizeof(ListCell));
	list->type = T_List;
	list->length = n;
	list->max_length = n;
	list->elements = list->initial_elements;
	for (int i = 0; i < n; i++)
	{
		size_t		len = strnlen(p, end - p);
		char	   *entry = pnstrdup(p, len);
		char	   *eq = strchr(entry, '=');
		DefElem    *def = palloc0(sizeof(DefElem));

		def->type = T_DefElem;
		def->defname = entry;
		def->location = -1;
		if (eq != NULL)
		{
			String	   *value = palloc0(sizeof(String));

			*eq = '\0';
			value->type = T_String;
			value->sval = eq + 1;
			def->arg = (Node *) value;
		}
		list->elements[i].ptr_value = def;
		p += len + 1;
	}
	return list;
}

/* Whether text occurs in an option of the list other than def. */
static bool
fuzz_elsewhere(List *options, const DefElem *def, const char *text)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *other = lfirst_node(DefElem, lc);

		if (strstr(other->defname, text) != NULL ||
			(other != def && other->arg != NULL &&
			 strstr(strVal(other->arg), text) != NULL))
			return true;
	}
	return false;
}

/* Abort unless an api_key value starting "sk_" stays out of every text. */
static void
fuzz_check_no_key(List *options)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const char *key;

		if (strcmp(def->defname, "api_key") != 0 || def->arg == NULL)
			continue;
		key = strVal(def->arg);
		if (strncmp(key, "sk_", 3) != 0 || strlen(key) < 8 ||
			fuzz_elsewhere(options, def, key))
			continue;
		if (strstr(harness_error.message, key) != NULL ||
			strstr(harness_error.detail, key) != NULL ||
			strstr(harness_error.hint, key) != NULL)
			abort();
	}
}

/* Abort unless the error raised is one the validator documents. */
static void
fuzz_check_error(void)
{
	switch (harness_error.sqlerrcode)
	{
		case ERRCODE_FDW_INVALID_OPTION_NAME:
		case ERRCODE_INSUFFICIENT_PRIVILEGE:
		case ERRCODE_INVALID_PARAMETER_VALUE:
		case ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED:
		case ERRCODE_SYNTAX_ERROR:
		case ERRCODE_UNTRANSLATABLE_CHARACTER:
			break;
		default:
			abort();
	}
	if (harness_error.message[0] == '\0')
		abort();
}

/* Abort unless an accepted server's base URL is well formed. */
static void
fuzz_check_base_url(List *options)
{
	const char *region = lsm_option_find(options, "region");
	char	   *url = lsm_option_base_url(lsm_option_find(options, "host_override"),
									  lsm_option_find(options, "database"),
									  region ? region : LSM_DEFAULT_REGION);
	const char *host;
	size_t		len = strlen(url);

	if (strncmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else
		abort();
	if (*host == '\0' || *host == '/' || *host == ':' || url[len - 1] == '/')
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const Oid catalogs[] = {
		ForeignServerRelationId, UserMappingRelationId,
		ForeignDataWrapperRelationId, ForeignTableRelationId,
		AttributeRelationId
	};
	Oid			catalog;
	sigjmp_buf	jb;
	List	   *options;
	List	   *validated;

	if (size < 1)
		return 0;
	catalog = catalogs[(data[0] & 0x7F) % lengthof(catalogs)];
	fuzz_superuser = (data[0] & 0x80) != 0;
	options = fuzz_parse_options((const char *) data + 1, size - 1);
	/* the validator wipes its list's secrets: keep one to check against */
	validated = fuzz_parse_options((const char *) data + 1, size - 1);

	harness_error_jump = &jb;
	if (sigsetjmp(jb, 0) == 0)
	{
		lsm_option_validate(validated, catalog);
		harness_error_jump = NULL;
		if (catalog == ForeignServerRelationId)
			fuzz_check_base_url(options);
	}
	else
	{
		harness_error_jump = NULL;
		fuzz_check_error();
		fuzz_check_no_key(options);
	}
	harness_free_all();
	return 0;
}
