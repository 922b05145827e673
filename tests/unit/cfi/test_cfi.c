/* tests/unit/cfi/test_cfi.c -- call frame information from real files through libdwarf.
 *
 * Rows of this test binary (/proc/self/exe: a function entry, the PLT) and
 * of the running libc (__restore_rt, a signal frame), and the failures:
 * missing, non-ELF and truncated files, addresses no FDE covers.
 * Host-only: runs on x86-64 Linux, where the test machine is.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/self_object.h"
#include "util/util.h"
#include "cfi/cfi.h"
#include "expr/expr.h"

/* ---- where things are in this process ---------------------------------- */

/* A function of this test that CFI must describe at its first byte. */
__attribute__((noinline)) int cfi_probe_function(int x);
__attribute__((noinline)) int
cfi_probe_function(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

/* glibc returns from every signal handler into __restore_rt: the handler's
 * return address is its runtime address. */
static volatile uintptr_t restore_rt_addr;

__attribute__((noinline)) static void
catch_return_address(int sig)
{
    (void)sig;
    restore_rt_addr = (uintptr_t)__builtin_return_address(0);
}

static uintptr_t
find_restore_rt(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = catch_return_address;
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    raise(SIGUSR1);
    sigaction(SIGUSR1, &old, NULL);
    assert_true(restore_rt_addr != 0);
    return restore_rt_addr;
}

/* The link-time address of section NAME of PATH, 0 if none (libelf). */
static uint64_t
section_addr(const char *path, const char *name)
{
    uint64_t addr = 0;
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    assert_non_null(e);
    assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
    for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        gelf_getshdr(s, &sh);
        const char *n = elf_strptr(e, shstrndx, sh.sh_name);
        if (n && strcmp(n, name) == 0)
            addr = sh.sh_addr;
    }
    elf_end(e);
    close(fd);
    return addr;
}

/* The separate debug file of PATH by build-id, or NULL if not installed. */
static char *
build_id_debug_file(const char *path)
{
    char cmd[1024], line[512], *res = NULL;
    snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null | awk '/Build ID/{print $3}'", path);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return NULL;
    if (fgets(line, sizeof line, f) && strlen(line) > 3) {
        line[strcspn(line, "\n")] = 0;
        char dbg[640];
        snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%.2s/%s.debug", line, line + 2);
        if (access(dbg, R_OK) == 0)
            res = strdup(dbg);
    }
    pclose(f);
    return res;
}

static bool
frame_reg(void *arg, unsigned dw, sw_word *val)
{
    return sw_frame_reg(arg, dw, val);
}

/* Registers from a frame, 4 KiB of memory at 0x10000. */
struct flat_frame {
    const struct sw_frame *frame;
    const uint8_t *mem;
};

static bool
flat_reg(void *arg, unsigned dw, sw_word *val)
{
    const struct flat_frame *ff = arg;
    return sw_frame_reg(ff->frame, dw, val);
}

static int
flat_read(void *arg, sw_addr addr, void *buf, size_t len)
{
    const uint8_t *mem = ((const struct flat_frame *)arg)->mem;
    if (addr < 0x10000 || addr + len > 0x11000)
        return SW_EMEM;
    memcpy(buf, mem + (addr - 0x10000), len);
    return 0;
}

/* ---- tests ------------------------------------------------------------- */

static void
test_cfi_function_entry_row_is_cfa_sp_plus_8_ra_at_cfa_minus_8(void **state)
{
    (void)state;
    struct obj_query q = object_of((uintptr_t)&cfi_probe_function);
    sw_addr link = (uintptr_t)&cfi_probe_function - q.bias;
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    static struct sw_cfi_row row;

    assert_int_equal(sw_cfi_open("/proc/self/exe", NULL, 8, &c, &err), 0);
    assert_int_equal(sw_cfi_row_at(c, link, &row, &err), 0);
    assert_false(row.cfa_is_expr);
    assert_int_equal(row.cfa_reg, 7);
    assert_int_equal(row.cfa_offset, 8);
    assert_int_equal(row.ra_column, 16);
    assert_false(row.signal_frame);
    assert_int_equal(row.rules[16].kind, SW_CFI_OFFSET);
    assert_int_equal(row.rules[16].offset, -8);
    assert_int_equal(row.rules[3].kind, SW_CFI_SAME); /* rbx: no rule */
    assert_int_equal(row.lo, link);
    assert_true(row.hi > link);
    sw_cfi_close(c);
}

