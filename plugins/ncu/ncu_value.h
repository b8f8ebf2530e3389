/*
 * ncu_value.h - metric values as Nsight Compute prints them (libc only):
 * numbers with thousands separators ("1,234,567"), the texts that mean "no
 * value", and units with prefixes (Kbyte, usecond, Ghz) converted to ncu's
 * base units.
 *
 * Used by the CSV reader (keeping values), the metric table (factors), the
 * record builder (base units) and the plugins (numbers they read back).
 * Nothing here allocates; strings are borrowed, and only
 * ncu_value_drop_commas() and ncu_value_clean() write to their argument.
 */
#ifndef ROOFLINE_NCU_VALUE_H
#define ROOFLINE_NCU_VALUE_H

#include <stdbool.h>

/*
 * True when s is a number as ncu prints it: an optional sign, digits with
 * optional "," thousands groups (all of three digits after the first),
 * optional fraction and exponent.  *has_commas says whether it had groups.
 */
bool ncu_value_is_number(const char *s, bool *has_commas);

/* Remove every ',' from s in place ("1,234" -> "1234"). */
void ncu_value_drop_commas(char *s);

/* True when v (not NULL) means "no value": empty, "n/a", "nan", "-nan",
 * "inf" or "-inf". */
bool ncu_value_is_missing(const char *v);

/*
 * A printed value as the reader keeps it: NULL when v is NULL or missing
 * (above); otherwise v, with thousands separators dropped in place when it
 * is a number, any other text unchanged.
 */
const char *ncu_value_clean(char *v);

/* Parse a value the reader kept (no separators) as a double; 0 or -EINVAL
 * (NULL, empty, trailing text, out of range). */
int ncu_value_parse(const char *text, double *out);

/*
 * Convert a value printed in unit `unit` to ncu's base unit of that kind
 * (bytes, ns, hz, byte/second, ...), e.g. "4.61" Kbyte -> 4610 byte, as
 * `ncu --print-units base` would have printed it.  *base gets the base unit's
 * name (static).  Returns 0, 1 when a conversion was applied (the value had a
 * prefix: ncu rounded it, so it is less exact than a base-unit export), or
 * -EINVAL when the value is not a number.  Unknown units pass unchanged (0).
 */
int ncu_value_to_base(const char *unit, const char *value, double *out,
		      const char **base);

#endif
