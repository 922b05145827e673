/* tests/tools/self_object.c -- where a runtime address of the test itself lives.
 *
 * dl_iterate_phdr over this process's objects; test-only.
 */
#define _GNU_SOURCE
#include "tests/tools/self_object.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int
find_obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct obj_query *q = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz) {
            q->bias = info->dlpi_addr;
            snprintf(q->path, sizeof q->path, "%s",
                     info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
            q->found = true;
            return 1;
        }
    }
    return 0;
}

struct obj_query
object_of(uintptr_t addr)
{
    struct obj_query q;
    memset(&q, 0, sizeof q);
    q.addr = addr;
    dl_iterate_phdr(find_obj_cb, &q);
    assert_true(q.found);
    return q;
}
