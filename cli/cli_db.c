/* cli_db.c - see cli_db.h. */
#include "cli_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct db *cli_db_connect(const char *cmd)
{
	struct strbuf err = STRBUF_INIT;
	const char *conninfo = getenv("ROOFLINE_DB");
	struct db *db;

	strbuf_init(&err);
	db = db_connect(conninfo ? conninfo : "", &err);
	if (!db)
		fprintf(stderr, "roofline %s: %s\n", cmd, err.buf);
	strbuf_release(&err);
	return db;
}

long cli_run_id(const char *cmd, const char *text)
{
	long id;

	if (util_parse_long(text, &id) < 0 || id <= 0) {
		fprintf(stderr, "roofline %s: '%s' is not a run id\n", cmd, text);
		return -1;
	}
	return id;
}

void cli_csv_field(const char *v)
{
	if (!strpbrk(v, ",\"\n\r")) {
		fputs(v, stdout);
		return;
	}
	putchar('"');
	for (; *v; v++) {
		if (*v == '"')
			putchar('"');
		putchar(*v);
	}
	putchar('"');
}
