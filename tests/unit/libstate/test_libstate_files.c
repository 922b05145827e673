/* tests/unit/libstate/test_libstate_files.c -- a module's local file checked in target memory.
 *
 * A local file whose build-id note is loaded is checked by reading that
 * note where the target has the module (libstate/files.c): the same
 * bytes confirm it with no Host I/O at all; another build-id drops it and
 * fetches the target's copy by that id; a note that cannot be read leaves it
 * to read_file's check.  The modules are real libraries of this machine in a
 * temporary sysroot; the target is a fake process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "elf/elf.h"
#include "elf/image.h"
#include "libstate/fetch.h"
#include "libstate/lib.h"

#define LIBC      "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBM      "/lib/x86_64-linux-gnu/libm.so.6"
#define LIBC_BIAS 0x7f0000000000ull

struct fixture {
    struct sw_proc *proc;
    struct sw_libstate *ls;
    struct sw_elfcache *elfs; /* the test's own view of the local files */
    char root[64], sys[128], cache[128];
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    char path[256];
    if (f == NULL)
        return -1;
    f->proc = fake_proc_new(&arch_x86_64);
    f->elfs = sw_elfcache_new(NULL);
    snprintf(f->root, sizeof f->root, "/tmp/test_libstate_files.XXXXXX");
    if (f->proc == NULL || f->elfs == NULL || mkdtemp(f->root) == NULL)
        return -1;
    snprintf(f->sys, sizeof f->sys, "%s/sys", f->root);
    snprintf(f->cache, sizeof f->cache, "%s/cache", f->root);
    snprintf(path, sizeof path, "%s/lib/x86_64-linux-gnu", f->sys);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    if (system(cmd) != 0)
        return -1;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[256];
    sw_libstate_free(f->ls);
    sw_proc_free(f->proc);
    sw_elfcache_free(f->elfs);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", f->root);
    free(f);
    return 0;
}

/* A copy of the host file FROM at TO: a sysroot's absolute links mean the
 * target's paths, resolved inside the sysroot (util/path.h), so a sysroot
 * cannot borrow a host file by linking to it. */
static int
copy_file(const char *from, const char *to)
{
    char cmd[17100];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    return system(cmd);
}

/* The sysroot's LIBC is a copy of HOST. */
static void
sysroot_libc(struct fixture *f, const char *host)
{
    char path[256];
    snprintf(path, sizeof path, "%s%s", f->sys, LIBC);
    assert_int_equal(copy_file(host, path), 0);
}

/* The build-id note of the local file PATH: where it is loaded, its bytes. */
static void
local_note(struct fixture *f, const char *path, sw_addr *vaddr, const uint8_t **note, size_t *len)
{
    struct sw_elf *e;
    struct sw_errbuf err;
    assert_int_equal(sw_elfcache_open(f->elfs, path, &e, &err), 0);
    assert_true(sw_elf_build_id_note(e, vaddr, note, len));
    const uint8_t *id;
    size_t id_len;
    sw_elf_build_id(e, &id, &id_len);
    assert_int_equal(*len, 16 + id_len);
    assert_memory_equal(*note + 16, id, id_len);
}

static struct sw_libstate *
refresh_with(struct fixture *f, const char *lib_path)
{
    struct sw_libstate_config cfg = { .sysroot = f->sys,
                                      .cache_dir = f->cache,
                                      .lib_path = lib_path };
    assert_int_equal(sw_libstate_new(f->proc, &cfg, &f->ls), 0);
    assert_int_equal(sw_libstate_refresh(f->ls), 0);
    return f->ls;
}

static struct sw_libstate *
refresh(struct fixture *f)
{
    return refresh_with(f, NULL);
}

static const struct sw_lib *
libc_of(struct sw_libstate *ls)
{
    for (size_t i = 0; i < sw_libstate_count(ls); i++)
        if (strcmp(sw_libstate_lib(ls, i)->name, LIBC) == 0)
            return sw_libstate_lib(ls, i);
    fail_msg("%s not listed", LIBC);
    return NULL;
}

