/* site_child.c - see site_child.h. */
#include "site_child.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static char *config_path; /* owned; NULL: built-in defaults */
static bool in_foreground;
static pid_t child;       /* the rebuild running, 0 when none */
static bool due;          /* requested, not started yet */

void site_child_init(const char *path, bool foreground)
{
	in_foreground = foreground;
	free(config_path);
	config_path = path ? xstrdup(path) : NULL;
}

/* True while the rebuild started last has not ended.  The engine's reaper
 * may have collected it already: then waitpid answers ECHILD. */
static bool child_running(void)
{
	int status;

	if (child <= 0)
		return false;
	if (waitpid(child, &status, WNOHANG) == 0)
		return true;
	child = 0;
	return false;
}

void site_child_poll(const struct config *cfg)
{
	char *argv[6] = { "rooflined", "--rebuild-site" };
	int argc = 2;
	sigset_t none;
	pid_t pid;

	if (!due || !cfg->web_root || !cfg->web_root[0] || child_running())
		return;
	if (in_foreground)
		argv[argc++] = "-f";
	if (config_path) {
		argv[argc++] = "-c";
		argv[argc++] = config_path;
	}
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0) {
		log_warn("site: cannot start its rebuild: %s (next time runs end)",
			 strerror(errno));
		return;
	}
	if (pid == 0) {
		/* only async-signal-safe calls here: the daemon may have threads */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	child = pid;
	due = false;
	log_debug("site: rebuild started (pid %ld)", (long)pid);
}

void site_child_request(const struct config *cfg)
{
	due = true;
	site_child_poll(cfg);
}
