/* Unit tests: common/cron.c (parsing, next/previous fire times, DST). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cron.h"
#include "util.h"

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* Local time "YYYY-MM-DD HH:MM" (first occurrence when ambiguous). */
static time_t at(const char *text)
{
	struct tm tm = { 0 };

	assert_int_equal(sscanf(text, "%d-%d-%d %d:%d", &tm.tm_year, &tm.tm_mon,
				&tm.tm_mday, &tm.tm_hour, &tm.tm_min), 5);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

/* t as local "YYYY-MM-DD HH:MM" (static buffer per call site is fine). */
static const char *show(time_t t, char *buf)
{
	struct tm tm;

	if (t == (time_t)-1)
		return "never";
	localtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%d %H:%M %Z", &tm);
	return buf;
}

static struct cron parse_ok(const char *text)
{
	struct strbuf err = STRBUF_INIT;
	struct cron c;

	strbuf_init(&err);
	if (cron_parse(text, &c, &err) < 0)
		fail_msg("'%s' refused: %s", text, err.buf);
	strbuf_release(&err);
	return c;
}

static void parse_bad(const char *text, const char *want)
{
	struct strbuf err = STRBUF_INIT;
	struct cron c;

	strbuf_init(&err);
	assert_int_equal(cron_parse(text, &c, &err), -22);
	if (strcmp(err.buf, want) != 0)
		fail_msg("'%s': got '%s', want '%s'", text, err.buf, want);
	strbuf_release(&err);
}

/* cron_next(text, from) must be want (all local times). */
static void next_is(const char *text, const char *from, const char *want)
{
	struct cron c = parse_ok(text);
	char a[32], b[32];
	time_t got = cron_next(&c, at(from));
	time_t exp = at(want);

	if (got != exp)
		fail_msg("'%s' after %s: got %s, want %s", text, from,
			 show(got, a), show(exp, b));
}

static void fields_parse(void **state)
{
	struct cron c;

	(void)state;
	set_tz("UTC");
	c = parse_ok("*/15 2,14 1-3 jan-MAR mon-fri");
	assert_true(c.minutes == ((1ull << 0) | (1ull << 15) | (1ull << 30) |
				  (1ull << 45)));
	assert_int_equal(c.hours, (1 << 2) | (1 << 14));
	assert_int_equal(c.mdays, (1 << 1) | (1 << 2) | (1 << 3));
	assert_int_equal(c.months, (1 << 1) | (1 << 2) | (1 << 3));
	assert_int_equal(c.wdays, 0x3e);
	assert_false(c.mday_star);
	assert_false(c.wday_star);
	c = parse_ok("0 0 * * 7");
	assert_int_equal(c.wdays, 1);
	assert_true(c.mday_star);
	c = parse_ok("0 0 * * 5-7");
	assert_int_equal(c.wdays, 0x61);
	c = parse_ok("10/20 * * * 1/2");
	assert_true(c.minutes == ((1ull << 10) | (1ull << 30) | (1ull << 50)));
	assert_int_equal(c.wdays, (1 << 1) | (1 << 3) | (1 << 5));
	c = parse_ok("  @daily ");
	assert_true(c.minutes == 1 && c.hours == 1);
	c = parse_ok("@weekly");
	assert_int_equal(c.wdays, 1);
	c = parse_ok("@hourly");
	assert_int_equal(c.hours, 0xffffff);
	c = parse_ok("*/59 */23 */31 */12 */7");
	assert_true(c.minutes == ((1ull << 0) | (1ull << 59)));
	assert_int_equal(c.hours, (1 << 0) | (1 << 23));
	assert_int_equal(c.wdays, 1);
	c = parse_ok("0\t0  1 1 *");
	assert_int_equal(c.months, 2);
}

static void errors_say_why(void **state)
{
	(void)state;
	parse_bad("", "empty schedule");
	parse_bad("* * * *", "expected 5 fields (minute hour day-of-month month "
			     "day-of-week), not 4");
	parse_bad("* * * * * *", "expected 5 fields (minute hour day-of-month "
				 "month day-of-week), not 6");
	parse_bad("60 * * * *", "minute 60 is out of range 0-59");
	parse_bad("0 25 * * *", "hour 25 is out of range 0-23");
	parse_bad("0 0 0 * *", "day of month 0 is out of range 1-31");
	parse_bad("0 0 * 13 *", "month 13 is out of range 1-12");
	parse_bad("0 0 * * 8", "day of week 8 is out of range 0-7");
	parse_bad("0 0 * foo *", "month 'foo' is not a number or a month "
				 "name (jan-dec)");
	parse_bad("0 0 * * fry", "day of week 'fry' is not a number or a day "
				 "name (sun-sat)");
	parse_bad("x * * * *", "minute 'x' is not a number");
	parse_bad("5-1 * * * *", "minute range '5-1' runs backwards");
	parse_bad("*/0 * * * *", "minute step 0 is out of range 1-59");
	parse_bad("*/60 * * * *", "minute step 60 is out of range 1-59");
	parse_bad("*/99999999999 * * * *",
		  "minute step 99999999999 is out of range 1-59");
	parse_bad("0 */24 * * *", "hour step 24 is out of range 1-23");
	parse_bad("0 0 1 */13 *", "month step 13 is out of range 1-12");
	parse_bad("0 0 * * 1/8", "day of week step 8 is out of range 1-7");
	parse_bad("99999999999999999999 * * * *",
		  "minute 99999999999999999999 is out of range 0-59");
	parse_bad("1-99999999999 * * * *",
		  "minute 99999999999 is out of range 0-59");
	parse_bad("-1 * * * *", "minute '-1' is not a number");
	parse_bad("1--2 * * * *", "minute '-2' is not a number");
	parse_bad("5- * * * *", "minute range '5-' has no end");
	parse_bad("0 0 * -jan *", "month '-jan' is not a number or a month "
				  "name (jan-dec)");
	parse_bad("*/x * * * *", "minute step 'x' is not a number");
	parse_bad("1,,2 * * * *", "empty item in minute '1,,2'");
	parse_bad("1x * * * *", "unexpected 'x' in minute '1x'");
	parse_bad("@reboot", "unknown schedule '@reboot' (use @yearly, "
			     "@monthly, @weekly, @daily, @hourly or 5 fields)");
	parse_bad("0 0 30 2 *", "never fires: no month given has any of the "
				"days of month given");
	parse_bad("0 0 31 4,6,9,11 *", "never fires: no month given has any "
				       "of the days of month given");
}

static void next_basic(void **state)
{
	(void)state;
	set_tz("UTC");
	next_is("0 2 * * *", "2024-01-01 00:00", "2024-01-01 02:00");
	/* strictly after */
	next_is("0 2 * * *", "2024-01-01 02:00", "2024-01-02 02:00");
	next_is("* * * * *", "2024-01-01 02:00", "2024-01-01 02:01");
	next_is("*/15 * * * *", "2024-01-01 02:07", "2024-01-01 02:15");
	next_is("0 0 1 * *", "2024-01-31 12:00", "2024-02-01 00:00");
	next_is("@yearly", "2024-06-01 00:00", "2025-01-01 00:00");
	next_is("30 23 31 12 *", "2024-12-31 23:30", "2025-12-31 23:30");
	next_is("0 0 29 2 *", "2025-03-01 00:00", "2028-02-29 00:00");
	next_is("0 0 31 * *", "2024-04-01 00:00", "2024-05-31 00:00");
	/* 2024-01-01 is a Monday */
	next_is("0 9 * * mon-fri", "2024-01-05 10:00", "2024-01-08 09:00");
	next_is("0 9 * * 0", "2024-01-01 10:00", "2024-01-07 09:00");
	next_is("0 9 * * 7", "2024-01-01 10:00", "2024-01-07 09:00");
	/* 7/STEP is Sunday, not nothing (found by tests/fuzz/fuzz_cron) */
	next_is("0 9 * * 7/3", "2024-01-01 10:00", "2024-01-07 09:00");
}

static void day_or_rule(void **state)
{
	(void)state;
	set_tz("UTC");
	/* both restricted: the 13th OR a Friday (2024-01-05 is a Friday) */
	next_is("0 0 13 * fri", "2024-01-01 00:00", "2024-01-05 00:00");
	next_is("0 0 13 * fri", "2024-01-12 00:00", "2024-01-13 00:00");
	/* day of week '*': only the 13th */
	next_is("0 0 13 * *", "2024-01-01 00:00", "2024-01-13 00:00");
	/* day of month '*': only Fridays */
	next_is("0 0 * * fri", "2024-01-06 00:00", "2024-01-12 00:00");
	/* a field starting with '*' counts as '*' (both must match): odd
	 * days that are Mondays; 2024-01-01 is one, then 2024-01-15 */
	next_is("0 0 */2 * mon", "2024-01-01 00:00", "2024-01-15 00:00");
}

static void prev_and_last_slot(void **state)
{
	struct cron c;

	(void)state;
	set_tz("UTC");
	c = parse_ok("0 * * * *");
	assert_true(cron_prev(&c, at("2024-01-01 15:30")) == at("2024-01-01 15:00"));
	/* strictly before */
	assert_true(cron_prev(&c, at("2024-01-01 15:00")) == at("2024-01-01 14:00"));
	assert_true(cron_prev(&c, at("2024-01-01 15:00") + 1) ==
		    at("2024-01-01 15:00"));
	/* down from 10:00 to 15:30: fire once, for 15:00 */
	assert_true(cron_last_slot(&c, at("2024-01-01 10:00"),
				   at("2024-01-01 15:30")) == at("2024-01-01 15:00"));
	/* the slot at `to` counts; the one at `from` does not */
	assert_true(cron_last_slot(&c, at("2024-01-01 10:00"),
				   at("2024-01-01 11:00")) == at("2024-01-01 11:00"));
	assert_true(cron_last_slot(&c, at("2024-01-01 10:00"),
				   at("2024-01-01 10:59")) == (time_t)-1);
	assert_true(cron_last_slot(&c, at("2024-01-01 10:00"),
				   at("2024-01-01 09:00")) == (time_t)-1);
	c = parse_ok("0 2 29 2 *");
	assert_true(cron_prev(&c, at("2027-01-01 00:00")) == at("2024-02-29 02:00"));
	c = parse_ok("0 0 1 jan *");
	assert_true(cron_prev(&c, at("2024-01-01 00:00")) == at("2023-01-01 00:00"));
	/* long downtime with a per-minute schedule is still one answer */
	c = parse_ok("* * * * *");
	assert_true(cron_last_slot(&c, at("2020-01-01 00:00"),
				   at("2024-01-01 00:00") + 30) ==
		    at("2024-01-01 00:00"));
}

static void next_and_prev_agree(void **state)
{
	static const char *const exprs[] = {
		"*/7 3-5 * * *", "0 0 13 * fri", "15 10 1,15 * *",
		"0 12 * feb,aug sat", "59 23 31 * *",
	};
	time_t t = at("2024-01-01 00:00");

	(void)state;
	set_tz("UTC");
	for (size_t i = 0; i < ARRAY_SIZE(exprs); i++) {
		struct cron c = parse_ok(exprs[i]);
		time_t s = t;

		for (int k = 0; k < 50; k++) {
			time_t n = cron_next(&c, s);
			struct tm tm;

			assert_true(n > s);
			localtime_r(&n, &tm);
			assert_true(cron_matches(&c, &tm));
			assert_true(cron_prev(&c, n + 1) == n);
			assert_true(cron_prev(&c, n) <= s);
			s = n;
		}
	}
}

static bool have_zone(const char *zone)
{
	char *path = xasprintf("/usr/share/zoneinfo/%s", zone);
	bool ok = access(path, R_OK) == 0;

	free(path);
	return ok;
}

static void daylight_saving(void **state)
{
	struct cron c;
	time_t t;

	(void)state;
	if (!have_zone("Europe/Berlin"))
		skip();
	set_tz("Europe/Berlin");
	/* 2024-03-31: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist */
	next_is("30 2 * * *", "2024-03-30 03:00", "2024-04-01 02:30");
	next_is("30 3 * * *", "2024-03-31 00:00", "2024-03-31 03:30");
	next_is("0 * * * *", "2024-03-31 01:30", "2024-03-31 03:00");
	c = parse_ok("30 2 * * *");
	assert_true(cron_prev(&c, at("2024-03-31 12:00")) == at("2024-03-30 02:30"));
	/* 2024-10-27: 03:00 CEST falls back to 02:00 CET; 02:xx happens
	 * twice and fires once, the first time (00:30 UTC) */
	t = cron_next(&c, at("2024-10-27 00:00"));
	assert_true(t == 1729989000); /* 2024-10-27 00:30:00 UTC */
	assert_true(cron_next(&c, t) == at("2024-10-28 02:30"));
	assert_true(cron_prev(&c, at("2024-10-27 12:00")) == t);
	/* every 15 minutes across the repeated hour: no slot twice */
	c = parse_ok("*/15 * * * *");
	t = 1729986600;                     /* 01:50 CEST = 23:50 UTC */
	{
		static const time_t want[] = {
			1729987200, 1729988100, 1729989000, 1729989900, /* 02:xx CEST */
			1729994400,                                     /* 03:00 CET */
		};

		for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
			t = cron_next(&c, t);
			assert_true(t == want[i]);
		}
		/* and backwards: from 03:00 CET the slot before is 02:45 CEST */
		assert_true(cron_prev(&c, want[4]) == want[3]);
	}
	set_tz("UTC");
}

