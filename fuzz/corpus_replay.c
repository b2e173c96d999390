/*-------------------------------------------------------------------------
 *
 * corpus_replay.c
 *		Runs a libFuzzer target over every file of its corpus
 *		(fuzz/corpus/TARGET/) without libFuzzer, so that the corpus the
 *		fuzzer grew is a regression suite any compiler can build (make replay
 *		links it with each fuzz_TARGET.c as replay_TARGET, with gcc).
 *
 * Usage: corpus_replay DIR...  Prints "N passed, 0 failed" when every
 * input was decoded without the target aborting; an abort or a crash ends
 * the run with a non-zero status.
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * replay_file: feed one file to the target; returns 0 when it could not
 * be read (counted as a failure by the caller).
 */
static int
replay_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *data;
	long		size;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0)
		return 0;
	rewind(f);
	data = malloc(size + 1);
	if (data == NULL || fread(data, 1, size, f) != (size_t) size)
		return 0;
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 1;
}

/*
 * main: replay every regular file of every directory given.
 */
int
main(int argc, char **argv)
{
	int			passed = 0;
	int			failed = 0;

	for (int i = 1; i < argc; i++)
	{
		DIR		   *dir = opendir(argv[i]);
		struct dirent *e;

		if (dir == NULL)
		{
			fprintf(stderr, "corpus_replay: cannot open %s\n", argv[i]);
			return 2;
		}
		while ((e = readdir(dir)) != NULL)
		{
			char		path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (replay_file(path))
				passed++;
			else
			{
				fprintf(stderr, "corpus_replay: cannot read %s\n", path);
				failed++;
			}
		}
		closedir(dir);
	}
	printf("corpus replay: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