static void
test_cfi_plt_row_is_the_binutils_cfa_expression(void **state)
{
    (void)state;
    uint64_t plt = section_addr("/proc/self/exe", ".plt");
    if (plt == 0)
        skip();
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    static struct sw_cfi_row row;
    struct sw_frame f;
    sw_addr cfa = 0;

    assert_int_equal(sw_cfi_open("/proc/self/exe", NULL, 8, &c, &err), 0);
    /* The second PLT entry: 16 bytes in, after PLT0. */
    assert_int_equal(sw_cfi_row_at(c, plt + 16, &row, &err), 0);
    assert_true(row.cfa_is_expr);
    assert_false(row.cfa_expr.undecodable);
    /* libdwarf's decoding of binutils' expression: DW_OP_breg7 8; DW_OP_breg16 0;
     * DW_OP_lit15; DW_OP_and; DW_OP_lit11 (or lit10); DW_OP_ge; DW_OP_lit3; DW_OP_shl;
     * DW_OP_plus, at byte offsets 0, 2, 4, 5... */
    assert_int_equal(row.cfa_expr.nops, 9);
    assert_int_equal(row.cfa_expr.ops[0].atom, 0x77);
    assert_int_equal(row.cfa_expr.ops[0].number, 8);
    assert_int_equal(row.cfa_expr.ops[1].atom, 0x80);
    assert_int_equal(row.cfa_expr.ops[1].offset, 2);
    assert_int_equal(row.cfa_expr.ops[8].atom, 0x22);
    assert_int_equal(row.cfa_expr.ops[8].offset, 10);

    sw_frame_init(&f);
    sw_frame_set_reg(&f, 7, 0x7ff000);
    struct sw_expr_ctx ctx = { .addr_size = 8, .reg = frame_reg, .arg = &f, .err = &err };
    sw_frame_set_reg(&f, 16, plt + 16); /* jmp *GOT(%rip): nothing pushed yet */
    assert_int_equal(sw_expr_eval_word(&ctx, row.cfa_expr.ops, row.cfa_expr.nops, &cfa), 0);
    assert_int_equal(cfa, 0x7ff008);
    sw_frame_set_reg(&f, 16, plt + 16 + 11); /* after push $index */
    assert_int_equal(sw_expr_eval_word(&ctx, row.cfa_expr.ops, row.cfa_expr.nops, &cfa), 0);
    assert_int_equal(cfa, 0x7ff010);
    sw_cfi_close(c);
}

static void
test_cfi_restore_rt_row_is_a_signal_frame_read_from_the_ucontext(void **state)
{
    (void)state;
    uintptr_t rt = find_restore_rt();
    struct obj_query q = object_of(rt);
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    static struct sw_cfi_row row;
    static uint8_t mem[4096];

    assert_int_equal(sw_cfi_open(q.path, NULL, 8, &c, &err), 0);
    assert_int_equal(sw_cfi_row_at(c, rt - q.bias, &row, &err), 0);
    assert_true(row.signal_frame);
    assert_true(row.cfa_is_expr);
    assert_int_equal(row.ra_column, 16);
    assert_int_equal(row.rules[16].kind, SW_CFI_EXPRESSION);
    assert_int_equal(row.rules[7].kind, SW_CFI_EXPRESSION);
    assert_int_equal(row.rules[6].kind, SW_CFI_EXPRESSION);
    /* glibc's FDE starts at the nop before __restore_rt so that RA-1
     * lookups find it too. */
    assert_true(row.lo < rt - q.bias);

    /* The saved registers sit where arch/x86_64.c's signal frame says:
     * SP + 40 + 8 * slot, rsp in slot 15, rip in 16. */
    const struct arch_sigframe *sf = arch_x86_64.sigframe;
    struct sw_frame f;
    sw_frame_init(&f);
    sw_frame_set_reg(&f, 7, 0x10000);
    uint64_t saved_rsp = 0x7ffd1230, saved_rip = 0x401abc, saved_rbp = 0x7ffd1300;
    memcpy(mem + sf->mcontext_offset + 15 * 8, &saved_rsp, 8);
    memcpy(mem + sf->mcontext_offset + 16 * 8, &saved_rip, 8);
    memcpy(mem + sf->mcontext_offset + 10 * 8, &saved_rbp, 8);
    struct flat_frame ff = { .frame = &f, .mem = mem };
    struct sw_expr_ctx ctx = {
        .addr_size = 8, .reg = flat_reg, .read = flat_read, .arg = &ff, .err = &err
    };
    sw_addr cfa = 0, slot = 0;
    assert_int_equal(sw_expr_eval_word(&ctx, row.cfa_expr.ops, row.cfa_expr.nops, &cfa), 0);
    assert_int_equal(cfa, saved_rsp);
    ctx.have_cfa = ctx.push_cfa = true;
    ctx.cfa = cfa;
    assert_int_equal(
        sw_expr_eval_word(&ctx, row.rules[16].expr.ops, row.rules[16].expr.nops, &slot), 0);
    assert_int_equal(slot, 0x10000 + sf->mcontext_offset + 16 * 8);
    assert_int_equal(sw_expr_eval_word(&ctx, row.rules[6].expr.ops, row.rules[6].expr.nops, &slot),
                     0);
    assert_int_equal(slot, 0x10000 + sf->mcontext_offset + 10 * 8);
    sw_cfi_close(c);
}

