/*
 * fuzz_cron.c - cron schedules (common/cron.h), from a pipeline's
 * `schedule:`; a parsed schedule is asked for its fire times around a fixed
 * instant in a zone with daylight-saving changes.
 */
#include <stdlib.h>
#include <time.h>

#include "cron.h"
#include "harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const time_t now = 1774744200; /* 2026-03-29 02:30 CEST: a spring forward */
	struct strbuf err = STRBUF_INIT;
	struct cron c;
	char *text = fuzz_text(data, size);

	strbuf_init(&err);
	if (cron_parse(text, &c, &err) == 0) {
		time_t next = cron_next(&c, now), prev = cron_prev(&c, now);

		/* parse refuses what never fires */
		if (next == (time_t)-1 && prev == (time_t)-1)
			abort();
		if (next != (time_t)-1 && next <= now)
			abort();
		if (prev != (time_t)-1 && prev >= now)
			abort();
		cron_last_slot(&c, now - 86400 * 40, now);
	}
	strbuf_release(&err);
	free(text);
	return 0;
}
