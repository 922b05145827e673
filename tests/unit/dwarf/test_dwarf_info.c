/* tests/unit/dwarf/test_dwarf_info.c -- inline chains and tail-call chains from real DWARF.
 *
 * Reads this machine's libc debug file (Debian 12's libc6-dbg, DWARF 5 with
 * compressed sections) at addresses where gdb 13 showed inline and tail-call
 * frames, and the failures: no debug info, a non-ELF file, a missing file.
 * Host-only: the addresses belong to one libc build, checked by its build-id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "util/util.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* The addresses below are link-time addresses in the libc of this build (Debian
 * 12, libc6 2.36-9+deb12u14).  They were obtained by running
 *   gdbserver 127.0.0.1:0 build/fixtures/x86_64/threads-s1-O0-dyn
 *   tests/integration/gdb_oracle.sh --continue 127.0.0.1:PORT
 * build/fixtures/x86_64/threads-s1-O0-dyn and subtracting libc's load base there, 0x7ffff7dd3000
 * (its first PT_LOAD is at 0; e.g. __GI___libc_read is at 0xf82a0 in .symtab, 0x7ffff7ecb2a0 in
 * gdb). gdb showed, innermost first (pc - base): thread 1: __pthread_kill_implementation 0x8aeec,
 * [tailcall]
 *             __pthread_kill_internal 0x8af4f, __GI_raise 0x3bfb2, c, b, a, main,
 *             __libc_start_call_main 0x2724a, __libc_start_main_impl 0x27305, _start
 *   thread 2: [inline] __GI___libc_read 0xf82ec, __GI___libc_read 0xf82ec, t1_inner,
 *             t1_outer, t1_main, start_thread 0x891f5, clone3 0x1098ec
 *   thread 3: __GI___clock_nanosleep 0xcf545, __GI___nanosleep 0xd3e53, t2_inner, ...
 *   thread 4: [inline] __futex_abstimed_wait_common64 0x85f16,
 *             __futex_abstimed_wait_common 0x85f16, [tailcall]
 *             __GI___futex_abstimed_wait_cancelable64 0x85f7b, [inline]
 *             __pthread_cond_wait_common 0x885d8, ___pthread_cond_wait 0x885d8, t3_inner, ... */
static const uint8_t libc_build_id[] = {
    0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1, 0x39, 0x6f, 0x9f,
    0xbd, 0x35, 0x0e, 0x31, 0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40
};

struct fixture {
    struct sw_elfcache *cache;
    struct sw_elf *libc;
    struct sw_dinfo *d;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct sw_errbuf err = { 0 };
    const uint8_t *id;
    size_t idlen;

    assert_non_null(f);
    f->cache = sw_elfcache_new(NULL);
    assert_non_null(f->cache);
    if (sw_elfcache_open(f->cache, LIBC, &f->libc, &err) != 0)
        fail_msg("%s", err.msg);
    sw_elf_build_id(f->libc, &id, &idlen);
    if (idlen != sizeof libc_build_id || memcmp(id, libc_build_id, idlen) != 0)
        fail_msg("%s is not the libc these addresses were taken from (build-id 93ac61ec...); "
                 "derive them again as the comment above libc_build_id says",
                 LIBC);
    if (sw_elf_debug_path(f->libc) == NULL)
        fail_msg("no debug file for %s under /usr/lib/debug/.build-id: "
                 "apt-get install libc6-dbg",
                 LIBC);
    if (sw_dinfo_open(LIBC, sw_elf_debug_path(f->libc), f->libc, &f->d, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(sw_dinfo_has_info(f->d));
    assert_string_equal(sw_dinfo_source(f->d), sw_elf_debug_path(f->libc));
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    sw_dinfo_close(f->d);
    sw_elfcache_free(f->cache);
    free(f);
    return 0;
}

/* The inline chain at VADDR as "a,b,c" (innermost first). */
static const char *
chain_at(struct sw_dinfo *d, sw_addr vaddr)
{
    static char buf[512];
    struct sw_dinfo_name names[16];
    size_t n = 99;
    assert_int_equal(sw_dinfo_inline_chain(d, vaddr, names, 16, &n), 0);
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        assert_non_null(names[i].name);
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "," : "", names[i].name);
    }
    return buf;
}

