/* cron.c - see cron.h. */
#include "cron.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* How far cron_next and cron_prev search before giving up.  Long enough for
 * "29 Feb that is a Sunday" (gaps of up to 40 years around 2100). */
#define CRON_HORIZON_YEARS 60

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec", NULL,
};
static const char *const day_names[] = {
	"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL,
};

struct field_spec {
	const char *what;            /* for messages */
	int min, max;
	const char *const *names;    /* names[i] means min + i, or NULL */
};

static const struct field_spec specs[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day of month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day of week", 0, 7, day_names },
};

static const struct {
	const char *name;
	const char *expansion;
} macros[] = {
	{ "@yearly", "0 0 1 1 *" },  { "@annually", "0 0 1 1 *" },
	{ "@monthly", "0 0 1 * *" }, { "@weekly", "0 0 * * 0" },
	{ "@daily", "0 0 * * *" },   { "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* Read the digits at *s as a number, capped at 1000 (no overflow: any
 * value that large is out of every field's range). */
static int take_digits(const char **s)
{
	int v = 0;

	while (isdigit((unsigned char)**s)) {
		if (v < 1000)
			v = v * 10 + (**s - '0');
		(*s)++;
	}
	return v;
}

/* Read a number or a name of spec at *p; advance *p.  0 or -EINVAL. */
static int take_value(const struct field_spec *spec, const char **p, int *out,
		      struct strbuf *err)
{
	const char *s = *p;
	size_t len;
	int v;

	if (isdigit((unsigned char)*s)) {
		v = take_digits(&s);
		if (v < spec->min || v > spec->max) {
			strbuf_addf(err, "%s %.*s is out of range %d-%d", spec->what,
				    (int)(s - *p), *p, spec->min, spec->max);
			return -EINVAL;
		}
		*out = v;
		*p = s;
		return 0;
	}
	for (int i = 0; spec->names && spec->names[i]; i++) {
		if (strncasecmp(s, spec->names[i], 3) == 0 &&
		    !isalpha((unsigned char)s[3])) {
			*out = spec->min + i;
			*p = s + 3;
			return 0;
		}
	}
	/* quote what stands here: a leading '-' is part of it ("-1") */
	len = *s == '-' ? 1 + strcspn(s + 1, ",-/") : strcspn(s, ",-/");
	strbuf_addf(err, "%s '%.*s' is not a number%s", spec->what, (int)len, s,
		    spec->names == month_names ? " or a month name (jan-dec)" :
		    spec->names == day_names ? " or a day name (sun-sat)" : "");
	return -EINVAL;
}

/* Parse "/STEP" at *p when present: 1 up to the field's largest value (a
 * larger step is a typo: it could only ever match the first value).  0 or
 * -EINVAL. */
static int take_step(const struct field_spec *spec, const char **p, int *step,
		     struct strbuf *err)
{
	const char *s = *p, *digits;
	int v;

	*step = 1;
	if (*s != '/')
		return 0;
	digits = ++s;
	if (!isdigit((unsigned char)*s)) {
		strbuf_addf(err, "%s step '%.*s' is not a number", spec->what,
			    (int)strcspn(s, ","), s);
		return -EINVAL;
	}
	v = take_digits(&s);
	if (v < 1 || v > spec->max) {
		strbuf_addf(err, "%s step %.*s is out of range 1-%d", spec->what,
			    (int)(s - digits), digits, spec->max);
		return -EINVAL;
	}
	*step = v;
	*p = s;
	return 0;
}

/* Parse one list item ("*", "N", "N-M", each with "/STEP") into *bits. */
static int parse_item(const struct field_spec *spec, const char *item,
		      uint64_t *bits, struct strbuf *err)
{
	const char *p = item;
	int lo, hi, step;

	if (*p == '*') {
		lo = spec->min;
		hi = spec->names == day_names ? 6 : spec->max;
		p++;
	} else {
		if (take_value(spec, &p, &lo, err) < 0)
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!*p || *p == '/') {
				strbuf_addf(err, "%s range '%s' has no end",
					    spec->what, item);
				return -EINVAL;
			}
			if (take_value(spec, &p, &hi, err) < 0)
				return -EINVAL;
			if (hi < lo) {
				strbuf_addf(err, "%s range '%s' runs backwards",
					    spec->what, item);
				return -EINVAL;
			}
		} else if (*p == '/') {
			/* N/STEP: from N to the end (Saturday for days;
			 * 7/STEP is Sunday alone, not an empty range) */
			hi = spec->names == day_names ? (lo > 6 ? lo : 6)
						      : spec->max;
		}
	}
	if (take_step(spec, &p, &step, err) < 0)
		return -EINVAL;
	if (*p) {
		strbuf_addf(err, "unexpected '%s' in %s '%s'", p, spec->what, item);
		return -EINVAL;
	}
	for (int v = lo; v <= hi; v += step)
		*bits |= (uint64_t)1 << (spec->names == day_names && v == 7 ? 0 : v);
	return 0;
}