static void
test_files_note_in_target_memory_confirms_the_local_file_without_host_io(void **state)
{
    struct fixture *f = *state;
    sw_addr vaddr;
    const uint8_t *note;
    size_t len;
    char want[256];
    sysroot_libc(f, LIBC);
    local_note(f, LIBC, &vaddr, &note, &len);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_mem(f->proc, LIBC_BIAS + vaddr, note, len);
    fake_proc_add_file(f->proc, LIBC, LIBC); /* offered, and not needed */

    struct sw_libstate *ls = refresh(f);
    snprintf(want, sizeof want, "%s%s", f->sys, LIBC);
    assert_string_equal(libc_of(ls)->path, want);
    assert_int_equal(fake_proc_file_bytes(f->proc), 0);
    assert_int_equal(fake_proc_reads(f->proc), 1);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 0);
    /* A later refresh checks nothing again. */
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(fake_proc_reads(f->proc), 1);
    assert_string_equal(libc_of(ls)->path, want);
}

/* Target memory holds, where the sysroot's file (libm) has its note, a
 * note of the same shape with LIBC's build-id. */
static void
libc_note_at_libm_place(struct fixture *f)
{
    sw_addr vaddr, libc_vaddr;
    const uint8_t *note, *libc_note;
    size_t len, libc_len;
    uint8_t seen[16 + 64];
    local_note(f, LIBM, &vaddr, &note, &len);
    local_note(f, LIBC, &libc_vaddr, &libc_note, &libc_len);
    assert_int_equal(len, libc_len);
    memcpy(seen, libc_note, len);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_mem(f->proc, LIBC_BIAS + vaddr, seen, len);
}

static void
test_files_other_build_id_in_memory_drops_the_file_and_fetches_by_that_id(void **state)
{
    struct fixture *f = *state;
    sysroot_libc(f, LIBM);
    libc_note_at_libm_place(f);
    fake_proc_add_file(f->proc, LIBC, LIBC);

    struct sw_libstate *ls = refresh(f);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
    assert_string_equal(msgs[0],
                        LIBC ": local file's build-id differs from the target's; not used");
    const struct sw_lib *lib = libc_of(ls);
    assert_non_null(sw_lib_elf(lib));
    assert_non_null(strstr(lib->path, f->cache));
    /* The id came from memory: the file is read once, whole, no first-page read. */
    struct stat st;
    assert_int_equal(stat(LIBC, &st), 0);
    assert_int_equal(fake_proc_file_bytes(f->proc), (size_t)st.st_size);
    assert_true(lib->end > lib->start); /* placed again by the fetched file */
}

static void
test_files_fetch_past_the_ceiling_is_cut_and_leaves_no_file(void **state)
{
    struct fixture *f = *state;
    sysroot_libc(f, LIBM);
    libc_note_at_libm_place(f);
    fake_proc_add_file(f->proc, LIBC, LIBC);

    struct sw_libstate_config cfg = { .sysroot = f->sys,
                                      .cache_dir = f->cache,
                                      .max_fetch_bytes = 1024 * 1024 };
    assert_int_equal(sw_libstate_new(f->proc, &cfg, &f->ls), 0);
    assert_int_equal(sw_libstate_refresh(f->ls), 0);
    const struct sw_lib *lib = libc_of(f->ls);
    assert_null(sw_lib_elf(lib));
    assert_null(lib->path);
    /* Read up to the ceiling (libc is larger), not a byte more than one chunk past it. */
    assert_true(fake_proc_file_bytes(f->proc) >= 1024 * 1024);
    assert_true(fake_proc_file_bytes(f->proc) <= 2 * 1024 * 1024);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -type f 2>/dev/null)\"", f->cache);
    assert_int_equal(system(cmd), 0); /* no partial file left behind */
}

static void
test_files_other_build_id_in_memory_without_host_io_lists_no_file(void **state)
{
    struct fixture *f = *state;
    sysroot_libc(f, LIBM);
    libc_note_at_libm_place(f);

    struct sw_libstate *ls = refresh(f);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
    const struct sw_lib *lib = libc_of(ls);
    assert_null(sw_lib_elf(lib));
    assert_null(lib->path);
    assert_int_equal(access(f->cache, F_OK), -1);
}

