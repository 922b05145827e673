/* tests/fuzz/fuzz_dwarf.c -- libFuzzer target for the DWARF DIEs behind --locals.
 *
 * The input is [pc:8][pc:8][ELF file], numbers little-endian (the seeds are
 * debug files of test programs, with pcs inside their functions).  The file
 * is opened as the module cache opens one (sw_dinfo_open, through a memfd's
 * path), and at each pc the function, the inline chain, the line, and the
 * variables of the frame and of each inlined subroutine are read: every
 * name, type (one level of members and elements) and location touched.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dwarf/dwarf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t
le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static volatile size_t sink;

static void
touch_type(const struct sw_dinfo_type *t, int depth)
{
    if (t == NULL || depth > 2)
        return;
    sink += t->name ? strlen(t->name) : 0;
    sink += t->size + t->count;
    touch_type(t->target, depth + 1);
    for (size_t i = 0; i < t->nmembers; i++) {
        sink += t->members[i].name ? strlen(t->members[i].name) : 0;
        sink += t->members[i].offset;
        touch_type(t->members[i].type, depth + 1);
    }
}

static void
touch_func(struct sw_dinfo_func *fn)
{
    sink += fn->name ? strlen(fn->name) : 0;
    for (size_t i = 0; i < fn->nbase; i++)
        sink += fn->base[i].nops;
    for (size_t i = 0; i < fn->nvars; i++) {
        const struct sw_dinfo_var *v = &fn->vars[i];
        sink += v->name ? strlen(v->name) : 0;
        if (v->type == NULL)
            abort(); /* the header says never */
        touch_type(v->type, 0);
        for (size_t k = 0; k < v->nlocs; k++)
            sink += v->locs[k].nops + v->locs[k].lo;
        if (v->cval && v->cval->data)
            for (size_t k = 0; k < v->cval->len; k++)
                sink += v->cval->data[k];
    }
    sw_dinfo_func_free(fn);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    sw_addr pcs[2] = { le64(data), le64(data + 8) };
    int fd = memfd_create("fuzz_dwarf", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    if (write(fd, data + 16, size - 16) != (ssize_t)(size - 16))
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    struct sw_dinfo *d;
    struct sw_errbuf err = { 0, "" };
    if (sw_dinfo_open(path, NULL, NULL, &d, &err) == 0) {
        for (size_t i = 0; i < 2; i++) {
            struct sw_dinfo_name chain[8];
            size_t n = 0;
            (void)sw_dinfo_inline_chain(d, pcs[i], chain, 8, &n);
            struct sw_dinfo_name fname;
            (void)sw_dinfo_function(d, pcs[i], &fname);
            const char *file, *dir;
            unsigned line;
            (void)sw_dinfo_line(d, pcs[i], &file, &dir, &line);
            struct sw_dinfo_func *fn;
            if (sw_dinfo_frame_vars(d, pcs[i], &fn) == 0)
                touch_func(fn);
            for (size_t k = 0; k < n && k < 8; k++)
                if (sw_dinfo_inline_vars(d, pcs[i], k, &fn) == 0)
                    touch_func(fn);
        }
        sw_dinfo_close(d);
    }
    close(fd);
    return 0;
}