static void
test_cfi_libc_with_its_debug_file_opens_and_finds_rows(void **state)
{
    (void)state;
    uintptr_t rt = find_restore_rt();
    struct obj_query q = object_of(rt);
    char *dbg = build_id_debug_file(q.path);
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    static struct sw_cfi_row row;

    /* Debian's libc6-dbg file has no .debug_frame and a NOBITS .eh_frame:
     * it must neither fail the open nor hide the file's own .eh_frame. */
    assert_int_equal(sw_cfi_open(q.path, dbg ? dbg : "/nonexistent.debug", 8, &c, &err), 0);
    assert_int_equal(sw_cfi_row_at(c, rt - q.bias, &row, &err), 0);
    assert_true(row.signal_frame);
    sw_cfi_close(c);
    free(dbg);
}

static void
test_cfi_address_without_fde_is_enocfi_naming_address_and_file(void **state)
{
    (void)state;
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    static struct sw_cfi_row row;

    assert_int_equal(sw_cfi_open("/proc/self/exe", NULL, 8, &c, &err), 0);
    assert_int_equal(sw_cfi_row_at(c, 0x10, &row, &err), SW_ENOCFI);
    assert_non_null(strstr(err.msg, "0x10"));
    assert_non_null(strstr(err.msg, "/proc/self/exe"));
    sw_cfi_close(c);
}

/* Two rows are the same answer: every field, the borrowed expressions by
 * address (both point into the one sw_cfi's sections). */
static void
assert_rows_equal(const struct sw_cfi_row *a, const struct sw_cfi_row *b)
{
    assert_int_equal(a->lo, b->lo);
    assert_int_equal(a->hi, b->hi);
    assert_int_equal(a->cfa_is_expr, b->cfa_is_expr);
    assert_int_equal(a->cfa_reg, b->cfa_reg);
    assert_int_equal(a->cfa_offset, b->cfa_offset);
    assert_ptr_equal(a->cfa_expr.ops, b->cfa_expr.ops);
    assert_int_equal(a->cfa_expr.nops, b->cfa_expr.nops);
    assert_int_equal(a->ra_column, b->ra_column);
    assert_int_equal(a->signal_frame, b->signal_frame);
    assert_int_equal(a->ra_signed, b->ra_signed);
    for (size_t i = 0; i < SW_CFI_MAX_REGS; i++) {
        assert_int_equal(a->rules[i].kind, b->rules[i].kind);
        assert_int_equal(a->rules[i].offset, b->rules[i].offset);
        assert_int_equal(a->rules[i].reg, b->rules[i].reg);
        assert_ptr_equal(a->rules[i].expr.ops, b->rules[i].expr.ops);
        assert_int_equal(a->rules[i].expr.nops, b->rules[i].expr.nops);
    }
}

/* sw_cfi_row_at remembers its last answers: asked again, in any order and
 * past the number it keeps, it answers what it answered the first time, and
 * an address it has no row for stays an error (failures are not kept). */
static void
test_cfi_rows_asked_again_in_any_order_are_the_first_answers(void **state)
{
    (void)state;
    uintptr_t rt = find_restore_rt();
    struct obj_query q = object_of(rt);
    uint64_t text = section_addr(q.path, ".text");
    assert_true(text != 0);
    enum { N = 40 };
    static struct sw_cfi_row first[N], again;
    sw_addr addrs[N];
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    size_t found = 0;

    assert_int_equal(sw_cfi_open(q.path, NULL, 8, &c, &err), 0);
    /* Addresses 4 KiB apart through libc's text, and __restore_rt's. */
    for (size_t i = 0; i < N; i++) {
        addrs[i] = i == 0 ? rt - q.bias : text + 4096 * i + 37 * i;
        if (sw_cfi_row_at(c, addrs[i], &first[i], &err) == 0)
            found++;
        else
            first[i].hi = 0; /* no row there: must stay so */
    }
    assert_true(found > N / 2);
    /* Backwards, then each one three times running, then strided. */
    for (size_t pass = 0; pass < 3; pass++) {
        for (size_t k = 0; k < N; k++) {
            size_t i = pass == 0 ? N - 1 - k : pass == 1 ? k : (k * 7) % N;
            for (int rep = 0; rep < (pass == 1 ? 3 : 1); rep++) {
                int rc = sw_cfi_row_at(c, addrs[i], &again, &err);
                if (first[i].hi == 0) {
                    assert_int_not_equal(rc, 0);
                    continue;
                }
                assert_int_equal(rc, 0);
                assert_rows_equal(&first[i], &again);
            }
        }
    }
    assert_int_equal(sw_cfi_row_at(c, 0x10, &again, &err), SW_ENOCFI);
    assert_int_equal(sw_cfi_row_at(c, 0x10, &again, &err), SW_ENOCFI);
    sw_cfi_close(c);
}

