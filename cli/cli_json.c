/* cli_json.c - see cli_json.h.  The only file that includes json-c. */
#include "cli_json.h"

#include <errno.h>
#include <json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct json_object *cli_json_object(void)
{
	return json_object_new_object();
}

struct json_object *cli_json_array(void)
{
	return json_object_new_array();
}

struct json_object *cli_json_string(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

struct json_object *cli_json_int(long long v)
{
	return json_object_new_int64(v);
}

struct json_object *cli_json_bool(bool v)
{
	return json_object_new_boolean(v);
}

struct json_object *cli_json_typed(const char *text, enum db_type type)
{
	long long l;
	double d;
	char *end;

	if (!text)
		return NULL;
	switch (type) {
	case DB_TYPE_INT:
		errno = 0;
		l = strtoll(text, &end, 10);
		if (*text && !*end && !errno)
			return json_object_new_int64(l);
		break;
	case DB_TYPE_FLOAT:
		/* "NaN" and "Infinity" parse but are no JSON numbers; the
		 * database's digits are printed as they are (no 0.1 turning
		 * into 0.10000000000000001). */
		if (util_parse_double(text, &d) == 0 && isfinite(d))
			return json_object_new_double_s(d, text);
		break;
	case DB_TYPE_BOOL:
		if (!strcmp(text, "t") || !strcmp(text, "f"))
			return json_object_new_boolean(text[0] == 't');
		break;
	case DB_TYPE_TEXT:
		break;
	}
	return json_object_new_string(text);
}

struct json_object *cli_json_row(const struct db_result *r, int row)
{
	struct json_object *o = json_object_new_object();

	for (int c = 0; c < db_columns(r); c++)
		json_object_object_add(o, db_column_name(r, c),
				       cli_json_typed(db_value(r, row, c),
						      db_column_type(r, c)));
	return o;
}

struct json_object *cli_json_rows(const struct db_result *r)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < db_rows(r); i++)
		json_object_array_add(a, cli_json_row(r, i));
	return a;
}

struct json_object *cli_json_parse(const char *text)
{
	return text ? json_tokener_parse(text) : NULL;
}

void cli_json_set(struct json_object *obj, const char *key,
		  struct json_object *value)
{
	json_object_object_add(obj, key, value);
}

struct json_object *cli_json_array_at(struct json_object *obj, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(obj, key, &v) ? v : NULL;
}

void cli_json_append(struct json_object *array, struct json_object *value)
{
	json_object_array_add(array, value);
}

int cli_json_print(struct json_object *doc, bool pretty)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			    : JSON_C_TO_STRING_PLAIN);
	const char *text = json_object_to_json_string_ext(doc, flags);

	if (!text || puts(text) == EOF || fflush(stdout) == EOF)
		return -EIO;
	return 0;
}

void cli_json_free(struct json_object *v)
{
	json_object_put(v);
}