static void
test_dinfo_read_pc_is_inside_libc_read_inlined_into_itself(void **state)
{
    struct fixture *f = *state;
    struct sw_dinfo_name names[4];
    size_t n;
    assert_string_equal(chain_at(f->d, 0xf82ec), "__GI___libc_read");
    assert_int_equal(sw_dinfo_inline_chain(f->d, 0xf82ec, names, 4, &n), 0);
    /* the inlined copy's first range starts at 0xf82d2 (llvm-dwarfdump) */
    assert_int_equal(names[0].entry, 0xf82d2);
}

static void
test_dinfo_futex_wait_and_cond_wait_pcs_are_inside_their_inlined_helpers(void **state)
{
    struct fixture *f = *state;
    assert_string_equal(chain_at(f->d, 0x85f16), "__futex_abstimed_wait_common64");
    /* a caller frame is looked up at RA - 1 */
    assert_string_equal(chain_at(f->d, 0x885d8 - 1), "__pthread_cond_wait_common");
}

static void
test_dinfo_frames_gdb_shows_without_inline_frames_have_an_empty_chain(void **state)
{
    struct fixture *f = *state;
    static const sw_addr pcs[] = {
        0x8aeec,     /* __pthread_kill_implementation, frame 0 */
        0x3bfb2 - 1, /* __GI_raise */
        0x2724a - 1, /* __libc_start_call_main */
        0x27305 - 1, /* __libc_start_main_impl */
        0x891f5 - 1, /* start_thread */
        0xcf545,     /* __GI___clock_nanosleep, frame 0 */
        0xd3e53 - 1, /* __GI___nanosleep */
    };
    for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
        if (chain_at(f->d, pcs[i])[0] != 0)
            fail_msg("0x%llx: inline chain %s, gdb shows none", (unsigned long long)pcs[i],
                     chain_at(f->d, pcs[i]));
}

static void
test_dinfo_function_entry_is_the_concrete_functions_low_pc(void **state)
{
    struct fixture *f = *state;
    sw_addr entry = 0;
    assert_int_equal(sw_dinfo_function_entry(f->d, 0x85f16, &entry), 0);
    assert_int_equal(entry, 0x85e50); /* __futex_abstimed_wait_common in .symtab */
    assert_int_equal(sw_dinfo_function_entry(f->d, 0x8aeec, &entry), 0);
    assert_int_equal(entry, 0x8ade0); /* __pthread_kill_implementation */
    /* the ELF header: no function */
    assert_int_equal(sw_dinfo_function_entry(f->d, 0x10, &entry), SW_ENOENT);
}

static void
test_dinfo_raise_to_pthread_kill_implementation_is_one_tailcall_frame(void **state)
{
    struct fixture *f = *state;
    struct sw_dinfo_tail t[4];
    size_t n = 99;
    /* raise calls __pthread_kill (a declaration in raise.c, resolved by
     * name), whose inlined __pthread_kill_internal jumps to the callee. */
    assert_int_equal(sw_dinfo_tailcall_chain(f->d, 0x3bfb2, 0x8ade0, t, 4, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].name, "__pthread_kill_internal");
    assert_int_equal(t[0].pc, 0x8af4f);
}

static void
test_dinfo_cond_wait_to_futex_common_is_one_tailcall_frame(void **state)
{
    struct fixture *f = *state;
    struct sw_dinfo_tail t[4];
    size_t n = 99;
    assert_int_equal(sw_dinfo_tailcall_chain(f->d, 0x885d8, 0x85e50, t, 4, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].name, "__GI___futex_abstimed_wait_cancelable64");
    assert_int_equal(t[0].pc, 0x85f7b);
}

