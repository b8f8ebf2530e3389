/* app_env.c - see app_env.h. */
#include "app_env.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "records.h"
#include "util.h"

#define MODULES_LOG "modules.log"
#define ENV_MAX (4u << 20) /* bytes of `env -0` read back */

/* Run as: bash -c SCRIPT app-modules MODULE...  Exit 3: no module system,
 * 4: a module did not load; the reason is the last line on stderr. */
static const char modules_script[] =
	"i=\n"
	"if [ -n \"${MODULESHOME:-}\" ] && [ -r \"$MODULESHOME/init/bash\" ]; then\n"
	"  i=$MODULESHOME/init/bash\n"
	"else\n"
	"  for f in /usr/share/lmod/lmod/init/bash /etc/profile.d/lmod.sh \\\n"
	"           /usr/share/modules/init/bash /etc/profile.d/modules.sh; do\n"
	"    [ -r \"$f\" ] && { i=$f; break; }\n"
	"  done\n"
	"fi\n"
	"[ -n \"$i\" ] || { echo \"no module system (Lmod or Environment Modules):"
	" MODULESHOME is not set and none of /usr/share/lmod/lmod/init/bash,"
	" /usr/share/modules/init/bash, /etc/profile.d/{lmod,modules}.sh exists\" >&2;"
	" exit 3; }\n"
	". \"$i\" >&2\n"
	"type module >/dev/null 2>&1 || { echo \"$i defines no 'module' command\" >&2;"
	" exit 3; }\n"
	"for m; do\n"
	"  module load \"$m\" >&2\n"
	"  case \":${LOADEDMODULES:-}:\" in *\":$m:\"*|*\":$m/\"*) ;;\n"
	"  *) echo \"module '$m' did not load (module load $m; loaded:"
	" ${LOADEDMODULES:-none})\" >&2; exit 4 ;; esac\n"
	"done\n"
	"exec env -0\n";

static void set_field(char **dst, const struct rl_field *f, const char *key)
{
	const char *v = rl_field_get(f, key);

	free(*dst);
	*dst = v && *v && strcmp(v, "0") != 0 ? xstrdup(v) : NULL;
}

struct parsed {
	struct app_env *out;
	char *workdir;     /* as written */
	char **modules;
	size_t n_modules;
	int err;           /* setenv's errno */
};

static int on_record(void *arg, const char *kind, const struct rl_field *f)
{
	struct parsed *p = arg;
	const char *a;

	if (strcmp(kind, "app") == 0) {
		set_field(&p->workdir, f, "workdir");
		set_field(&p->out->tasks, f, "tasks");
		set_field(&p->out->tasks_per_node, f, "tasks_per_node");
		set_field(&p->out->gpus_per_task, f, "gpus_per_task");
		set_field(&p->out->launcher, f, "launcher");
	} else if (strcmp(kind, "env") == 0 && (a = rl_field_get(f, "name"))) {
		const char *v = rl_field_get(f, "value");

		if (setenv(a, v ? v : "", 1) < 0 && !p->err)
			p->err = errno;
	} else if (strcmp(kind, "module") == 0 && (a = rl_field_get(f, "name"))) {
		p->modules = xrealloc(p->modules,
				      (p->n_modules + 2) * sizeof(char *));
		p->modules[p->n_modules++] = xstrdup(a);
		p->modules[p->n_modules] = NULL;
	}
	return 0;
}

/* The last non-empty line of path, into buf. */
static void last_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	char line[512];

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0])
			snprintf(buf, size, "%s", line);
	}
	if (f)
		fclose(f);
}

/* Replace this process's environment by the NUL-separated K=V list. */
static int adopt_env(const char *buf, size_t len)
{
	if (clearenv() != 0)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
		const char *kv = buf + i, *eq = strchr(kv, '=');
		char *k;

		if (!eq || eq == kv || strncmp(kv, "_=", 2) == 0)
			continue;
		k = xstrndup(kv, (size_t)(eq - kv));
		if (setenv(k, eq + 1, 1) < 0) {
			free(k);
			return -errno;
		}
		free(k);
	}
	return 0;
}

