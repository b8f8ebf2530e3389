/* log.c - see log.h. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

static const char *log_ident = "rooflined";
static enum rl_log_level log_threshold = RL_LOG_INFO;
static bool log_to_syslog;

static const char *const level_names[] = {
	[RL_LOG_ERROR] = "error",
	[RL_LOG_WARNING] = "warning",
	[RL_LOG_INFO] = "info",
	[RL_LOG_DEBUG] = "debug",
};

void log_init(const char *ident, enum rl_log_level level, bool use_syslog)
{
	if (log_to_syslog)
		closelog();
	log_ident = ident;
	log_threshold = level;
	log_to_syslog = use_syslog;
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

int log_level_parse(const char *text, enum rl_log_level *level)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(text, level_names[i]) == 0) {
			*level = (enum rl_log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool log_enabled(enum rl_log_level level)
{
	return level <= log_threshold;
}

void log_escape(const char *in, char *out, size_t size)
{
	utf8_escape(out, size, in, UTF8_ESCAPE_LINE);
}

void log_vmsg(enum rl_log_level level, const char *who, const char *fmt,
	      va_list ap)
{
	static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
					   LOG_DEBUG };
	char raw[4096], msg[4 * sizeof(raw)];
	int saved_errno = errno;

	if (!log_enabled(level))
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	log_escape(raw, msg, sizeof(msg));
	if (log_to_syslog) {
		if (who)
			syslog(syslog_prio[level], "[%s] %s", who, msg);
		else
			syslog(syslog_prio[level], "%s", msg);
	} else {
		char stamp[32];
		struct tm tm;
		time_t now = time(NULL);

		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S",
			 localtime_r(&now, &tm));
		fprintf(stderr, "%s %s[%ld]: %s: %s%s%s%s\n", stamp, log_ident,
			(long)getpid(), level_names[level], who ? "[" : "",
			who ? who : "", who ? "] " : "", msg);
	}
	errno = saved_errno;
}

void log_msg(enum rl_log_level level, const char *who, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_vmsg(level, who, fmt, ap);
	va_end(ap);
}
