/* tests/tools/self_object.h -- where a runtime address of the test itself lives.
 *
 * The file and load bias of the object (the test binary or a shared library)
 * holding an address of this process, from dl_iterate_phdr.  Test-only.
 */
#ifndef RSPWALK_TESTS_SELF_OBJECT_H
#define RSPWALK_TESTS_SELF_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

struct obj_query {
    uintptr_t addr;
    uintptr_t bias;
    char path[512];
    bool found;
};

/* The file and load bias of the object holding runtime address ADDR; fails
 * the current cmocka test when no loaded object holds it. */
struct obj_query object_of(uintptr_t addr);

#endif /* RSPWALK_TESTS_SELF_OBJECT_H */
