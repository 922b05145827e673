/* mpi/merge.c -- the trees of the ranks merged up a k-ary tree of ranks (STAT's filter on MPI).
 *
 * Rank R's children are R*K+1 .. R*K+K; each sends its subtree's merged
 * tree, packed (sw_tree_pack), and R merges them in rank order after its own
 * tasks: a subtree's task numbers are concatenated after those before it,
 * which is the remap STAT's filter does on its bit vectors.  Targets and
 * emulated tasks are shared out in the same preorder, so the concatenation
 * is the targets file's order.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mpi/rmpi.h"

/* The tag of a packed tree sent to the parent. */
#define RMPI_TAG_TREE 18

uint64_t
rmpi_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int
rmpi_preorder_position(int rank, int size, int fanout, int *pos)
{
    /* Iterative preorder over the implicit tree: a stack of ranks. */
    int *stack = malloc((size_t)size * sizeof *stack);
    int top = 0, next = 0;
    if (stack == NULL)
        return -1;
    stack[top++] = 0;
    while (top > 0) {
        int r = stack[--top];
        if (r == rank) {
            *pos = next;
            break;
        }
        next++;
        /* Children pushed last first, so that the first is visited first. */
        long last = (long)r * fanout + fanout;
        if (last > (long)size - 1)
            last = (long)size - 1;
        for (long c = last; c > (long)r * fanout; c--)
            stack[top++] = (int)c;
    }
    free(stack);
    return 0;
}

int
rmpi_merge_up(struct sw_tree *t, int rank, int size, int fanout, bool failed,
              struct rmpi_merge_stats *st)
{
    *st = (struct rmpi_merge_stats){ 0 };
    /* Every child is received even after a failure: a child's send may
     * wait for its receive, and no rank may be left waiting. */
    for (long c = (long)rank * fanout + 1; c <= (long)rank * fanout + fanout && c < size; c++) {
        MPI_Status ms;
        int len;
        MPI_Probe((int)c, RMPI_TAG_TREE, MPI_COMM_WORLD, &ms);
        MPI_Get_count(&ms, MPI_BYTE, &len);
        void *buf = malloc(len > 0 ? (size_t)len : 1);
        if (buf == NULL) {
            fprintf(stderr, "rspwalk-mpi: rank %d: receiving rank %ld's tree: out of memory\n",
                    rank, c);
            MPI_Abort(MPI_COMM_WORLD, 1); /* the only way to leave the child's send */
        }
        MPI_Recv(buf, len, MPI_BYTE, (int)c, RMPI_TAG_TREE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        st->bytes_in += (uint64_t)len;
        if (len == 0) {
            /* The child's subtree failed; its ranks said why. */
            failed = true;
        } else if (!failed) {
            uint64_t t0 = rmpi_now_us();
            struct sw_errbuf err = { 0 };
            int rc = sw_tree_merge_packed(t, buf, (size_t)len, &err);
            st->unpack_us += rmpi_now_us() - t0;
            if (rc < 0) {
                fprintf(stderr, "rspwalk-mpi: rank %d: rank %ld's tree: %s\n", rank, c, err.msg);
                failed = true;
            }
        }
        free(buf);
    }
    if (rank == 0)
        return failed ? -1 : 0;
    void *buf = NULL;
    size_t len = 0;
    if (!failed) {
        uint64_t t0 = rmpi_now_us();
        if (sw_tree_pack(t, &buf, &len) < 0) {
            fprintf(stderr, "rspwalk-mpi: rank %d: packing the tree: out of memory\n", rank);
            failed = true;
        } else if (len > INT_MAX) {
            fprintf(stderr,
                    "rspwalk-mpi: rank %d: the packed tree is %zu bytes, more than one MPI "
                    "message takes (--countrep makes it smaller)\n",
                    rank, len);
            failed = true;
        }
        st->pack_us = rmpi_now_us() - t0;
    }
    /* An empty message says the subtree failed. */
    if (failed)
        len = 0;
    st->bytes_out = len;
    MPI_Send(buf, (int)len, MPI_BYTE, (rank - 1) / fanout, RMPI_TAG_TREE, MPI_COMM_WORLD);
    free(buf);
    return failed ? -1 : 0;
}
