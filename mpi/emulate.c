/* mpi/emulate.c -- STATBench's method: synthetic stacks made in each rank, to time the merge alone.
 *
 * CLASSES distinct call paths of DEPTH frames: main, then a binary split
 * over the first ceil(log2 CLASSES) frames (the classes share prefixes as a
 * real program's states do), then a chain of frames of the class's own.
 * Task G of TASKS is in class G * CLASSES / TASKS: neighbouring tasks in
 * the same state, as ranks of one phase of an MPI job often are; or, with
 * SCATTER, in class G mod CLASSES, a task set of TASKS / CLASSES ranges a
 * class, the worst case of range lists (count+rep's case).  Every
 * rank computes the same paths, so N ranks making tasks FIRST.. of their
 * share give the tree one rank making them all gives.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/rmpi.h"

/* The module every emulated frame is in. */
#define EMU_MODULE "emulated"

/* Frame I of class C's path, CLASS_BITS the split's depth: written to BUF. */
static void
frame_name(char *buf, size_t len, size_t i, size_t c, unsigned class_bits)
{
    if (i == 0)
        snprintf(buf, len, "main");
    else if (i <= class_bits)
        /* The split: frame I tells the classes apart by their top I bits. */
        snprintf(buf, len, "split_%zu_%zu", i, c >> (class_bits - i));
    else
        snprintf(buf, len, "work_%zu_%zu", i, c);
}

int
rmpi_emulate(struct sw_tree *t, uint64_t tasks, size_t depth, size_t classes, bool scatter,
             uint64_t first, uint64_t count)
{
    unsigned bits = 0;
    while (bits < 63 && ((size_t)1 << bits) < classes)
        bits++;
    /* The names of every class's frames, made once: NAMES[c * DEPTH + i]. */
    char *names = malloc(classes * depth * 32);
    struct sw_tree_frame *paths = calloc(classes * depth, sizeof *paths);
    int rc = 0;

    if (names == NULL || paths == NULL) {
        free(names);
        free(paths);
        return SW_ENOMEM;
    }
    for (size_t c = 0; c < classes; c++)
        for (size_t i = 0; i < depth; i++) {
            char *nm = names + (c * depth + i) * 32;
            frame_name(nm, 32, i, c, bits);
            paths[c * depth + i] = (struct sw_tree_frame){ nm, EMU_MODULE, 0x1000 + i };
        }
    for (uint64_t g = first; rc == 0 && g < first + count; g++) {
        /* In 128 bits: TASKS * CLASSES may pass 2^64. */
        size_t c =
            scatter ? (size_t)(g % classes) : (size_t)((unsigned __int128)g * classes / tasks);
        size_t task;
        rc = sw_tree_add_task(t, NULL, 0, NULL, &task);
        if (rc == 0)
            rc = sw_tree_add_path(t, task, &paths[c * depth], depth, 1);
    }
    free(names);
    free(paths);
    return rc;
}
