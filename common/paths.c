/* paths.c - see paths.h. */
#include "paths.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

/* Where a program is when /proc/self/exe cannot be read. */
#define PATHS_FALLBACK_PREFIX "/usr"

struct layout {
	char *top;   /* build tree: SRC; installed: PREFIX */
	bool build;  /* SRC/build/V/bin */
	char *bin;   /* the running program's directory */
};

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_build_tree(const char *bin)
{
	char *plugins = xasprintf("%s/../plugins", bin);
	char *sql = xasprintf("%s/../../../sql", bin);
	bool yes = is_dir(plugins) && is_dir(sql);

	free(plugins);
	free(sql);
	return yes;
}

static void layout_init(struct layout *l)
{
	char *top, real[PATH_MAX];

	l->bin = util_exe_dir();
	if (!l->bin) {
		l->build = false;
		l->top = xstrdup(PATHS_FALLBACK_PREFIX);
		l->bin = xstrdup(PATHS_FALLBACK_PREFIX "/bin");
		return;
	}
	l->build = is_build_tree(l->bin);
	top = xasprintf(l->build ? "%s/../../.." : "%s/..", l->bin);
	l->top = realpath(top, real) ? xstrdup(real) : xstrdup(top);
	free(top);
}

static void layout_release(struct layout *l)
{
	free(l->top);
	free(l->bin);
}

/* Which directory a path starts from. */
enum base { FROM_BIN, FROM_TOP };

struct rule {
	enum base build_base;     /* build tree */
	const char *build_rel;
	enum base inst_base;      /* installed tree */
	const char *inst_rel;
};

/* $env if set and not empty, else the layout's choice. */
static char *pick(const char *env, const struct rule *r)
{
	const char *v = env ? getenv(env) : NULL;
	struct layout l;
	enum base base;
	char *path;

	if (v && *v)
		return xstrdup(v);
	layout_init(&l);
	base = l.build ? r->build_base : r->inst_base;
	path = xasprintf("%s%s", base == FROM_BIN ? l.bin : l.top,
			 l.build ? r->build_rel : r->inst_rel);
	layout_release(&l);
	return path;
}

char *paths_plugin_dir(void)
{
	static const struct rule r = { FROM_BIN, "/../plugins",
				       FROM_TOP, "/lib/rooflined/plugins" };

	return pick("ROOFLINE_PLUGIN_DIR", &r);
}

char *paths_sql_dir(void)
{
	static const struct rule r = { FROM_TOP, "/sql",
				       FROM_TOP, "/share/rooflined/sql" };

	return pick("ROOFLINE_SQL_DIR", &r);
}

char *paths_program(const char *name)
{
	/* roofline is a user's command; the daemon and the job's program
	 * are system programs (section 8) */
	static const struct rule user = { FROM_BIN, "", FROM_TOP, "/bin" };
	static const struct rule sys = { FROM_BIN, "", FROM_TOP, "/sbin" };
	char *dir = pick(NULL, strcmp(name, "roofline") == 0 ? &user : &sys);
	char *path = xasprintf("%s/%s", dir, name);

	free(dir);
	return path;
}

static void export_default(const char *name, const struct rule *r)
{
	const char *cur = getenv(name);
	char *value;

	if (cur && *cur)
		return;
	value = pick(NULL, r);
	setenv(name, value, 1);
	free(value);
}

void paths_export_defaults(void)
{
	/* In the build tree the CUDA programs sit beside the binaries. */
	static const struct rule libexec = { FROM_BIN, "", FROM_TOP, "/lib/rooflined" };
	static const struct rule etc = { FROM_TOP, "/etc", FROM_TOP, "/share/rooflined/etc" };

	export_default("ROOFLINE_LIBEXEC", &libexec);
	export_default("ROOFLINE_ETC", &etc);
}
