/* cli_conf.c - see cli_conf.h. */
#include "cli_conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#ifndef ROOFLINE_CLIENT_CONFIG_FILE
#define ROOFLINE_CLIENT_CONFIG_FILE "/etc/rooflined/roofline.conf"
#endif

/* The variables a line may set, NULL-terminated (util_did_you_mean). */
static const char *const names[] = {
	"PGHOST", "PGPORT", "PGDATABASE", "SLURM_CONF", NULL,
};
#define N_NAMES (ARRAY_SIZE(names) - 1)

const char *cli_conf_file(void)
{
	const char *env = getenv("ROOFLINE_CONF");

	return env ? env : ROOFLINE_CLIENT_CONFIG_FILE;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int name_index(const char *s, size_t len)
{
	for (size_t i = 0; i < N_NAMES; i++)
		if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
			return (int)i;
	return -1;
}

static void add_known(struct strbuf *err)
{
	strbuf_addstr(err, " (one of");
	for (size_t i = 0; i < N_NAMES; i++)
		strbuf_addf(err, "%s %s", i ? "," : "", names[i]);
	strbuf_addch(err, ')');
}

/*
 * One line (its newline removed): a comment or blank, or NAME=value into
 * values[] (owned there).  0, or -EINVAL with err set.
 */
static int parse_line(const char *path, int lineno, const char *line,
		      char *values[], int set_on[], struct strbuf *err)
{
	const char *p = line, *name, *eq, *v, *end;
	size_t name_len;
	char *word;
	int i;

	while (is_blank(*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	name = p;
	eq = strchr(name, '=');
	if (!eq) {
		strbuf_addf(err, "%s:%d:%d: expected NAME=value", path, lineno,
			    (int)(name - line) + 1);
		return -EINVAL;
	}
	name_len = (size_t)(eq - name);
	while (name_len && is_blank(name[name_len - 1]))
		name_len--;
	i = name_index(name, name_len);
	if (i < 0) {
		const char *near;

		word = xstrndup(name, name_len);
		near = util_did_you_mean(word, names);
		strbuf_addf(err, "%s:%d:%d: unknown name '%s'", path, lineno,
			    (int)(name - line) + 1, word);
		if (near)
			strbuf_addf(err, " (did you mean '%s'?)", near);
		else
			add_known(err);
		free(word);
		return -EINVAL;
	}
	if (values[i]) {
		strbuf_addf(err, "%s:%d:%d: %s is set twice (first on line %d)",
			    path, lineno, (int)(name - line) + 1, names[i],
			    set_on[i]);
		return -EINVAL;
	}
	v = eq + 1;
	while (is_blank(*v))
		v++;
	end = v + strlen(v);
	while (end > v && is_blank(end[-1]))
		end--;
	if (end == v) {
		strbuf_addf(err, "%s:%d:%d: %s has no value", path, lineno,
			    (int)(eq - line) + 2, names[i]);
		return -EINVAL;
	}
	values[i] = xstrndup(v, (size_t)(end - v));
	set_on[i] = lineno;
	return 0;
}

int cli_conf_load(const char *path, struct strbuf *err)
{
	char *values[N_NAMES] = { NULL };
	int set_on[N_NAMES] = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;
	bool named = path || getenv("ROOFLINE_CONF");
	FILE *f;

	if (!path)
		path = cli_conf_file();
	if (!*path)
		return 0;
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		if (rc == -ENOENT && !named)
			return 0;
		strbuf_addf(err, "%s: cannot read the client configuration: %s",
			    path, strerror(-rc));
		return rc;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (strlen(line) != (size_t)len) {
			strbuf_addf(err, "%s:%d: a NUL byte in the line", path,
				    lineno);
			rc = -EINVAL;
			break;
		}
		rc = parse_line(path, lineno, line, values, set_on, err);
		if (rc < 0)
			break;
	}
	if (rc == 0 && ferror(f)) {
		rc = -EIO;
		strbuf_addf(err, "%s: read error", path);
	}
	fclose(f);
	free(line);
	for (size_t i = 0; i < N_NAMES; i++) {
		if (rc == 0 && values[i] && setenv(names[i], values[i], 0) < 0) {
			rc = -errno;
			strbuf_addf(err, "%s: cannot set %s: %s", path, names[i],
				    strerror(-rc));
		}
		free(values[i]);
	}
	return rc;
}
