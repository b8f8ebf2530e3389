/*
 * log.h - one logging facility for every program of rooflined.
 *
 * Lines go to stderr ("rooflined[pid]: [who] message") or to syslog.  The
 * level is checked before anything is formatted.  `who` names the speaker,
 * e.g. "collect/ncu step=profile job=4711"; NULL for the program itself.
 */
#ifndef ROOFLINE_LOG_H
#define ROOFLINE_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>

#include "rooflined/plugin.h" /* enum rl_log_level */

/* Set the program name, the threshold and the sink.  Safe to call again
 * (SIGHUP reload).  ident is borrowed and must outlive the program. */
void log_init(const char *ident, enum rl_log_level level, bool use_syslog);

/* Parse "error", "warning", "info" or "debug"; -EINVAL on anything else. */
int log_level_parse(const char *text, enum rl_log_level *level);

/* True when a line of this level would be written. */
bool log_enabled(enum rl_log_level level);

/* Copy in to out (size bytes with the NUL), escaped by utf8_escape()
 * (common/utf8.h, UTF8_ESCAPE_LINE: \n, \t, \xNN, \u00NN): one message is
 * one line of well-formed UTF-8 without control characters, whatever text a
 * user gave it (every log line goes through it). */
void log_escape(const char *in, char *out, size_t size);

void log_vmsg(enum rl_log_level level, const char *who, const char *fmt,
	      va_list ap);
void log_msg(enum rl_log_level level, const char *who, const char *fmt, ...)
	RL_PRINTF(3, 4);

#define log_error(...) log_msg(RL_LOG_ERROR, NULL, __VA_ARGS__)
#define log_warn(...) log_msg(RL_LOG_WARNING, NULL, __VA_ARGS__)
#define log_info(...) log_msg(RL_LOG_INFO, NULL, __VA_ARGS__)
#define log_debug(...) log_msg(RL_LOG_DEBUG, NULL, __VA_ARGS__)

#endif