/* Parse one field (a comma-separated list) into *bits. */
static int parse_field(const struct field_spec *spec, const char *field,
		       uint64_t *bits, struct strbuf *err)
{
	const char *p = field;
	int rc = 0;

	*bits = 0;
	while (!rc) {
		size_t n = strcspn(p, ",");
		char *item = xstrndup(p, n);

		if (!n) {
			strbuf_addf(err, "empty item in %s '%s'", spec->what, field);
			rc = -EINVAL;
		} else {
			rc = parse_item(spec, item, bits, err);
		}
		free(item);
		if (!p[n])
			break;
		p += n + 1;
	}
	return rc;
}

static int days_in_month_max(int month)
{
	static const int days[] = { 31, 29, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31 };

	return days[month - 1];
}

/* True when some month of c has some day of month of c (29 Feb counts). */
static bool dates_possible(const struct cron *c)
{
	for (int m = 1; m <= 12; m++) {
		if (!(c->months >> m & 1))
			continue;
		for (int d = 1; d <= days_in_month_max(m); d++)
			if (c->mdays >> d & 1)
				return true;
	}
	return false;
}

/* Split text into exactly 5 whitespace-separated fields (copies in f). */
static int split_fields(const char *text, char *f[5], struct strbuf *err)
{
	const char *p = text;
	int n = 0;

	for (;;) {
		size_t len;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		len = strcspn(p, " \t\n\r\f\v");
		if (n < 5)
			f[n] = xstrndup(p, len);
		n++;
		p += len;
	}
	if (n == 5)
		return 0;
	for (int i = 0; i < n && i < 5; i++)
		free(f[i]);
	if (n == 0)
		strbuf_addstr(err, "empty schedule");
	else
		strbuf_addf(err,
			    "expected 5 fields (minute hour day-of-month month "
			    "day-of-week), not %d", n);
	return -EINVAL;
}

static const char *expand_macro(const char *text, struct strbuf *err)
{
	while (isspace((unsigned char)*text))
		text++;
	if (*text != '@')
		return text;
	for (size_t i = 0; i < ARRAY_SIZE(macros); i++) {
		size_t n = strlen(macros[i].name);

		if (strncasecmp(text, macros[i].name, n) == 0 &&
		    text[n + strspn(text + n, " \t")] == '\0')
			return macros[i].expansion;
	}
	strbuf_addf(err, "unknown schedule '%s' (use @yearly, @monthly, "
			 "@weekly, @daily, @hourly or 5 fields)", text);
	return NULL;
}

int cron_parse(const char *text, struct cron *out, struct strbuf *err)
{
	uint64_t bits[5] = { 0 };
	char *f[5];
	int rc = 0;

	text = expand_macro(text, err);
	if (!text || split_fields(text, f, err) < 0)
		return -EINVAL;
	for (int i = 0; i < 5 && !rc; i++)
		rc = parse_field(&specs[i], f[i], &bits[i], err);
	if (!rc) {
		memset(out, 0, sizeof(*out));
		out->minutes = bits[0];
		out->hours = (uint32_t)bits[1];
		out->mdays = (uint32_t)bits[2];
		out->months = (uint16_t)bits[3];
		out->wdays = (uint8_t)bits[4];
		out->mday_star = f[2][0] == '*';
		out->wday_star = f[4][0] == '*';
		if (!dates_possible(out)) {
			strbuf_addstr(err, "never fires: no month given has any "
					   "of the days of month given");
			rc = -EINVAL;
		}
	}
	for (int i = 0; i < 5; i++)
		free(f[i]);
	return rc;
}

static bool day_matches(const struct cron *c, const struct tm *tm)
{
	bool dom = c->mdays >> tm->tm_mday & 1;
	bool dow = c->wdays >> tm->tm_wday & 1;

	if (c->mday_star || c->wday_star)
		return dom && dow;
	return dom || dow;
}

bool cron_matches(const struct cron *c, const struct tm *tm)
{
	return (c->months >> (tm->tm_mon + 1) & 1) && day_matches(c, tm) &&
	       (c->hours >> tm->tm_hour & 1) &&
	       (c->minutes >> tm->tm_min & 1);
}

static bool same_minute(const struct tm *a, const struct tm *b)
{
	return a->tm_year == b->tm_year && a->tm_mon == b->tm_mon &&
	       a->tm_mday == b->tm_mday && a->tm_hour == b->tm_hour &&
	       a->tm_min == b->tm_min;
}

