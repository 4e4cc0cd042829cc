/* A one-process stand-in for the few MPI calls the DSM applications make
 * themselves (bench/dsm/app.c, is.c), for their sequential builds
 * (rtl-seq-*): with one rank, a reduction, a broadcast and a gather are
 * copies. Not MPI; never installed. */
#ifndef RTL_SEQ_MPI_H
#define RTL_SEQ_MPI_H

#include <stdlib.h>
#include <string.h>

typedef size_t MPI_Datatype; /* the size of one element */
typedef int MPI_Comm;
typedef int MPI_Op;

#define MPI_COMM_WORLD 0
#define MPI_INT sizeof(int)
#define MPI_DOUBLE sizeof(double)
#define MPI_UNSIGNED_LONG_LONG sizeof(unsigned long long)
#define MPI_MAX 0

static inline int MPI_Abort(MPI_Comm comm, int code)
{
	(void)comm;
	exit(code);
}

static inline int MPI_Allreduce(const void *in, void *out, int n, MPI_Datatype t,
                                MPI_Op op, MPI_Comm comm)
{
	(void)op;
	(void)comm;
	memmove(out, in, (size_t)n * t);
	return 0;
}

static inline int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
	(void)buf;
	(void)n;
	(void)t;
	(void)root;
	(void)comm;
	return 0;
}

static inline int MPI_Gather(const void *in, int n, MPI_Datatype t, void *out, int m,
                             MPI_Datatype u, int root, MPI_Comm comm)
{
	(void)m;
	(void)u;
	(void)root;
	(void)comm;
	memmove(out, in, (size_t)n * t);
	return 0;
}

#endif
