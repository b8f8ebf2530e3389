/*
 * harness.h - what every fuzz target (tests/fuzz/fuzz_*.c) shares.
 *
 * A target is a libFuzzer entry point, LLVMFuzzerTestOneInput(), over one
 * parser of text a user controls; it must neither crash, leak nor hit
 * undefined behaviour on any input (built with -fsanitize=fuzzer,address,
 * undefined: mk/fuzz.mk, `make fuzz`).  The helpers below turn libFuzzer's
 * bytes into the shapes the parsers take.
 */
#ifndef ROOFLINE_FUZZ_HARNESS_H
#define ROOFLINE_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* The input as a NUL-terminated string (an embedded NUL ends it early, as
 * it would for a parser reading a C string).  Caller frees. */
char *fuzz_text(const uint8_t *data, size_t size);

/*
 * Split text (modified in place) at LF into at most max items; the items
 * point into text.  Returns the count.  An option list (`perturb: [...]`)
 * arrives this way: one item a line.
 */
size_t fuzz_lines(char *text, char **items, size_t max);

#endif
