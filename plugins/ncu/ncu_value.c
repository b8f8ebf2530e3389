/*
 * ncu_value.c - numbers, missing values and units as ncu prints them (see
 * ncu_value.h).
 */
#include "ncu_value.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

bool ncu_value_is_number(const char *s, bool *has_commas)
{
	const char *d;
	size_t group;

	*has_commas = false;
	if (*s == '-' || *s == '+')
		s++;
	d = s;
	group = 0;
	while ((*s >= '0' && *s <= '9') || *s == ',') {
		if (*s == ',') {
			if (group == 0 || (*has_commas && group != 3) ||
			    (!*has_commas && group > 3))
				return false;
			*has_commas = true;
			group = 0;
		} else {
			group++;
		}
		s++;
	}
	if (s == d || (*has_commas && group != 3))
		return false;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

void ncu_value_drop_commas(char *s)
{
	char *w = s;

	for (; *s; s++)
		if (*s != ',')
			*w++ = *s;
	*w = '\0';
}

bool ncu_value_is_missing(const char *v)
{
	return !*v || strcmp(v, "n/a") == 0 || strcmp(v, "nan") == 0 ||
	       strcmp(v, "-nan") == 0 || strcmp(v, "inf") == 0 ||
	       strcmp(v, "-inf") == 0;
}

const char *ncu_value_clean(char *v)
{
	bool commas;

	if (!v || ncu_value_is_missing(v))
		return NULL;
	if (ncu_value_is_number(v, &commas) && commas)
		ncu_value_drop_commas(v);
	return v;
}

int ncu_value_parse(const char *text, double *out)
{
	char *end;

	if (!text || !*text)
		return -EINVAL;
	errno = 0;
	*out = strtod(text, &end);
	if (*end || errno == ERANGE)
		return -EINVAL;
	return 0;
}

/* ---- units -------------------------------------------------------------- */

static const struct {
	const char *unit;
	const char *base;
	double scale;
} unit_table[] = {
	{ "byte", "byte", 1 },        { "Kbyte", "byte", 1e3 },
	{ "Mbyte", "byte", 1e6 },     { "Gbyte", "byte", 1e9 },
	{ "Tbyte", "byte", 1e12 },    { "ns", "ns", 1 },
	{ "nsecond", "ns", 1 },       { "us", "ns", 1e3 },
	{ "usecond", "ns", 1e3 },     { "ms", "ns", 1e6 },
	{ "msecond", "ns", 1e6 },     { "s", "ns", 1e9 },
	{ "second", "ns", 1e9 },      { "hz", "hz", 1 },
	{ "Khz", "hz", 1e3 },         { "Mhz", "hz", 1e6 },
	{ "Ghz", "hz", 1e9 },         { "byte/second", "byte/second", 1 },
	{ "Kbyte/second", "byte/second", 1e3 },
	{ "Mbyte/second", "byte/second", 1e6 },
	{ "Gbyte/second", "byte/second", 1e9 },
	{ "Tbyte/second", "byte/second", 1e12 },
	{ "cycle", "cycle", 1 },      { "Kcycle", "cycle", 1e3 },
	{ "Mcycle", "cycle", 1e6 },   { "Gcycle", "cycle", 1e9 },
	{ "inst", "inst", 1 },        { "Kinst", "inst", 1e3 },
	{ "Minst", "inst", 1e6 },     { "Ginst", "inst", 1e9 },
};

int ncu_value_to_base(const char *unit, const char *value, double *out,
		      const char **base)
{
	char tmp[128];
	bool commas;
	size_t i;

	if (strlen(value) >= sizeof(tmp))
		return -EINVAL;
	strcpy(tmp, value);
	if (!ncu_value_is_number(tmp, &commas))
		return -EINVAL;
	if (commas)
		ncu_value_drop_commas(tmp);
	if (ncu_value_parse(tmp, out))
		return -EINVAL;
	*base = unit ? unit : "";
	for (i = 0; unit && i < sizeof(unit_table) / sizeof(unit_table[0]); i++) {
		if (strcmp(unit, unit_table[i].unit) != 0)
			continue;
		*base = unit_table[i].base;
		if (unit_table[i].scale == 1)
			return 0;
		*out *= unit_table[i].scale;
		return 1;
	}
	return 0;
}