/* Every slot in [from, to) by brute force: each real minute that matches
 * and is not the second pass of a repeated wall-clock minute. */
static size_t brute_slots(const struct cron *c, time_t from, time_t to,
			  time_t *out, size_t max)
{
	size_t n = 0;

	for (time_t t = from; t < to && n < max; t += 60) {
		struct tm tm, e;
		bool repeat = false;

		localtime_r(&t, &tm);
		for (int shift = 1800; shift <= 3600; shift += 1800) {
			time_t p = t - shift;

			localtime_r(&p, &e);
			repeat |= e.tm_mday == tm.tm_mday && e.tm_hour == tm.tm_hour &&
				  e.tm_min == tm.tm_min;
		}
		if (cron_matches(c, &tm) && !repeat)
			out[n++] = t;
	}
	return n;
}

/* cron_next and cron_prev walk exactly the brute-force slots. */
static void walk_matches_brute_force(const char *zone, const char *from_text,
				     int days)
{
	static const char *const exprs[] = {
		"* * * * *", "*/15 * * * *", "30 2 * * *", "0 * * * *",
		"59 1,2 * * *", "0 3 * * *", "45 1-3 * * *",
	};
	static time_t want[5000];

	set_tz(zone);
	for (size_t i = 0; i < ARRAY_SIZE(exprs); i++) {
		struct cron c = parse_ok(exprs[i]);
		time_t from = at(from_text), to = from + days * 86400, t;
		size_t n = brute_slots(&c, from, to, want, ARRAY_SIZE(want));

		t = from - 60;
		for (size_t k = 0; k < n; k++) {
			t = cron_next(&c, t);
			if (t != want[k])
				fail_msg("%s '%s': next slot %zu is %ld, want %ld",
					 zone, exprs[i], k, (long)t, (long)want[k]);
		}
		assert_true(n == 0 || cron_next(&c, t) >= to);
		t = to;
		for (size_t k = n; k-- > 0;) {
			t = cron_prev(&c, t);
			if (t != want[k])
				fail_msg("%s '%s': prev slot %zu is %ld, want %ld",
					 zone, exprs[i], k, (long)t, (long)want[k]);
		}
	}
	set_tz("UTC");
}

static void dst_brute_force(void **state)
{
	(void)state;
	if (!have_zone("Europe/Berlin") || !have_zone("Australia/Lord_Howe"))
		skip();
	walk_matches_brute_force("Europe/Berlin", "2024-03-30 00:00", 3);
	walk_matches_brute_force("Europe/Berlin", "2024-10-26 00:00", 3);
	walk_matches_brute_force("America/New_York", "2024-11-02 00:00", 3);
	/* half-hour shifts */
	walk_matches_brute_force("Australia/Lord_Howe", "2024-04-06 00:00", 3);
	walk_matches_brute_force("Australia/Lord_Howe", "2024-10-05 00:00", 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields_parse),
		cmocka_unit_test(errors_say_why),
		cmocka_unit_test(next_basic),
		cmocka_unit_test(day_or_rule),
		cmocka_unit_test(prev_and_last_slot),
		cmocka_unit_test(next_and_prev_agree),
		cmocka_unit_test(daylight_saving),
		cmocka_unit_test(dst_brute_force),
	};
	return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