static void
test_dinfo_direct_call_and_non_call_sites_give_no_tailcall_frames(void **state)
{
    struct fixture *f = *state;
    struct sw_dinfo_tail t[4];
    size_t n = 99;
    /* raise's call site targets __pthread_kill itself (0x8af40): direct */
    assert_int_equal(sw_dinfo_tailcall_chain(f->d, 0x3bfb2, 0x8af40, t, 4, &n), 0);
    assert_int_equal(n, 0);
    /* a return address with no call site */
    n = 99;
    assert_int_equal(sw_dinfo_tailcall_chain(f->d, 0x3bfb3, 0x8ade0, t, 4, &n), 0);
    assert_int_equal(n, 0);
    /* a callee no chain reaches */
    n = 99;
    assert_int_equal(sw_dinfo_tailcall_chain(f->d, 0x3bfb2, 0xf82a0, t, 4, &n), 0);
    assert_int_equal(n, 0);
    /* MAX 0: counts nothing */
    n = 99;
    assert_int_equal(sw_dinfo_tailcall_chain(f->d, 0x3bfb2, 0x8ade0, t, 0, &n), 0);
    assert_int_equal(n, 0);
}

static void
test_dinfo_without_the_elf_a_declared_target_ends_the_search(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    struct sw_dinfo *d;
    struct sw_dinfo_tail t[4];
    size_t n = 99;
    assert_int_equal(sw_dinfo_open(LIBC, sw_elf_debug_path(f->libc), NULL, &d, &err), 0);
    assert_int_equal(sw_dinfo_tailcall_chain(d, 0x3bfb2, 0x8ade0, t, 4, &n), 0);
    assert_int_equal(n, 0);
    /* ___pthread_cond_wait's call site also names a declaration */
    n = 99;
    assert_int_equal(sw_dinfo_tailcall_chain(d, 0x885d8, 0x85e50, t, 4, &n), 0);
    assert_int_equal(n, 0);
    sw_dinfo_close(d);
}

static void
test_dinfo_file_without_debug_info_gives_no_frames_and_no_error(void **state)
{
    (void)state;
    struct sw_errbuf err = { 0 };
    struct sw_dinfo *d = NULL;
    struct sw_dinfo_name names[4];
    struct sw_dinfo_tail t[4];
    size_t n = 99;
    /* libc.so.6 itself is stripped: .eh_frame, no .debug_info */
    assert_int_equal(sw_dinfo_open(LIBC, NULL, NULL, &d, &err), 0);
    assert_false(sw_dinfo_has_info(d));
    assert_null(sw_dinfo_source(d));
    assert_int_equal(sw_dinfo_inline_chain(d, 0xf82ec, names, 4, &n), 0);
    assert_int_equal(n, 0);
    n = 99;
    assert_int_equal(sw_dinfo_tailcall_chain(d, 0x3bfb2, 0x8ade0, t, 4, &n), 0);
    assert_int_equal(n, 0);
    sw_addr entry;
    assert_int_equal(sw_dinfo_function_entry(d, 0xf82ec, &entry), SW_ENOENT);
    sw_dinfo_close(d);
}

static void
test_dinfo_non_elf_file_is_ebadelf_naming_it(void **state)
{
    (void)state;
    char path[] = "/tmp/test_dwarf_info.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
    close(fd);
    struct sw_errbuf err = { 0 };
    struct sw_dinfo *d = NULL;
    assert_int_equal(sw_dinfo_open(path, NULL, NULL, &d, &err), SW_EBADELF);
    assert_null(d);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "not an ELF file"));
    unlink(path);
}

