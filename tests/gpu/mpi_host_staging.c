/*
 * mpi_host_staging - MPI_Sendrecv of CUDA device buffers through host
 * memory, for MPI programs written for a CUDA-aware MPI (they pass device
 * pointers to MPI) run with one that is not: Debian 12's Open MPI is built
 * without CUDA.  Linked into such a program ahead of libmpi, it takes the
 * program's MPI_Sendrecv calls (the MPI profiling interface: the library's
 * own is PMPI_Sendrecv), copies a device send buffer to the host first and
 * a host receive buffer to the device after, and passes host buffers
 * through unchanged.  Used by tests/gpu/mpi-app.sh (docs/pipelines.md's
 * worked example); only MPI_Sendrecv is covered, which is what the Jacobi
 * solver there sends device memory with.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdlib.h>

static int is_device(const void *p)
{
	struct cudaPointerAttributes a;

	if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError(); /* a plain host pointer: clear the error */
		return 0;
	}
	return a.type == cudaMemoryTypeDevice;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
		 int stag, void *rbuf, int rcount, MPI_Datatype rtype, int src,
		 int rtag, MPI_Comm comm, MPI_Status *status)
{
	int ds = is_device(sbuf), dr = is_device(rbuf), ssize = 0, rsize = 0, rc;
	size_t sbytes, rbytes;
	void *hs = NULL, *hr = NULL;

	if (!ds && !dr)
		return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
				     rtype, src, rtag, comm, status);
	MPI_Type_size(stype, &ssize);
	MPI_Type_size(rtype, &rsize);
	sbytes = (size_t)ssize * (size_t)scount;
	rbytes = (size_t)rsize * (size_t)rcount;
	if ((ds && !(hs = malloc(sbytes ? sbytes : 1))) ||
	    (dr && !(hr = malloc(rbytes ? rbytes : 1)))) {
		free(hs);
		return MPI_ERR_NO_MEM;
	}
	if (ds && cudaMemcpy(hs, sbuf, sbytes, cudaMemcpyDeviceToHost) != cudaSuccess)
		rc = MPI_ERR_BUFFER;
	else
		rc = PMPI_Sendrecv(ds ? hs : sbuf, scount, stype, dest, stag,
				   dr ? hr : rbuf, rcount, rtype, src, rtag, comm,
				   status);
	if (rc == MPI_SUCCESS && dr &&
	    cudaMemcpy(rbuf, hr, rbytes, cudaMemcpyHostToDevice) != cudaSuccess)
		rc = MPI_ERR_BUFFER;
	free(hs);
	free(hr);
	return rc;
}