/* When t's wall-clock minute already happened once (the repeated hour at the
 * end of summer time), the instant it first happened; else -1. */
static time_t earlier_twin(time_t t, const struct tm *tm)
{
	static const int shifts[] = { 3600, 1800 };

	for (size_t i = 0; i < ARRAY_SIZE(shifts); i++) {
		time_t e = t - shifts[i];
		struct tm etm;

		if (localtime_r(&e, &etm) && same_minute(&etm, tm))
			return e;
	}
	return (time_t)-1;
}

static time_t floor_minute(time_t t)
{
	return t - ((t % 60) + 60) % 60;
}

/*
 * Turn the edited *tm back into a time after prev, and *tm into that time's
 * fields.  When the edit lands in a DST gap and mktime moves it backwards,
 * step one real minute instead, so the search always moves forward; when it
 * lands on the second pass of a repeated hour, take the first pass.
 */
static time_t move_forward(struct tm *tm, time_t prev)
{
	time_t t, twin;

	tm->tm_sec = 0;
	tm->tm_isdst = -1;
	t = mktime(tm);
	if (t == (time_t)-1 || t <= prev)
		t = prev + 60;
	localtime_r(&t, tm);
	twin = earlier_twin(t, tm);
	if (twin != (time_t)-1 && twin > prev)
		t = twin;
	localtime_r(&t, tm);
	return t;
}

/* Minutes of wall-clock time, comparable within a few days. */
static long wall_minutes(const struct tm *tm)
{
	return (((long)tm->tm_year * 400 + tm->tm_yday) * 24 + tm->tm_hour) * 60 +
	       tm->tm_min;
}

/*
 * The same going back.  One real minute before the end of a repeated hour
 * (02:00 CET back to 02:59 CEST) the wall clock jumps forward, which no edit
 * of *tm can express: take that minute, so the first pass is searched too.
 */
static time_t move_backward(struct tm *tm, time_t prev)
{
	struct tm ptm, stm;
	time_t t, step = prev - 60;

	tm->tm_sec = 0;
	tm->tm_isdst = -1;
	t = mktime(tm);
	localtime_r(&prev, &ptm);
	localtime_r(&step, &stm);
	if (t == (time_t)-1 || t >= prev ||
	    wall_minutes(&stm) >= wall_minutes(&ptm))
		t = step;
	localtime_r(&t, tm);
	return t;
}

time_t cron_next(const struct cron *c, time_t after)
{
	time_t t = floor_minute(after) + 60;
	struct tm tm;
	int last_year;

	if (!localtime_r(&t, &tm))
		return (time_t)-1;
	last_year = tm.tm_year + CRON_HORIZON_YEARS;
	while (tm.tm_year <= last_year) {
		if (!(c->months >> (tm.tm_mon + 1) & 1)) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = 0;
		} else if (!day_matches(c, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = 0;
		} else if (!(c->hours >> tm.tm_hour & 1)) {
			tm.tm_hour++;
			tm.tm_min = 0;
		} else if (!(c->minutes >> tm.tm_min & 1) ||
			   earlier_twin(t, &tm) != (time_t)-1) {
			tm.tm_min++;
		} else {
			return t;
		}
		t = move_forward(&tm, t);
	}
	return (time_t)-1;
}

time_t cron_prev(const struct cron *c, time_t before)
{
	time_t t = floor_minute(before - 1);
	struct tm tm;
	int first_year;

	if (!localtime_r(&t, &tm))
		return (time_t)-1;
	first_year = tm.tm_year - CRON_HORIZON_YEARS;
	while (tm.tm_year >= first_year) {
		if (!(c->months >> (tm.tm_mon + 1) & 1)) {
			tm.tm_mday = 0; /* the last day of the month before */
			tm.tm_hour = 23;
			tm.tm_min = 59;
		} else if (!day_matches(c, &tm)) {
			tm.tm_mday--;
			tm.tm_hour = 23;
			tm.tm_min = 59;
		} else if (!(c->hours >> tm.tm_hour & 1)) {
			tm.tm_hour--;
			tm.tm_min = 59;
		} else if (!(c->minutes >> tm.tm_min & 1) ||
			   earlier_twin(t, &tm) != (time_t)-1) {
			tm.tm_min--;
		} else {
			return t;
		}
		t = move_backward(&tm, t);
	}
	return (time_t)-1;
}

time_t cron_last_slot(const struct cron *c, time_t from, time_t to)
{
	time_t s;

	if (to <= from)
		return (time_t)-1;
	s = cron_prev(c, to + 1);
	return s != (time_t)-1 && s > from ? s : (time_t)-1;
}