static void
test_dinfo_missing_file_is_enoent_and_bad_debug_file_falls_back(void **state)
{
    (void)state;
    struct sw_errbuf err = { 0 };
    struct sw_dinfo *d = NULL;
    assert_int_equal(sw_dinfo_open("/nonexistent/libfoo.so", NULL, NULL, &d, &err), SW_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/libfoo.so"));
    /* a debug file that is not there: the file's own (absent) info */
    assert_int_equal(sw_dinfo_open(LIBC, "/nonexistent/x.debug", NULL, &d, &err), 0);
    assert_false(sw_dinfo_has_info(d));
    sw_dinfo_close(d);
    sw_dinfo_close(NULL);
}

/* Every allocation of open + queries fails once in turn: each run ends with
 * 0 or SW_ENOMEM, a later retry on the same object answers correctly, and
 * (under ASan) nothing leaks. */
static void
test_dinfo_allocation_failures_return_enomem_and_leak_nothing(void **state)
{
    struct fixture *f = *state;
    const char *debug = sw_elf_debug_path(f->libc);
    bool finished = false;
    for (unsigned long k = 1; k < 5000 && !finished; k++) {
        struct sw_errbuf err = { 0 };
        struct sw_dinfo *d = NULL;
        struct sw_dinfo_name names[4];
        struct sw_dinfo_tail t[4];
        size_t n = 0, nt = 0;
        sw_test_fail_alloc_at(k);
        int rc = sw_dinfo_open(LIBC, debug, f->libc, &d, &err);
        if (rc == 0)
            rc = sw_dinfo_inline_chain(d, 0x85f16, names, 4, &n);
        if (rc == 0)
            rc = sw_dinfo_tailcall_chain(d, 0x3bfb2, 0x8ade0, t, 4, &nt);
        unsigned long count = sw_test_alloc_count();
        sw_test_fail_alloc_at(0);
        if (rc != 0 && rc != SW_ENOMEM)
            fail_msg("allocation %lu failed: %s %s", k, sw_errname(rc),
                     d ? sw_dinfo_errmsg(d) : err.msg);
        if (rc == 0) {
            /* libdwarf's own allocations do not count: the sweep ends when
             * ours are all past. */
            finished = count < k;
            assert_int_equal(n, 1);
            assert_int_equal(nt, 1);
        } else if (d != NULL) {
            assert_int_equal(sw_dinfo_inline_chain(d, 0x85f16, names, 4, &n), 0);
            assert_int_equal(n, 1);
            assert_int_equal(sw_dinfo_tailcall_chain(d, 0x3bfb2, 0x8ade0, t, 4, &nt), 0);
            assert_int_equal(nt, 1);
        }
        sw_dinfo_close(d);
    }
    assert_true(finished);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dinfo_read_pc_is_inside_libc_read_inlined_into_itself),
        cmocka_unit_test(test_dinfo_futex_wait_and_cond_wait_pcs_are_inside_their_inlined_helpers),
        cmocka_unit_test(test_dinfo_frames_gdb_shows_without_inline_frames_have_an_empty_chain),
        cmocka_unit_test(test_dinfo_function_entry_is_the_concrete_functions_low_pc),
        cmocka_unit_test(test_dinfo_raise_to_pthread_kill_implementation_is_one_tailcall_frame),
        cmocka_unit_test(test_dinfo_cond_wait_to_futex_common_is_one_tailcall_frame),
        cmocka_unit_test(test_dinfo_direct_call_and_non_call_sites_give_no_tailcall_frames),
        cmocka_unit_test(test_dinfo_without_the_elf_a_declared_target_ends_the_search),
        cmocka_unit_test(test_dinfo_file_without_debug_info_gives_no_frames_and_no_error),
        cmocka_unit_test(test_dinfo_non_elf_file_is_ebadelf_naming_it),
        cmocka_unit_test(test_dinfo_missing_file_is_enoent_and_bad_debug_file_falls_back),
        cmocka_unit_test(test_dinfo_allocation_failures_return_enomem_and_leak_nothing),
    };
    return cmocka_run_group_tests_name("dwarf_info", tests, setup, teardown);
}