/* Read fd to EOF into a buffer of at most ENV_MAX bytes (caller frees). */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = xmalloc(cap + 1);
	ssize_t r;

	for (;;) {
		if (n == cap && cap < ENV_MAX)
			buf = xrealloc(buf, (cap *= 2) + 1);
		r = read(fd, buf + n, n < cap ? cap - n : 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n < cap)
			n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int load_modules(char **modules, size_t n, const char *out_dir,
			struct strbuf *err)
{
	char *log = xasprintf("%s/%s", out_dir, MODULES_LOG), *env, why[1024];
	const char **argv = xcalloc(n + 5, sizeof(*argv));
	int out[2], lfd, st, rc = 0;
	size_t len;
	pid_t pid;

	argv[0] = "/bin/bash";
	argv[1] = "-c";
	argv[2] = modules_script;
	argv[3] = "app-modules";
	for (size_t i = 0; i < n; i++)
		argv[4 + i] = modules[i];
	lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (lfd < 0 || pipe2(out, O_CLOEXEC) < 0) {
		rc = -errno;
		strbuf_addf(err, "modules: cannot start /bin/bash: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		if (dup2(out[1], 1) >= 0 && dup2(lfd, 2) >= 0)
			execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(out[1]);
	env = pid > 0 ? read_all(out[0], &len) : NULL;
	close(out[0]);
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		rc = -errno;
		strbuf_addf(err, "modules: cannot run /bin/bash: %s", strerror(-rc));
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		last_line(log, why, sizeof(why));
		strbuf_addf(err, "modules: %s (see %s)", why[0] ? why :
			    "/bin/bash failed", log);
		rc = -ENOENT;
	} else {
		rc = adopt_env(env, len);
		if (rc)
			strbuf_addf(err, "modules: cannot set the environment: %s",
				    strerror(-rc));
	}
	free(env);
out:
	if (lfd >= 0)
		close(lfd);
	free(argv);
	free(log);
	return rc;
}

/* "~", "~/x" from the user's home; relative from run_dir. */
static char *resolve_dir(const char *w, const char *run_dir)
{
	const struct passwd *pw;
	const char *home = getenv("HOME");

	if (w[0] == '/')
		return xstrdup(w);
	if (w[0] == '~') {
		if (!home || !*home)
			home = (pw = getpwuid(getuid())) ? pw->pw_dir : "/";
		return xasprintf("%s%s", home, w + 1);
	}
	return xasprintf("%s/%s", run_dir, w);
}

int app_env_apply(const char *records, const char *run_dir,
		  const char *out_dir, struct app_env *out, struct strbuf *err)
{
	struct parsed p = { .out = out };
	char node[256] = "", *copy = xstrdup(records ? records : "");
	struct stat st;
	int rc;

	gethostname(node, sizeof(node) - 1);
	rc = records_each_in(copy, "params.tsv", NULL, on_record, &p, err);
	free(copy);
	if (!rc && p.err) {
		rc = -p.err;
		strbuf_addf(err, "env: cannot set a variable: %s", strerror(p.err));
	}
	if (!rc && p.n_modules)
		rc = load_modules(p.modules, p.n_modules, out_dir, err);
	if (!rc && p.workdir) {
		out->workdir = resolve_dir(p.workdir, run_dir);
		if (stat(out->workdir, &st) < 0)
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
		else if (access(out->workdir, X_OK) < 0)
			rc = -errno;
		if (rc)
			strbuf_addf(err, "workdir '%s' on node %s: %s", out->workdir,
				    node, strerror(-rc));
	}
	if (rc && err->len && !strstr(err->buf, "node "))
		strbuf_addf(err, " (on node %s)", node);
	free(p.workdir);
	for (size_t i = 0; i < p.n_modules; i++)
		free(p.modules[i]);
	free(p.modules);
	return rc;
}

const char *app_env_get(const struct app_env *a, const char *key)
{
	if (strcmp(key, "workdir") == 0)
		return a->workdir;
	if (strcmp(key, "tasks") == 0)
		return a->tasks;
	if (strcmp(key, "tasks_per_node") == 0)
		return a->tasks_per_node;
	if (strcmp(key, "gpus_per_task") == 0)
		return a->gpus_per_task;
	if (strcmp(key, "launcher") == 0)
		return a->launcher;
	return NULL;
}

void app_env_release(struct app_env *a)
{
	free(a->workdir);
	free(a->tasks);
	free(a->tasks_per_node);
	free(a->gpus_per_task);
	free(a->launcher);
	memset(a, 0, sizeof(*a));
}
