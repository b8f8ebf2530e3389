/*
 * fuzz_exit_record.c - an attempt's exit.tsv as the daemon reads it
 * (job_exit_parse(), common/job_host.h): the text a user can leave in the
 * attempt directory they own.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "job_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_exit ex;
	char *text = fuzz_text(data, size);

	if (job_exit_parse(text, "exit.tsv", &ex) == 0) {
		/* what the daemon then stores: C strings within their arrays */
		if (strnlen(ex.node, sizeof(ex.node)) == sizeof(ex.node) ||
		    strnlen(ex.error, sizeof(ex.error)) == sizeof(ex.error))
			abort();
	}
	free(text);
	return 0;
}