static void
test_files_unreadable_note_is_checked_through_the_file_instead(void **state)
{
    struct fixture *f = *state;
    char want[256];
    sysroot_libc(f, LIBC);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS); /* no memory there */
    fake_proc_add_file(f->proc, LIBC, LIBC);

    struct sw_libstate *ls = refresh(f);
    snprintf(want, sizeof want, "%s%s", f->sys, LIBC);
    assert_string_equal(libc_of(ls)->path, want);
    assert_true(fake_proc_file_bytes(f->proc) > 0 && fake_proc_file_bytes(f->proc) <= 4096);
}

static void
test_files_dead_link_during_the_check_fails_the_refresh(void **state)
{
    struct fixture *f = *state;
    struct sw_libstate_config cfg = { .sysroot = f->sys, .cache_dir = f->cache };
    sysroot_libc(f, LIBC);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_fail_reads(f->proc, SW_ETIMEDOUT);
    assert_int_equal(sw_libstate_new(f->proc, &cfg, &f->ls), 0);
    assert_int_equal(sw_libstate_refresh(f->ls), SW_ETIMEDOUT);
    const char *msg = sw_libstate_errmsg(f->ls);
    if (strstr(msg, "checking the modules' build-ids in target memory") == NULL)
        fail_msg("message: %s", msg);
}

/* A little-endian ELF64 image with one 8-aligned PT_NOTE at NOTE_OFF,
 * loaded at 0x400000 + NOTE_OFF: a property note whose descriptor (12
 * bytes) is not a multiple of 8, then the build-id note. */
#define NOTE_OFF 0x100
static size_t
image_with_aligned_notes(uint8_t *img, size_t cap)
{
    memset(img, 0, cap);
    memcpy(img, "\177ELF", 4);
    img[4] = 2;   /* ELFCLASS64 */
    img[5] = 1;   /* ELFDATA2LSB */
    img[32] = 64; /* e_phoff */
    img[54] = 56; /* e_phentsize */
    img[56] = 1;  /* e_phnum */
    uint8_t *ph = img + 64;
    ph[0] = 4;                                                       /* PT_NOTE */
    ph[8] = NOTE_OFF & 0xff, ph[9] = NOTE_OFF >> 8;                  /* p_offset */
    ph[16] = NOTE_OFF & 0xff, ph[17] = NOTE_OFF >> 8, ph[18] = 0x40; /* p_vaddr */
    ph[32] = 32 + 36;                                                /* p_filesz */
    ph[48] = 8;                                                      /* p_align */
    uint8_t *n = img + NOTE_OFF;
    n[0] = 4, n[4] = 12, n[8] = 5; /* NT_GNU_PROPERTY_TYPE_0, 12-byte descriptor */
    memcpy(n + 12, "GNU", 4);      /* the descriptor at 16, the next note at 32 */
    n += 32;
    n[0] = 4, n[4] = 20, n[8] = 3; /* NT_GNU_BUILD_ID */
    memcpy(n + 12, "GNU", 4);
    for (int i = 0; i < 20; i++)
        n[16 + i] = (uint8_t)(0xa0 + i);
    return NOTE_OFF + 32 + 36;
}

static void
test_files_build_id_note_found_after_an_8_aligned_note(void **state)
{
    (void)state;
    uint8_t img[512];
    size_t len = image_with_aligned_notes(img, sizeof img);
    const uint8_t *id, *note;
    size_t id_len, note_len;
    sw_addr vaddr;
    assert_int_equal(sw_elf_image_build_id(img, len, &id, &id_len, NULL), 0);
    assert_int_equal(id_len, 20);
    assert_int_equal(id[0], 0xa0);
    assert_int_equal(sw_elf_image_build_id_note(img, len, &vaddr, &note, &note_len), 0);
    assert_int_equal(vaddr, 0x400000 + NOTE_OFF + 32);
    assert_ptr_equal(note, img + NOTE_OFF + 32);
    assert_int_equal(note_len, 36);
    /* Without the build-id note: none. */
    img[NOTE_OFF + 32 + 8] = 1;
    assert_int_equal(sw_elf_image_build_id_note(img, len, &vaddr, &note, &note_len), SW_ENOENT);
}

/* ---- the library path (gdb's solib-search-path) -------------------------- */

/* DIR under the fixture's root, made, as "ROOT/DIR" into BUF; with TARGET,
 * DIR/libc.so.6 is a symlink to it ("" : an empty file). */
