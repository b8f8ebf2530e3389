/*
 * utf8.h - users' text made safe to store and to show (libc only).
 *
 * PostgreSQL refuses text that is not valid UTF-8, so a statement that
 * stores a user's bytes as they came (an exit record's error, a record's
 * fields) fails, and a state change that always fails is tried again at
 * every tick.  Control characters in the same text reach log lines and
 * terminals.  So text a user controls is checked (utf8_valid) or escaped
 * (utf8_sanitize) before the daemon stores it.
 */
#ifndef ROOFLINE_UTF8_H
#define ROOFLINE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Bytes in the well-formed UTF-8 character at s (1-4; n bytes readable),
 * or 0 when s does not start one: a stray continuation byte, a sequence cut
 * short, an overlong form, a surrogate, or a code point above U+10FFFF.
 */
size_t utf8_char_len(const char *s, size_t n);

/* True when s[0..len) is well-formed UTF-8 throughout. */
bool utf8_valid(const char *s, size_t len);

/*
 * The one escaper of users' text (stored text, exit records, log lines).
 * Copy the C string src into dst (size >= 1 bytes, always terminated) as
 * well-formed UTF-8 without control characters: each byte of an ill-formed
 * sequence, each C0 control character and DEL becomes "\xNN" (with
 * UTF8_ESCAPE_LINE, LF and TAB become "\n" and "\t"); a C1 control
 * character (U+0080-U+009F) becomes "\u00NN".  Everything else is copied as
 * it is.  A character or escape that does not fit whole is left out with
 * all after it.  Returns the bytes written (without the NUL).
 */
#define UTF8_ESCAPE_LINE 1u /* "\n", "\t" for LF, TAB: a log line's forms */
size_t utf8_escape(char *dst, size_t size, const char *src, unsigned flags);

/* utf8_escape() without flags: TAB and LF as "\x09", "\x0a" too. */
size_t utf8_sanitize(char *dst, size_t size, const char *src);

#endif