static char *
write_temp(const void *data, size_t len)
{
    char *path = strdup("/tmp/test_cfi_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
    return path;
}

static void
test_cfi_non_elf_file_is_ebadelf_naming_the_file(void **state)
{
    (void)state;
    char *path = write_temp("#!/bin/sh\necho not elf\n", 22);
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };

    assert_int_equal(sw_cfi_open(path, NULL, 8, &c, &err), SW_EBADELF);
    assert_null(c);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
    free(path);
}

static void
test_cfi_truncated_elf_fails_without_aborting(void **state)
{
    (void)state;
    uint8_t junk[80];
    memset(junk, 0x41, sizeof junk);
    memcpy(junk, "\177ELF\2\1\1", 7);
    char *path = write_temp(junk, sizeof junk);
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };

    int rc = sw_cfi_open(path, NULL, 8, &c, &err);
    assert_true(rc == SW_EBADELF || rc == SW_ENOCFI);
    assert_null(c);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
    free(path);
}

static void
test_cfi_missing_file_is_enoent(void **state)
{
    (void)state;
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open("/nonexistent/libfoo.so", NULL, 8, &c, &err), SW_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/libfoo.so"));
}

static void
test_cfi_file_without_frame_sections_is_enocfi_naming_the_file(void **state)
{
    (void)state;
    /* .text, .symtab and a build-id note, no DWARF at all: libdwarf's
     * object init crashed on it; the adapter must say "no CFI" instead. */
    const char *path = SW_TEST_DATA "/x86_64_frames.elf";
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open(path, NULL, 8, &c, &err), SW_ENOCFI);
    assert_null(c);
    assert_non_null(strstr(err.msg, path));
}

static void
test_cfi_word_size_mismatch_is_ebadelf(void **state)
{
    (void)state;
    struct sw_cfi *c = NULL;
    struct sw_errbuf err = { 0 };
    assert_int_equal(sw_cfi_open("/proc/self/exe", NULL, 4, &c, &err), SW_EBADELF);
    assert_non_null(strstr(err.msg, "8-byte"));
}

static void
test_cfi_open_survives_every_allocation_failure(void **state)
{
    (void)state;
    /* Fail each of the adapter's own allocations in turn: a clean error,
     * nothing leaked (ASan). */
    for (unsigned long n = 1; n < 16; n++) {
        struct sw_cfi *c = NULL;
        struct sw_errbuf err = { 0 };
        sw_test_fail_alloc_at(n);
        int rc = sw_cfi_open("/proc/self/exe", NULL, 8, &c, &err);
        sw_test_fail_alloc_at(0);
        if (rc == 0) {
            sw_cfi_close(c);
            return;
        }
        assert_int_equal(rc, SW_ENOMEM);
    }
    fail_msg("sw_cfi_open never succeeded");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfi_function_entry_row_is_cfa_sp_plus_8_ra_at_cfa_minus_8),
        cmocka_unit_test(test_cfi_plt_row_is_the_binutils_cfa_expression),
        cmocka_unit_test(test_cfi_restore_rt_row_is_a_signal_frame_read_from_the_ucontext),
        cmocka_unit_test(test_cfi_libc_with_its_debug_file_opens_and_finds_rows),
        cmocka_unit_test(test_cfi_address_without_fde_is_enocfi_naming_address_and_file),
        cmocka_unit_test(test_cfi_rows_asked_again_in_any_order_are_the_first_answers),
        cmocka_unit_test(test_cfi_non_elf_file_is_ebadelf_naming_the_file),
        cmocka_unit_test(test_cfi_truncated_elf_fails_without_aborting),
        cmocka_unit_test(test_cfi_missing_file_is_enoent),
        cmocka_unit_test(test_cfi_file_without_frame_sections_is_enocfi_naming_the_file),
        cmocka_unit_test(test_cfi_word_size_mismatch_is_ebadelf),
        cmocka_unit_test(test_cfi_open_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests_name("cfi", tests, NULL, NULL);
}
