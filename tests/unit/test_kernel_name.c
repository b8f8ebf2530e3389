/*
 * test_kernel_name - common/kernel_name.c: the short kernel names of
 * `roofline show`, the gnuplot chart's key and the HTML report.  One name's
 * short form, and a set's: names of templated code (BabelStream's
 * for_each_kernel<CUDAStream<double>::mul()::lambda>, Kokkos' launch
 * wrappers) that share their first 40 characters stay distinct.
 * Expectations are worked out by hand from the rule in kernel_name.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_name.h"

static void check_short(const char *full, size_t max, const char *want)
{
	char out[256];

	kernel_name_short(full, max, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_one_name(void **state)
{
	(void)state;
	check_short("kernel_A(double *, long, double)", 40, "kernel_A");
	check_short("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float, 128>>(cutlass::Params)",
		    40, "cutlass::Kernel<...>");
	check_short("at::native::(anonymous namespace)::reduce_kernel<512, 1, at::native::ReduceOp<float>>(at::native::ReduceOp<float>)",
		    40, "at::native::anon::reduce_kernel<...>");
	check_short("at::native::(anonymous namespace)::reduce_kernel<512>(int)", 20, "reduce_kernel<...>");
	check_short("a_very_long_kernel_name_without_any_namespace_at_all_here", 20, "a_very_l..._all_here");
	check_short("gemm", 40, "gemm");
	check_short("<lambda>", 40, "<...>");
	check_short("(anonymous namespace)::k(int)", 40, "anon::k");
	check_short("", 40, "kernel");
}

/* Short forms of n names at max; each checked against want[] and all of
 * at most max bytes. */
static void check_set(const char *const *full, size_t n, size_t max, unsigned flags,
		      const char *const *want)
{
	char *out[16];

	assert_true(n <= 16);
	assert_int_equal(kernel_names_short(full, n, max, flags, out), 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(strlen(out[i]) <= max);
		assert_string_equal(out[i], want[i]);
	}
	kernel_names_free(out, n);
}

/* Every pair of different full names has different short forms; each
 * short form holds the part named in part[i]. */
static void check_distinct(const char *const *full, size_t n, size_t max,
			   const char *const *part)
{
	char *out[16];

	assert_int_equal(kernel_names_short(full, n, max, 0, out), 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(strlen(out[i]) <= max);
		if (part && !strstr(out[i], part[i]))
			fail_msg("'%s' lacks '%s'", out[i], part[i]);
		for (size_t j = 0; j < i; j++)
			if (strcmp(full[i], full[j]) && !strcmp(out[i], out[j]))
				fail_msg("'%s' twice", out[i]);
	}
	kernel_names_free(out, n);
}

/* BabelStream's CUDA kernels, one template each: already distinct. */
static void test_babelstream_kernels(void **state)
{
	static const char *const full[] = {
		"void copy_kernel<double>(const T1 *, T1 *)",
		"void mul_kernel<double>(T1 *, const T1 *)",
		"void add_kernel<double>(const T1 *, const T1 *, T1 *)",
		"void triad_kernel<double>(T1 *, const T1 *, const T1 *)",
		"void dot_kernel<double>(const T1 *, const T1 *, T1 *, int)",
	};
	static const char *const want[] = {
		"copy_kernel<...>", "mul_kernel<...>", "add_kernel<...>",
		"triad_kernel<...>", "dot_kernel<...>",
	};
	static const char *const whole[] = {
		"void copy_kernel<double>(const T1 *, T1 *)",
		"void mul_kernel<double>(T1 *, const T1 *)",
		"add_kernel<...>", "triad_kernel<...>", "dot_kernel<...>",
	};

	(void)state;
	check_set(full, 5, 40, 0, want);
	/* the CLI's and the report's rule: a name that fits stays whole */
	check_set(full, 5, 42, KERNEL_NAME_WHOLE_FITS, whole);
}

/* One template, a lambda per operation: the first 40 characters are the
 * same, and so is the one-name short form. */
static void test_for_each_lambdas(void **state)
{
	static const char *const full[] = {
		"void for_each_kernel<CUDAStream<double>::copy()::[lambda(long) (instance 1)]>(long, T1)",
		"void for_each_kernel<CUDAStream<double>::mul()::[lambda(long) (instance 1)]>(long, T1)",
		"void for_each_kernel<CUDAStream<double>::add()::[lambda(long) (instance 1)]>(long, T1)",
		"void for_each_kernel<CUDAStream<double>::triad()::[lambda(long) (instance 1)]>(long, T1)",
		"void for_each_kernel<CUDAStream<double>::mul()::[lambda(long) (instance 1)]>(long, T1)",
	};
	static const char *const want[] = {
		"for_each_kernel<...copy()...>", "for_each_kernel<...mul()...>",
		"for_each_kernel<...add()...>", "for_each_kernel<...triad()...>",
		"for_each_kernel<...mul()...>",
	};
	static const char *const dl[] = { /* nvcc's extended __device__ lambdas */
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::copy, 1u>, const double *, double *>>(long, T1)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::mul, 1u>, double *, const double *, double>>(long, T1)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::add, 1u>, const double *, const double *, double *>>(long, T1)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::triad, 1u>, double *, const double *, const double *, double>>(long, T1)",
	};
	static const char *const dl_part[] = { "copy", "mul", "add", "triad" };

	(void)state;
	check_set(full, 5, 40, 0, want);
	check_distinct(dl, 4, 40, dl_part);
	check_distinct(dl, 4, 20, NULL);
}

