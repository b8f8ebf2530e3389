#!/bin/bash
# tests/gpu/build-babelstream.sh SRC OUT - build BabelStream's CUDA version
# (https://github.com/UoB-HPC/BabelStream: a third-party application, not
# part of this repository; its source is fetched, never committed) the way
# its own CMake model file src/cuda/model.cmake does: --extended-lambda,
# GRID_STRIDE, DEFAULT memory, UNROLL_FACTOR=4, linked with NVML.  SRC holds
# BabelStream's src/; OUT is the program to write.  sm_90 (H100, H200)
# unless CUDA_ARCH says otherwise; NVCC names the compiler.
#
# NVML: nvml.h from the toolkit, else from NVML_INCLUDE (a directory); the
# library to link from the toolkit's stubs, else the driver's
# libnvidia-ml.so.1 (the one the program loads at run time anyway).
# tests/gpu/stack.sh builds it on the GPU machine and profiles it as an
# ordinary user's program (tests/gpu/babelstream.yaml).
set -euo pipefail
SRC=${1:?usage: tests/gpu/build-babelstream.sh SRC OUT}
OUT=${2:?usage: tests/gpu/build-babelstream.sh SRC OUT}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_ARCH=${CUDA_ARCH:-sm_90}
CUDA_HOME=$(cd "$(dirname "$(readlink -f "$NVCC")")/.." && pwd)
say() { printf 'build-babelstream: %s\n' "$*"; }
[[ -f $SRC/src/cuda/CUDAStream.cu && -f $SRC/src/main.cpp ]] ||
	{ say "no src/cuda/CUDAStream.cu or src/main.cpp in $SRC" >&2; exit 2; }

inc=()
if ! compgen -G "$CUDA_HOME/include/nvml.h" >/dev/null &&
	! compgen -G "$CUDA_HOME/targets/*/include/nvml.h" >/dev/null; then
	[[ -n ${NVML_INCLUDE:-} && -f $NVML_INCLUDE/nvml.h ]] ||
		{ say "no nvml.h in $CUDA_HOME and none in NVML_INCLUDE" >&2; exit 2; }
	say "nvml.h from $NVML_INCLUDE (the toolkit has none)"
	inc=(-I"$NVML_INCLUDE")
fi
stub=$(compgen -G "$CUDA_HOME/lib64/stubs/libnvidia-ml.so" || compgen -G "$CUDA_HOME/targets/*/lib/stubs/libnvidia-ml.so" || true)
if [[ -n $stub ]]; then
	lib=(-L"$(dirname "$stub")" -lnvidia-ml)
else
	drv=$(ldconfig -p | awk '/libnvidia-ml\.so\.1 .*x86-64/ { print $NF; exit }')
	[[ -n $drv ]] || { say "no libnvidia-ml: neither the toolkit's stub nor the driver's" >&2; exit 2; }
	say "linking the driver's $drv (the toolkit has no stub)"
	lib=(-L"$(dirname "$drv")" -l:libnvidia-ml.so.1)
fi
set -x
"$NVCC" -std=c++17 -O3 -arch="$CUDA_ARCH" --extended-lambda -lineinfo \
	-DCUDA -DDEFAULT -DGRID_STRIDE -DUNROLL_FACTOR=4 \
	-I"$SRC/src" -I"$SRC/src/cuda" "${inc[@]}" \
	"$SRC/src/cuda/CUDAStream.cu" "$SRC/src/main.cpp" \
	-o "$OUT" "${lib[@]}"
