/*
 * fuzz_records.c - the records format (common/records.h): records.tsv and
 * params.tsv as the daemon and roofline-job read them.
 *
 * The input goes through the readers (a buffer, a stream, a stream within
 * limits taken from the input's first bytes, one line) and every record
 * that parses is written back with records_format() and parsed again: it
 * must come back field for field (abort otherwise).  The limited reader
 * must hand on no more records than its limit and say why it failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "records.h"
#include "strbuf.h"

/* Format the record and parse it back; abort when it differs. */
static void round_trip(const char *kind, const struct rl_field *f)
{
	static struct rl_field again[RECORDS_MAX_FIELDS];
	struct strbuf sb = STRBUF_INIT;
	const char *kind2;
	size_t col = 0;
	int n;

	strbuf_init(&sb);
	if (records_format(&sb, kind, f) < 0)
		abort(); /* what parses must format */
	sb.buf[sb.len - 1] = '\0'; /* the LF */
	n = records_parse_line(sb.buf, &kind2, again, RECORDS_MAX_FIELDS, &col);
	if (n < 0 || strcmp(kind, kind2) != 0)
		abort();
	for (int i = 0; i < n; i++)
		if (!f[i].key || strcmp(f[i].key, again[i].key) != 0 ||
		    strcmp(f[i].value, again[i].value) != 0)
			abort();
	if (f[n].key)
		abort();
	strbuf_release(&sb);
}

static int each(void *arg, const char *kind, const struct rl_field *f)
{
	(*(size_t *)arg)++;
	round_trip(kind, f);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf err = STRBUF_INIT;
	struct rl_field few[4];
	size_t n = 0, col = 0;
	const char *kind;
	char *text = fuzz_text(data, size);
	FILE *in;

	strbuf_init(&err);
	records_each_in(text, "fuzz", NULL, each, &n, &err);
	free(text);

	text = fuzz_text(data, size);
	in = size ? fmemopen(text, size, "r") : NULL;
	if (in) {
		strbuf_reset(&err);
		records_each_stream(in, "fuzz", "kernel", each, &n, &err);
		fclose(in);
	}
	free(text);

	/* small limits, from the input's first bytes */
	text = fuzz_text(data, size);
	in = size > 3 ? fmemopen(text + 3, size - 3, "r") : NULL;
	if (in) {
		const struct records_limits lim = {
			.max_line = data[0], .max_records = data[1] % 16,
			.max_bytes = (size_t)data[2] * 4,
		};
		size_t seen = 0;
		int rc;

		strbuf_reset(&err);
		rc = records_each_limited(in, "fuzz", NULL, &lim, each, &seen,
					  &err);
		if (lim.max_records && seen > lim.max_records)
			abort();
		if (rc < 0 && err.len == 0)
			abort(); /* every failure says why */
		fclose(in);
	}
	free(text);

	text = fuzz_text(data, size);
	text[strcspn(text, "\n")] = '\0';
	records_parse_line(text, &kind, few, 4, &col);
	free(text);
	strbuf_release(&err);
	return 0;
}
