/*
 * fuzz_exit_record.c - an attempt's exit.tsv as the daemon reads it
 * (job_exit_parse(), common/job_host.h): the text a user can leave in the
 * attempt directory they own.  What it gives back must be storable as it is
 * (common/utf8.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "job_host.h"
#include "utf8.h"

static bool storable(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	if (n == size || !utf8_valid(s, n))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_exit ex;
	char *text = fuzz_text(data, size);

	if (job_exit_parse(text, "exit.tsv", &ex) == 0) {
		/* what the daemon then stores: terminated, well-formed UTF-8
		 * without control characters, times PostgreSQL takes */
		if (!storable(ex.node, sizeof(ex.node)) ||
		    !storable(ex.error, sizeof(ex.error)) ||
		    ex.started < 0 || ex.started > JOB_EXIT_TIME_MAX ||
		    ex.ended < 0 || ex.ended > JOB_EXIT_TIME_MAX)
			abort();
	}
	free(text);
	return 0;
}