/*
 * BabelStream's CUDA version as built (tests/gpu/build-babelstream.sh,
 * names as `nm -C` demangles them): init_arrays' lambda has another
 * signature, so the group's common prefix ends before the operation's name
 * and what is left does not fit; each kernel's own identifier tells it
 * (before, five of them were for_each_kernel<...*)(), &CUDAStream<.~2..~5).
 */
static void test_babelstream_built(void **state)
{
	static const char *const full[] = {
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(double, double, double), &CUDAStream<double>::init_arrays, 1u>, double*, double*, double*, double, double, double> >(unsigned long, unsigned long, __nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(double, double, double), &CUDAStream<double>::init_arrays, 1u>, double*, double*, double*, double, double, double>)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::copy, 1u>, double*, double*> >(unsigned long, unsigned long, __nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::copy, 1u>, double*, double*>)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::mul, 1u>, double*, double*> >(unsigned long, unsigned long, __nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::mul, 1u>, double*, double*>)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::add, 1u>, double*, double*, double*> >(unsigned long, unsigned long, __nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::add, 1u>, double*, double*, double*>)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::triad, 1u>, double*, double*, double*> >(unsigned long, unsigned long, __nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::triad, 1u>, double*, double*, double*>)",
		"void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::nstream, 1u>, double*, double*, double*> >(unsigned long, unsigned long, __nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::nstream, 1u>, double*, double*, double*>)",
		"void dot_kernel<double>(double const*, double const*, double*, unsigned long)",
	};
	static const char *const want[] = {
		"for_each_kernel<...init_arrays...>", "for_each_kernel<...copy...>",
		"for_each_kernel<...mul...>", "for_each_kernel<...add...>",
		"for_each_kernel<...triad...>", "for_each_kernel<...nstream...>",
		"dot_kernel<...>",
	};
	static const char *const narrow[] = {
		"fo...<...init_arrays...>", "for_each_...<...copy...>",
		"for_each_k...<...mul...>", "for_each_k...<...add...>",
		"for_each...<...triad...>", "for_ea...<...nstream...>",
		"dot_kernel<...>",
	};

	(void)state;
	check_set(full, 7, 40, 0, want);
	check_set(full, 7, 40, KERNEL_NAME_WHOLE_FITS, want);
	check_set(full, 7, 24, 0, narrow);
}

/* Kokkos: every kernel is a launch wrapper around a ParallelFor of a
 * functor or a lambda. */
static void test_kokkos(void **state)
{
	static const char *const full[] = {
		"void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<Functor_Axpy, Kokkos::RangePolicy<Kokkos::Cuda>, Kokkos::Cuda>>(T1)",
		"void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<Functor_Scale, Kokkos::RangePolicy<Kokkos::Cuda>, Kokkos::Cuda>>(T1)",
	};
	static const char *const want[] = {
		"cuda_parallel_lau...<...Functor_Axpy...>",
		"cuda_parallel_la...<...Functor_Scale...>",
	};
	static const char *const lambdas[] = {
		"void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<main::{lambda(int)#1}, Kokkos::RangePolicy<>, Kokkos::Cuda>>(T1)",
		"void Kokkos::Impl::cuda_parallel_launch_local_memory<Kokkos::Impl::ParallelFor<main::{lambda(int)#2}, Kokkos::RangePolicy<>, Kokkos::Cuda>>(T1)",
	};
	static const char *const lambda_want[] = {
		"cuda_parallel_...<...{lambda(int)#1}...>",
		"cuda_parallel_...<...{lambda(int)#2}...>",
	};

	(void)state;
	check_set(full, 2, 40, 0, want);
	check_set(lambdas, 2, 40, 0, lambda_want);
}

/* Overloads differ only in their parameters: a suffix tells them apart;
 * a name seen twice keeps one short form. */
static void test_left_equal(void **state)
{
	static const char *const full[] = {
		"void k<A>(int)", "void k<A>(long)", "void k<A>(int)", "void k<A>(char)",
	};
	static const char *const want[] = { "k<A>", "k<A>~2", "k<A>", "k<A>~3" };

	(void)state;
	check_set(full, 4, 40, 0, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_name),
		cmocka_unit_test(test_babelstream_kernels),
		cmocka_unit_test(test_for_each_lambdas),
		cmocka_unit_test(test_babelstream_built),
		cmocka_unit_test(test_kokkos),
		cmocka_unit_test(test_left_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
