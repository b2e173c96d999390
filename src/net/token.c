/*-------------------------------------------------------------------------
 *
 * token.c
 *		The bearer token of a server's bearer_token_file option, read from
 *		the file and read again whenever the file changes.
 *
 * OAuth tokens expire: an external agent (a sidecar, a managed-identity
 * helper) rewrites the file before they do, and every request attempt
 * checks the file's identity (device, inode, size, modification time in
 * nanoseconds) with one stat() before building its headers.  A changed
 * file is read again: opened without blocking, checked with fstat() to be
 * a regular file of at most TOKEN_MAX_BYTES, and its identity cached from
 * that fstat(); an unchanged one costs no read.  Writers should
 * replace the file atomically (write a temporary file, then rename it).
 *
 * The token is a secret: the cached copy lives in TopMemoryContext and is
 * zeroed before it is freed or replaced; failures are redacted of it
 * (src/protocol/fault.c).  One cache entry per backend: servers with different
 * files alternate through it, which stays correct, only slower.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/fd.h"
#include "net/net.h"
#include "utils/memutils.h"

/* Largest token file accepted, in bytes. */
#define TOKEN_MAX_BYTES 16384

/* The last token read, and the identity of the file it came from. */
static struct
{
	char	   *path;
	char	   *token;
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	struct timespec mtime;
} token_cache;

/*
 * token_forget: wipe and free the cached token.
 */
static void
token_forget(void)
{
	if (token_cache.token)
	{
		explicit_bzero(token_cache.token, strlen(token_cache.token));
		pfree(token_cache.token);
	}
	if (token_cache.path)
		pfree(token_cache.path);
	memset(&token_cache, 0, sizeof(token_cache));
}

/*
 * token_same_file: whether st describes the file the cache was read from.
 */
static bool
token_same_file(const char *path, const struct stat *st)
{
	return token_cache.token != NULL &&
		strcmp(token_cache.path, path) == 0 &&
		token_cache.dev == st->st_dev && token_cache.ino == st->st_ino &&
		token_cache.size == st->st_size &&
		token_cache.mtime.tv_sec == st->st_mtim.tv_sec &&
		token_cache.mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * token_open: open path for reading without blocking (O_NONBLOCK: a FIFO
 * or a device in the file's place must not hold the backend, where
 * neither cancel nor terminate would reach it), fstat() the descriptor
 * and refuse anything but a regular file of at most TOKEN_MAX_BYTES.  The
 * descriptor (a transient file: closed at transaction end if an error
 * comes first), with its identity in *st; -1 with *problem set to a
 * sentence when it cannot be used.
 */
static int
token_open(const char *path, struct stat *st, char **problem)
{
	int			fd = OpenTransientFile(path, O_RDONLY | O_NONBLOCK | PG_BINARY);

	if (fd < 0)
	{
		*problem = psprintf("Could not open bearer token file \"%s\": %m.", path);
		return -1;
	}
	if (fstat(fd, st) != 0)
		*problem = psprintf("Could not read bearer token file \"%s\": %m.", path);
	else if (!S_ISREG(st->st_mode))
		*problem = psprintf("Bearer token file \"%s\" is not a regular file.", path);
	else if (st->st_size > TOKEN_MAX_BYTES)
		*problem = psprintf("Bearer token file \"%s\" is larger than %d bytes.",
							path, TOKEN_MAX_BYTES);
	else
		return fd;
	CloseTransientFile(fd);
	return -1;
}

/*
 * token_read: the token in path, in TopMemoryContext: the file's content
 * without trailing blanks and line ends; the identity of the file it was
 * read from in *st (from the descriptor read, so that the cache never
 * pairs one file's token with another's identity).  NULL, with *problem
 * set to a sentence that never quotes the content, when the file cannot
 * be opened or read, is no regular file, is larger than TOKEN_MAX_BYTES
 * (also when it grew past that since its fstat), empty, or holds control
 * characters.
 */
static char *
token_read(const char *path, struct stat *st, char **problem)
{
	char		buf[TOKEN_MAX_BYTES + 1];
	int			fd = token_open(path, st, problem);
	ssize_t		got;
	size_t		len;
	char	   *token;

	if (fd < 0)
		return NULL;
	/* one byte more than the limit: a file that grew since is refused */
	got = read(fd, buf, sizeof(buf));
	if (got < 0)
	{
		*problem = psprintf("Could not read bearer token file \"%s\": %m.", path);
		explicit_bzero(buf, sizeof(buf));
		CloseTransientFile(fd);
		return NULL;
	}
	CloseTransientFile(fd);
	len = (size_t) got;
	if (len > TOKEN_MAX_BYTES)
	{
		explicit_bzero(buf, sizeof(buf));
		*problem = psprintf("Bearer token file \"%s\" is larger than %d bytes.",
							path, TOKEN_MAX_BYTES);
		return NULL;
	}
	while (len > 0 && strchr(" \t\r\n", buf[len - 1]) != NULL)
		len--;
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char) buf[i] < 0x20 || buf[i] == 0x7F)
			len = 0;			/* refused below, without a trace of it */
	if (len == 0 || len > TOKEN_MAX_BYTES - 1)
	{
		explicit_bzero(buf, sizeof(buf));
		*problem = psprintf("Bearer token file \"%s\" does not hold one token of at most 16383 bytes without control characters (trailing line ends are ignored).",
							path);
		return NULL;
	}
	token = MemoryContextStrdup(TopMemoryContext, buf);
	explicit_bzero(buf, sizeof(buf));
	return token;
}

/*
 * lsm_bearer_token_try: the current token of the file at path, read again
 * when the file changed since the last call; NULL with *problem set (a
 * full sentence naming the file, never quoting its content) when the file
 * cannot be read or holds no usable token.  Raises nothing of its own.
 * The result belongs to this file: do not free it, copy it only into
 * memory that is wiped.
 */
const char *
lsm_bearer_token_try(const char *path, char **problem)
{
	struct stat st;

	if (stat(path, &st) != 0)
	{
		*problem = psprintf("Could not open bearer token file \"%s\": %m.", path);
		return NULL;
	}
	if (token_same_file(path, &st))
		return token_cache.token;
	token_forget();
	token_cache.token = token_read(path, &st, problem);
	if (token_cache.token == NULL)
		return NULL;
	token_cache.path = MemoryContextStrdup(TopMemoryContext, path);
	token_cache.dev = st.st_dev;
	token_cache.ino = st.st_ino;
	token_cache.size = st.st_size;
	token_cache.mtime = st.st_mtim;
	return token_cache.token;
}

/*
 * lsm_bearer_token: as lsm_bearer_token_try, raising F0000 instead of
 * returning NULL.
 */
const char *
lsm_bearer_token(const char *path)
{
	char	   *problem;
	const char *token = lsm_bearer_token_try(path, &problem);

	if (token == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not read the bearer token"),
				 errdetail_internal("%s", problem)));
	return token;
}

/*
 * lsm_bearer_token_peek: the token last read from path, without touching
 * the file; NULL when path is NULL or none is cached for it.  For
 * redacting failures.
 */
const char *
lsm_bearer_token_peek(const char *path)
{
	if (path == NULL || token_cache.path == NULL ||
		strcmp(token_cache.path, path) != 0)
		return NULL;
	return token_cache.token;
}