static const char *
lib_dir(struct fixture *f, const char *dir, const char *target, char *buf, size_t len)
{
    char cmd[512], file[512];
    snprintf(buf, len, "%s/%s", f->root, dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", buf);
    assert_int_equal(system(cmd), 0);
    snprintf(file, sizeof file, "%s/libc.so.6", buf);
    if (target != NULL && target[0] != '\0')
        assert_int_equal(symlink(target, file), 0);
    else if (target != NULL) {
        FILE *fp = fopen(file, "w");
        assert_non_null(fp);
        fclose(fp);
    }
    return buf;
}

/* LIBC's note where the target has LIBC: the target runs this libc. */
static void
target_runs_libc(struct fixture *f)
{
    sw_addr vaddr;
    const uint8_t *note;
    size_t len;
    local_note(f, LIBC, &vaddr, &note, &len);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_mem(f->proc, LIBC_BIAS + vaddr, note, len);
}

static void
test_files_library_missing_under_sysroot_found_by_name_in_the_lib_path(void **state)
{
    struct fixture *f = *state;
    char empty[256], junk[256], good[256], path[1024], want[512];
    lib_dir(f, "empty", NULL, empty, sizeof empty);
    lib_dir(f, "junk", "", junk, sizeof junk); /* not ELF: passed over */
    lib_dir(f, "good", LIBC, good, sizeof good);
    target_runs_libc(f);
    snprintf(path, sizeof path, "/nonexistent:%s::%s:%s", empty, junk, good);

    struct sw_libstate *ls = refresh_with(f, path);
    const struct sw_lib *lib = libc_of(ls);
    snprintf(want, sizeof want, "%s/libc.so.6", good);
    assert_non_null(sw_lib_elf(lib));
    assert_string_equal(lib->path, want);
    /* Checked like a sysroot file: its note in target memory, no Host I/O. */
    assert_int_equal(fake_proc_reads(f->proc), 1);
    assert_int_equal(fake_proc_file_bytes(f->proc), 0);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 0);
}

static void
test_files_sysroot_file_comes_before_the_lib_path(void **state)
{
    struct fixture *f = *state;
    char dir[256], want[256];
    sysroot_libc(f, LIBC);
    lib_dir(f, "other", LIBC, dir, sizeof dir);
    target_runs_libc(f);
    struct sw_libstate *ls = refresh_with(f, dir);
    snprintf(want, sizeof want, "%s%s", f->sys, LIBC);
    assert_string_equal(libc_of(ls)->path, want);
}

static void
test_files_lib_path_file_of_another_build_is_not_used(void **state)
{
    struct fixture *f = *state;
    char dir[256];
    lib_dir(f, "stale", LIBM, dir, sizeof dir); /* libc.so.6 there is another build */
    libc_note_at_libm_place(f);
    struct sw_libstate *ls = refresh_with(f, dir);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
    assert_string_equal(msgs[0],
                        LIBC ": local file's build-id differs from the target's; not used");
    assert_null(sw_lib_elf(libc_of(ls))); /* no Host I/O: nothing to fetch */
}

static void
test_files_library_in_no_lib_path_dir_has_no_file(void **state)
{
    struct fixture *f = *state;
    char dir[256];
    lib_dir(f, "empty", NULL, dir, sizeof dir);
    target_runs_libc(f);
    struct sw_libstate *ls = refresh_with(f, dir);
    assert_null(sw_lib_elf(libc_of(ls)));
    assert_null(libc_of(ls)->path);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_files_note_in_target_memory_confirms_the_local_file_without_host_io),
        T(test_files_other_build_id_in_memory_drops_the_file_and_fetches_by_that_id),
        T(test_files_fetch_past_the_ceiling_is_cut_and_leaves_no_file),
        T(test_files_other_build_id_in_memory_without_host_io_lists_no_file),
        T(test_files_unreadable_note_is_checked_through_the_file_instead),
        T(test_files_dead_link_during_the_check_fails_the_refresh),
        T(test_files_library_missing_under_sysroot_found_by_name_in_the_lib_path),
        T(test_files_sysroot_file_comes_before_the_lib_path),
        T(test_files_lib_path_file_of_another_build_is_not_used),
        T(test_files_library_in_no_lib_path_dir_has_no_file),
        cmocka_unit_test(test_files_build_id_note_found_after_an_8_aligned_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
