/*
 * mpi_ranks - an MPI program for tests/integration/app.t: every rank adds
 * its number into an MPI_Allreduce and prints "rank R of N sum S node H",
 * so a test sees that the ranks were one MPI world (S = N(N-1)/2), not N
 * worlds of one, where each ran (SLURMD_NODENAME under srun) and the GPUs
 * it was given (CUDA_VISIBLE_DEVICES).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, sum = 0;
	const char *node = getenv("SLURMD_NODENAME");
	const char *gpus = getenv("CUDA_VISIBLE_DEVICES");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d gpus %s node %s\n", rank, size, sum,
	       gpus ? gpus : "none", node ? node : "?");
	MPI_Finalize();
	return 0;
}
