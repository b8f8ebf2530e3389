/*
 * cron.h - 5-field cron schedules (the dialect of cron(5)) and their fire
 * times.
 *
 * Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
 * jan-dec), day of week (0-7 or sun-sat; 0 and 7 are Sunday).  Each field is
 * a comma-separated list of `*`, `N`, `N-M`, each optionally followed by
 * `/STEP`; `N/STEP` means `N-MAX/STEP`.  Names are case-insensitive and work
 * in ranges (`mon-fri`).  Macros: @yearly (@annually), @monthly, @weekly,
 * @daily (@midnight), @hourly.
 *
 * Day rule, as cron(5): when both day of month and day of week are
 * restricted (neither field starts with `*`), a day matches when EITHER
 * matches; otherwise both must (the `*` one always does).
 *
 * Times are LOCAL wall-clock times of the process's time zone (TZ, through
 * localtime_r and mktime), as with cron(8).  Around daylight-saving changes:
 * a wall-clock time that does not exist (spring forward) is skipped that
 * day; one that happens twice (fall back) fires once, at its first
 * occurrence.
 */
#ifndef ROOFLINE_CRON_H
#define ROOFLINE_CRON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "strbuf.h"

struct cron {
	uint64_t minutes; /* bit m set: minute m (0-59) matches */
	uint32_t hours;   /* bit h: hour h (0-23) */
	uint32_t mdays;   /* bit d: day of month d (1-31) */
	uint16_t months;  /* bit m: month m (1-12) */
	uint8_t wdays;    /* bit d: day of week d (0-6, Sunday 0) */
	bool mday_star;   /* the day-of-month field starts with '*' */
	bool wday_star;   /* the day-of-week field starts with '*' */
};

/*
 * Parse text into *out.  0, or -EINVAL with one reason (no location, no
 * newline) appended to err, e.g. "hour 25 is out of range 0-23".  An
 * expression that can never fire ("0 0 30 2 *") is refused as well.
 */
int cron_parse(const char *text, struct cron *out, struct strbuf *err);

/* True when the local time *tm (fields as from localtime_r) matches. */
bool cron_matches(const struct cron *c, const struct tm *tm);

/*
 * The first fire time strictly after `after` (whole minutes, local time), or
 * (time_t)-1 when there is none within the next 30 years.
 */
time_t cron_next(const struct cron *c, time_t after);

/*
 * The last fire time strictly before `before`, or (time_t)-1 when there is
 * none within the previous 30 years.
 */
time_t cron_prev(const struct cron *c, time_t before);

/*
 * The latest fire time s with from < s <= to, or (time_t)-1 when none falls
 * in that interval.  A daemon that was down from `from` (its last firing)
 * until `to` (now) fires a missed schedule once, for this slot, instead of
 * once per missed slot.
 */
time_t cron_last_slot(const struct cron *c, time_t from, time_t to);

#endif
