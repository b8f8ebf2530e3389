/*
 * cli_json.h - the JSON documents `roofline ... --json` prints (json-c).
 *
 * The only file that includes json-c's headers is cli_json.c; callers hold
 * values as struct json_object pointers and never look inside.  A value
 * added to an object or an array belongs to it from then on: freeing the
 * document frees everything in it.  Keys and shapes: docs/json.md.
 */
#ifndef ROOFLINE_CLI_JSON_H
#define ROOFLINE_CLI_JSON_H

#include <stdbool.h>

#include "db.h"

struct json_object;

/* A new empty object / array; caller frees (cli_json_free) or hands it to
 * a container. */
struct json_object *cli_json_object(void);
struct json_object *cli_json_array(void);

/* A string (NULL gives JSON null) / an integer / a boolean. */
struct json_object *cli_json_string(const char *s);
struct json_object *cli_json_int(long long v);
struct json_object *cli_json_bool(bool v);

/* A value from a field's text as its column type says: integers and finite
 * floats as JSON numbers (floats written with the database's own digits),
 * booleans ("t"/"f") as true/false, SQL NULL as null, anything else as a
 * string; text that does not parse as the type says becomes a string.
 * Caller owns the value. */
struct json_object *cli_json_typed(const char *text, enum db_type type);

/* Row `row` of r as an object: one key per column, named as the column
 * (its alias in the query), value as cli_json_typed.  Caller owns it. */
struct json_object *cli_json_row(const struct db_result *r, int row);

/* Every row of r as an array of cli_json_row objects.  Caller owns it. */
struct json_object *cli_json_rows(const struct db_result *r);

/* Parse JSON text (e.g. a jsonb column); NULL when it is not JSON.  Caller
 * owns the value. */
struct json_object *cli_json_parse(const char *text);

/* Set obj[key] = value; takes ownership of value (NULL: JSON null). */
void cli_json_set(struct json_object *obj, const char *key,
		  struct json_object *value);

/* The value under key in obj (e.g. an array to append to); borrowed from
 * obj, NULL when there is none. */
struct json_object *cli_json_array_at(struct json_object *obj, const char *key);

/* Append value to the array; takes ownership of value. */
void cli_json_append(struct json_object *array, struct json_object *value);

/* Print doc to stdout as one document (indented when pretty), newline at
 * the end.  0, or -EIO when stdout failed.  Borrows doc. */
int cli_json_print(struct json_object *doc, bool pretty);

/* Free a value and everything in it; NULL is fine. */
void cli_json_free(struct json_object *v);

#endif
