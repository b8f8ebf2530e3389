/*
 * kernel_name.h - short forms of demangled CUDA kernel names, the one rule
 * behind `roofline show`'s table, the gnuplot chart's key and the HTML
 * report (libc only).
 *
 * One name: template arguments become <...>, the parameter list and the
 * return type go, "(anonymous namespace)" becomes anon, and while the name
 * is longer than max its leading namespaces go, then its middle.
 *
 * A set of names (kernel_names_short): names that differ stay different.
 * Where two kernels' one-name forms collide (templated code:
 * for_each_kernel<CUDAStream<double>::mul()::{lambda}> and ...::add()...
 * both give for_each_kernel<...>), the group's common prefix and suffix
 * (the template arguments they share) are dropped and the part that tells
 * them apart is shown: for_each_kernel<...mul()...>.  Where that still
 * leaves two equal (a part too long for max: nvcc's extended lambdas,
 * for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<... &CUDAStream<double>::
 * copy, 1u>, ...> beside init_arrays' of another signature), each shows
 * the first identifier that no other name of its group has:
 * for_each_kernel<...copy...>.  Any collision left gets ~2, ~3, ... in
 * order of appearance.
 */
#ifndef ROOFLINE_KERNEL_NAME_H
#define ROOFLINE_KERNEL_NAME_H

#include <stddef.h>

/* A name of at most max bytes is kept whole (parameters and all). */
#define KERNEL_NAME_WHOLE_FITS 1u

/*
 * The short form of one name into out (cap bytes, cap > max, max >= 8):
 * kernel_A(double *, long, double) -> kernel_A;
 * void cutlass::Kernel<cutlass::gemm::...>(Params) -> cutlass::Kernel<...>.
 */
void kernel_name_short(const char *full, size_t max, char *out, size_t cap);

/*
 * Short forms of full[0..n) (max >= 8) into out[0..n), each malloc'd and
 * at most max bytes; equal full names get equal short forms, different ones
 * different short forms.  0, or -1 when out of memory (out all NULL).
 * The caller frees them with kernel_names_free.
 */
int kernel_names_short(const char *const *full, size_t n, size_t max,
		       unsigned flags, char **out);
void kernel_names_free(char **out, size_t n);

#endif
