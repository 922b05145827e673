/* tests/unit/libstate/test_libstate.c -- LibraryState over a fake process.
 *
 * The executable is this test binary (PIE, placed by the auxiliary vector),
 * the modules are real libraries of this machine, some under a sysroot.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "elf/elf.h"
#include "elf/image.h"
#include "libstate/fetch.h"
#include "libstate/lib.h"
#include "libstate/module.h"

#define LIBC         "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBM         "/lib/x86_64-linux-gnu/libm.so.6"
#define AARCH64_LIBC "/usr/aarch64-linux-gnu/lib/libc.so.6"
#define LIBC_BIAS    0x7f0000000000ull
#define LIBM_BIAS    0x7f1000000000ull
/* Where the fake target has its dynamic linker and its vDSO (page-aligned,
 * apart from everything else placed here). */
#define LD_BASE   0x7f2000000000ull
#define VDSO_BASE 0x7ffff7fc1000ull

static char self_path[4096];

static int
main_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first entry is the main program */
}

static uintptr_t
self_bias(void)
{
    uintptr_t b = 0;
    dl_iterate_phdr(main_bias_cb, &b);
    return b;
}

__attribute__((noinline)) static int
libstate_test_marker(int x)
{
    return x + 7;
}

static uintptr_t
marker_addr(void)
{
    int (*fn)(int) = libstate_test_marker;
    uintptr_t a;
    memcpy(&a, &fn, sizeof a);
    return a;
}

/* An auxv of N (tag, value) pairs as a target would send it. */
static void
set_auxv_pairs(struct sw_proc *p, const uint64_t (*pairs)[2], size_t n)
{
    uint64_t buf[32];
    size_t k = 0;
    assert_true(n < 15);
    for (size_t i = 0; i < n; i++) {
        buf[k++] = pairs[i][0];
        buf[k++] = pairs[i][1];
    }
    buf[k++] = AT_NULL;
    buf[k++] = 0;
    fake_proc_set_auxv(p, buf, k * sizeof buf[0]);
}

/* This process's auxv entries TAGS[] as a target would send them. */
static void
set_auxv(struct sw_proc *p, const unsigned long *tags, size_t n)
{
    uint64_t pairs[14][2];
    assert_true(n < 15);
    for (size_t i = 0; i < n; i++) {
        pairs[i][0] = tags[i];
        pairs[i][1] = getauxval(tags[i]);
    }
    set_auxv_pairs(p, pairs, n);
}

/* The PT_INTERP string of this program, from its loaded program headers. */
static int
interp_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            *(const char **)arg = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return 1; /* the first entry is the main program */
}

static const char *
self_interp(void)
{
    const char *interp = NULL;
    dl_iterate_phdr(interp_cb, &interp);
    return interp;
}

/* This process's vDSO (the [vdso] mapping); NULL if it has none. */
static const uint8_t *
own_vdso(size_t *len)
{
    const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    *len = 0;
    while (base && maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            lo == (uintptr_t)base)
            *len = hi - lo;
    }
    if (maps)
        fclose(maps);
    return *len ? base : NULL;
}

/* Put this process's vDSO into the fake target's memory at VDSO_BASE. */
static bool
fake_vdso(struct sw_proc *p)
{
    size_t len;
    const uint8_t *vdso = own_vdso(&len);
    if (vdso == NULL)
        return false;
    fake_proc_add_mem(p, VDSO_BASE, vdso, len);
    return true;
}

struct fixture {
    struct sw_proc *proc;
    struct sw_libstate *ls;
    char *sysroot;
};

static struct sw_libstate *
new_ls(struct fixture *f, const struct sw_libstate_config *cfg)
{
    struct sw_libstate *ls = NULL;
    assert_int_equal(sw_libstate_new(f->proc, cfg, &ls), 0);
    f->ls = ls;
    return ls;
}

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    f->proc = fake_proc_new(&arch_x86_64);
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (f->proc == NULL || n <= 0)
        return -1;
    self_path[n] = '\0';
    *state = f;
    return 0;
}

static void
rm_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    sw_libstate_free(f->ls);
    sw_proc_free(f->proc);
    if (f->sysroot) {
        rm_tree(f->sysroot);
        free(f->sysroot);
    }
    free(f);
    return 0;
}

/* A temporary sysroot holding a symlink to LIBC at its target path. */
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

static const char *
make_sysroot(struct fixture *f)
{
    char tmpl[] = "/tmp/test_libstate.XXXXXX";
    char path[4200];
    assert_non_null(mkdtemp(tmpl));
    f->sysroot = strdup(tmpl);
    snprintf(path, sizeof path, "%s/lib", tmpl);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/lib/x86_64-linux-gnu", tmpl);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s%s", tmpl, LIBC);
    assert_int_equal(copy_file(LIBC, path), 0);
    return f->sysroot;
}

static const struct sw_lib *
find_lib(struct sw_libstate *ls, const char *name)
{
    for (size_t i = 0; i < sw_libstate_count(ls); i++)
        if (strcmp(sw_libstate_lib(ls, i)->name, name) == 0)
            return sw_libstate_lib(ls, i);
    return NULL;
}

static size_t
count_libs(struct sw_libstate *ls, const char *name)
{
    size_t k = 0;
    for (size_t i = 0; i < sw_libstate_count(ls); i++)
        k += strcmp(sw_libstate_lib(ls, i)->name, name) == 0;
    return k;
}

static void
assert_msg_has(const char *msg, const char *part)
{
    if (strstr(msg, part) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", msg, part);
}

/* ---- the executable ------------------------------------------------------ */

static void
test_libstate_pie_exe_from_target_placed_by_at_entry(void **state)
{
    struct fixture *f = *state;
    static const unsigned long tags[] = { AT_ENTRY };
    fake_proc_set_exec_path(f->proc, self_path);
    set_auxv(f->proc, tags, 1);
    struct sw_libstate *ls = new_ls(f, NULL);
    const struct sw_lib *lib;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_lib_at(ls, marker_addr(), &lib), 0);
    assert_true(lib->is_exe);
    assert_string_equal(lib->name, self_path);
    assert_string_equal(lib->path, self_path);
    assert_non_null(sw_lib_elf(lib));
    assert_int_equal(lib->bias, self_bias());
    assert_true(lib->start <= marker_addr() && marker_addr() < lib->end);
    assert_true(lib->l_ld != 0);
    assert_int_equal(libstate_test_marker(0), 7);
}

static void
test_libstate_pie_exe_placed_by_at_phdr_without_at_entry(void **state)
{
    struct fixture *f = *state;
    static const unsigned long tags[] = { AT_PHDR };
    fake_proc_set_exec_path(f->proc, self_path);
    set_auxv(f->proc, tags, 1);
    struct sw_libstate *ls = new_ls(f, NULL);
    const struct sw_lib *lib;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_lib_at(ls, marker_addr(), &lib), 0);
    assert_int_equal(lib->bias, self_bias());
}

static void
test_libstate_pie_exe_without_auxv_gets_bias_zero(void **state)
{
    struct fixture *f = *state;
    fake_proc_set_exec_path(f->proc, self_path);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_count(ls), 1);
    assert_true(sw_libstate_lib(ls, 0)->is_exe);
    assert_int_equal(sw_libstate_lib(ls, 0)->bias, 0);
    assert_null(sw_libstate_lib(ls, 1)); /* past the last module */
}

static void
test_libstate_exe_option_overrides_target_exec_path(void **state)
{
    struct fixture *f = *state;
    static const unsigned long tags[] = { AT_ENTRY };
    struct sw_libstate_config cfg = { .exe = self_path };
    fake_proc_set_exec_path(f->proc, "/nonexistent/prog");
    set_auxv(f->proc, tags, 1);
    struct sw_libstate *ls = new_ls(f, &cfg);
    const struct sw_lib *lib;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_lib_at(ls, marker_addr(), &lib), 0);
    assert_string_equal(lib->name, self_path);
}

static void
test_libstate_exe_option_not_elf_fails_naming_file(void **state)
{
    struct fixture *f = *state;
    struct sw_libstate_config cfg = { .exe = "/etc/passwd" };
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), SW_EBADELF);
    assert_non_null(strstr(sw_libstate_errmsg(ls), "/etc/passwd: not an ELF file"));
}

static void
test_libstate_exe_option_missing_fails_enoent(void **state)
{
    struct fixture *f = *state;
    struct sw_libstate_config cfg = { .exe = "/nonexistent/prog" };
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), SW_ENOENT);
    assert_non_null(strstr(sw_libstate_errmsg(ls), "/nonexistent/prog: no such file"));
}

static void
test_libstate_exe_option_for_other_arch_fails_naming_both(void **state)
{
    struct fixture *f = *state;
    if (access(AARCH64_LIBC, R_OK) != 0)
        skip();
    struct sw_libstate_config cfg = { .exe = AARCH64_LIBC };
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), SW_EBADELF);
    assert_non_null(strstr(sw_libstate_errmsg(ls), AARCH64_LIBC ": built for"));
    assert_non_null(strstr(sw_libstate_errmsg(ls), "the target is x86_64"));
}

static void
test_libstate_target_exe_without_local_copy_listed_without_file(void **state)
{
    struct fixture *f = *state;
    fake_proc_set_exec_path(f->proc, "/nonexistent/prog");
    struct sw_libstate *ls = new_ls(f, NULL);
    const struct sw_lib *lib;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    lib = find_lib(ls, "/nonexistent/prog");
    assert_non_null(lib);
    assert_true(lib->is_exe);
    assert_null(lib->path);
    assert_null(sw_lib_elf(lib));
}

static void
test_libstate_no_executable_known_lists_modules_only(void **state)
{
    struct fixture *f = *state;
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_count(ls), 1);
    assert_false(sw_libstate_lib(ls, 0)->is_exe);
    assert_string_equal(sw_libstate_lib(ls, 0)->name, LIBC);
}

/* ---- the modules --------------------------------------------------------- */

static void
test_libstate_module_placed_at_l_addr_plus_load_range(void **state)
{
    struct fixture *f = *state;
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);
    const struct sw_lib *lib;
    sw_addr lo, hi;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    lib = find_lib(ls, LIBC);
    assert_non_null(lib);
    assert_string_equal(lib->path, LIBC);
    assert_non_null(sw_lib_elf(lib));
    sw_elf_load_range(sw_lib_elf(lib), &lo, &hi);
    assert_int_equal(lib->bias, LIBC_BIAS);
    assert_int_equal(lib->start, LIBC_BIAS + lo);
    assert_int_equal(lib->end, LIBC_BIAS + hi);
    assert_int_equal(lib->l_ld, LIBC_BIAS + sw_elf_dynamic_vaddr(sw_lib_elf(lib)));

    const struct sw_lib *at;
    assert_int_equal(sw_libstate_lib_at(ls, lib->end - 1, &at), 0);
    assert_ptr_equal(at, lib);
    assert_int_equal(sw_libstate_lib_at(ls, lib->end, &at), SW_ENOENT);

    const char *name;
    sw_addr off;
    assert_int_equal(sw_libstate_lib_offset(ls, LIBC_BIAS + 0x1234 + lo, &name, &off), 0);
    assert_string_equal(name, LIBC);
    assert_int_equal(off, 0x1234 + lo);
}

static void
test_libstate_sysroot_prefixes_module_paths(void **state)
{
    struct fixture *f = *state;
    const char *root = make_sysroot(f);
    struct sw_libstate_config cfg = { .sysroot = root };
    char want[4200];
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS); /* not in the sysroot */
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(want, sizeof want, "%s%s", root, LIBC);
    const struct sw_lib *lib = find_lib(ls, LIBC);
    assert_non_null(lib);
    assert_string_equal(lib->path, want);
    assert_non_null(sw_lib_elf(lib));
    lib = find_lib(ls, LIBM);
    assert_non_null(lib);
    assert_null(lib->path);
    assert_null(sw_lib_elf(lib));
}

static void
test_libstate_sysroot_with_trailing_slash_joins_once(void **state)
{
    struct fixture *f = *state;
    char root[4200], want[4200];
    snprintf(root, sizeof root, "%s/", make_sysroot(f));
    struct sw_libstate_config cfg = { .sysroot = root };
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(want, sizeof want, "%s%s", f->sysroot, LIBC);
    assert_string_equal(find_lib(ls, LIBC)->path, want);
}

static void
test_libstate_sysroot_applies_to_target_exec_path(void **state)
{
    struct fixture *f = *state;
    const char *root = make_sysroot(f);
    struct sw_libstate_config cfg = { .sysroot = root };
    char want[4200];
    /* A shared library stands in for the executable: any ELF for the arch. */
    fake_proc_set_exec_path(f->proc, LIBC);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(want, sizeof want, "%s%s", root, LIBC);
    const struct sw_lib *lib = find_lib(ls, LIBC);
    assert_non_null(lib);
    assert_true(lib->is_exe);
    assert_string_equal(lib->path, want);
}

static void
test_libstate_missing_library_listed_without_path(void **state)
{
    struct fixture *f = *state;
    fake_proc_add_module(f->proc, "/nonexistent/libgone.so.1", LIBM_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);
    const struct sw_lib *lib;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    lib = find_lib(ls, "/nonexistent/libgone.so.1");
    assert_non_null(lib);
    assert_null(lib->path);
    assert_null(sw_lib_elf(lib));
    assert_int_equal(lib->bias, LIBM_BIAS);
    assert_int_equal(sw_libstate_lib_at(ls, LIBM_BIAS, &lib), SW_ENOENT);
}

static void
test_libstate_modules_past_the_limit_left_out_with_a_warning(void **state)
{
    struct fixture *f = *state;
    char name[64];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "/nonexistent/lib%d.so", i);
        fake_proc_add_module(f->proc, name, LIBM_BIAS + (sw_addr)i * 0x100000);
    }
    struct sw_libstate_config cfg;
    sw_libstate_config_init(&cfg);
    cfg.max_modules = 3;
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_non_null(find_lib(ls, "/nonexistent/lib0.so"));
    assert_null(find_lib(ls, "/nonexistent/lib4.so"));
    const char *const *msgs;
    size_t n = sw_libstate_warnings(ls, &msgs);
    assert_int_equal(n, 1);
    assert_non_null(strstr(msgs[0], "lists 5 modules, more than the limit of 3"));
    /* A second refresh says it once. */
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
}

static void
test_libstate_library_for_other_arch_listed_without_file(void **state)
{
    struct fixture *f = *state;
    if (access(AARCH64_LIBC, R_OK) != 0)
        skip();
    fake_proc_add_module(f->proc, AARCH64_LIBC, LIBM_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, AARCH64_LIBC);
    assert_non_null(lib);
    assert_null(sw_lib_elf(lib));
    assert_null(lib->path);
}

static void
test_libstate_vdso_listed_as_vdso_without_path(void **state)
{
    struct fixture *f = *state;
    fake_proc_add_module(f->proc, "linux-vdso.so.1", 0x7ffff7fc1000ull);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, "[vdso]");
    assert_non_null(lib);
    assert_null(lib->path);
    assert_int_equal(lib->bias, 0x7ffff7fc1000ull);
}

static void
test_libstate_empty_module_name_skipped(void **state)
{
    struct fixture *f = *state;
    fake_proc_add_module(f->proc, "", 0x1000);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_count(ls), 1);
    assert_string_equal(sw_libstate_lib(ls, 0)->name, LIBC);
}

static void
test_libstate_elf_cache_kept_across_refreshes(void **state)
{
    struct fixture *f = *state;
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    struct sw_elf *first = sw_lib_elf(find_lib(ls, LIBC));
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_ptr_equal(sw_lib_elf(find_lib(ls, LIBC)), first);
    assert_non_null(sw_libstate_elfcache(ls));
}

/* Two library states given one module cache read each file once: the same
 * sw_elf and module for the same file, each placed at its own bias; the
 * cache outlives its creator's reference while they hold theirs. */
static void
test_libstate_shared_module_cache_gives_one_module_per_file(void **state)
{
    struct fixture *f = *state;
    struct sw_proc *other = fake_proc_new(&arch_x86_64);
    struct sw_modcache *mc = NULL;
    struct sw_libstate *b = NULL;

    assert_non_null(other);
    assert_int_equal(sw_modcache_new(NULL, "", &mc), 0);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_module(other, LIBC, LIBC_BIAS + 0x100000);
    struct sw_libstate_config cfg = { .cache_dir = "", .modcache = mc };
    struct sw_libstate *a = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_new(other, &cfg, &b), 0);
    sw_modcache_free(mc); /* the library states keep it */

    assert_int_equal(sw_libstate_refresh(a), 0);
    assert_int_equal(sw_libstate_refresh(b), 0);
    const struct sw_lib *la = find_lib(a, LIBC), *lb = find_lib(b, LIBC);
    assert_non_null(sw_lib_module(la));
    assert_ptr_equal(sw_lib_module(la), sw_lib_module(lb));
    assert_ptr_equal(sw_lib_elf(la), sw_lib_elf(lb));
    assert_ptr_equal(sw_module_elf(sw_lib_module(la)), sw_lib_elf(la));
    assert_int_equal(lb->bias - la->bias, 0x100000);
    assert_ptr_equal(sw_libstate_elfcache(a), sw_libstate_elfcache(b));
    sw_libstate_free(b);
    sw_proc_free(other);
}

/* ---- change notification ------------------------------------------------- */

struct change {
    char name[256];
    sw_addr bias;
    int change;
};

struct changes {
    struct change c[16];
    size_t n;
};

static void
record_change(void *arg, const struct sw_lib *lib, enum sw_lib_change change)
{
    struct changes *cs = arg;
    assert_true(cs->n < 16);
    snprintf(cs->c[cs->n].name, sizeof cs->c[cs->n].name, "%s", lib->name);
    cs->c[cs->n].bias = lib->bias;
    cs->c[cs->n].change = change;
    cs->n++;
}

static void
test_libstate_change_cb_reports_loads_then_only_differences(void **state)
{
    struct fixture *f = *state;
    struct changes cs = { .n = 0 };
    fake_proc_set_exec_path(f->proc, self_path);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);
    sw_libstate_set_change_cb(ls, record_change, &cs);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(cs.n, 2); /* the executable and libc, both loads */
    assert_int_equal(cs.c[0].change, 0);
    assert_int_equal(cs.c[1].change, 0);
    assert_string_equal(cs.c[1].name, LIBC);

    cs.n = 0;
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(cs.n, 0); /* nothing changed */

    fake_proc_remove_module(f->proc, LIBC);
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(cs.n, 2);
    assert_string_equal(cs.c[0].name, LIBC);
    assert_int_equal(cs.c[0].change, 1);
    assert_int_equal(cs.c[0].bias, LIBC_BIAS);
    assert_string_equal(cs.c[1].name, LIBM);
    assert_int_equal(cs.c[1].change, 0);
    assert_int_equal(cs.c[1].bias, LIBM_BIAS);
}

static void
test_libstate_same_library_at_new_address_is_unload_and_load(void **state)
{
    struct fixture *f = *state;
    struct changes cs = { .n = 0 };
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, NULL);
    sw_libstate_set_change_cb(ls, record_change, &cs);
    assert_int_equal(sw_libstate_refresh(ls), 0);

    cs.n = 0;
    fake_proc_remove_module(f->proc, LIBC);
    fake_proc_add_module(f->proc, LIBC, LIBM_BIAS);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(cs.n, 2);
    assert_int_equal(cs.c[0].change, 1);
    assert_int_equal(cs.c[0].bias, LIBC_BIAS);
    assert_int_equal(cs.c[1].change, 0);
    assert_int_equal(cs.c[1].bias, LIBM_BIAS);
}

static void
test_libstate_failed_refresh_keeps_previous_list(void **state)
{
    struct fixture *f = *state;
    struct sw_libstate_config cfg = { .exe = self_path };
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    struct sw_libstate *ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);

    /* Out of memory on every allocation of the second refresh. */
    for (unsigned long k = 1; k < 64; k++) {
        sw_test_fail_alloc_at(k);
        int rc = sw_libstate_refresh(ls);
        sw_test_fail_alloc_at(0);
        assert_true(rc == 0 || rc == SW_ENOMEM);
        assert_int_equal(sw_libstate_count(ls), 2);
        assert_string_equal(sw_libstate_lib(ls, 1)->name, LIBC);
        if (rc == 0)
            break;
    }
}

/* ---- the dynamic linker from PT_INTERP and AT_BASE ----------------------- */

/* The fake target runs this test binary, stopped at its loader's entry: the
 * module list is empty, the auxv has AT_ENTRY and AT_BASE. */
static void
at_entry_of_self(struct fixture *f)
{
    const uint64_t pairs[][2] = { { AT_ENTRY, getauxval(AT_ENTRY) }, { AT_BASE, LD_BASE } };
    fake_proc_set_exec_path(f->proc, self_path);
    set_auxv_pairs(f->proc, pairs, 2);
}

static void
test_libstate_empty_list_and_at_base_adds_pt_interp_at_at_base(void **state)
{
    struct fixture *f = *state;
    const char *interp = self_interp();
    if (interp == NULL || access(interp, R_OK) != 0)
        skip();
    at_entry_of_self(f);
    struct sw_libstate *ls = new_ls(f, NULL);
    const struct sw_lib *lib, *at;
    sw_addr lo, hi;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    lib = find_lib(ls, interp);
    assert_non_null(lib);
    assert_false(lib->is_exe);
    assert_string_equal(lib->path, interp);
    assert_non_null(sw_lib_elf(lib));
    assert_null(sw_lib_entry_of(lib)->image);
    sw_elf_load_range(sw_lib_elf(lib), &lo, &hi);
    assert_int_equal(lib->bias, LD_BASE - lo);
    assert_int_equal(lib->start, LD_BASE);
    /* The loader's entry point, where the PC is at the program's first stop. */
    assert_int_equal(sw_libstate_lib_at(ls, lib->bias + sw_elf_entry(sw_lib_elf(lib)), &at), 0);
    assert_ptr_equal(at, lib);
}

static void
test_libstate_loader_entry_resolves_through_symlookup(void **state)
{
    struct fixture *f = *state;
    const char *interp = self_interp();
    if (interp == NULL || access(interp, R_OK) != 0)
        skip();
    at_entry_of_self(f);
    struct sw_libstate *ls = new_ls(f, NULL);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, interp);
    assert_non_null(lib);
    struct sw_elfsym start;
    if (sw_elf_symbol_by_name(sw_lib_elf(lib), "_start", &start) != 0)
        skip(); /* no debug file for the loader: its .dynsym lacks _start */
    struct sw_symlookup *sl = sw_symlookup_elf_new(ls);
    struct sw_symbol sym;
    assert_non_null(sl);
    assert_int_equal(sl->ops->lookup(sl, lib->bias + sw_elf_entry(sw_lib_elf(lib)), &sym), 0);
    assert_string_equal(sym.name, "_start");
    assert_int_equal(sym.start, lib->bias + start.value);
    assert_string_equal(sym.module, interp);
    sw_symlookup_free(sl);
}

static void
test_libstate_listed_loader_at_at_base_is_not_added_twice(void **state)
{
    struct fixture *f = *state;
    const char *interp = self_interp();
    if (interp == NULL)
        skip();
    at_entry_of_self(f);
    /* gdbserver lists it by its link-map name, which may differ. */
    fake_proc_add_module(f->proc, "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", LD_BASE);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_count(ls), 2);
    if (strcmp(interp, "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2") != 0)
        assert_null(find_lib(ls, interp));
}

static void
test_libstate_loader_listed_after_entry_is_no_change(void **state)
{
    struct fixture *f = *state;
    struct changes cs = { .n = 0 };
    const char *interp = self_interp();
    if (interp == NULL)
        skip();
    at_entry_of_self(f);
    struct sw_libstate *ls = new_ls(f, NULL);
    sw_libstate_set_change_cb(ls, record_change, &cs);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(cs.n, 2); /* the executable and the loader */

    cs.n = 0;
    fake_proc_add_module(f->proc, interp, LD_BASE); /* libc has loaded */
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(cs.n, 0);
    assert_int_equal(count_libs(ls, interp), 1);
}

static void
test_libstate_loader_goes_through_sysroot(void **state)
{
    struct fixture *f = *state;
    const char *interp = self_interp();
    if (interp == NULL || access(interp, R_OK) != 0)
        skip();
    const char *root = make_sysroot(f);
    char path[4200], cmd[8600];
    snprintf(path, sizeof path, "%s%s", root, interp);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && cp -L '%s' '%s'", path, interp,
             path);
    assert_int_equal(system(cmd), 0);
    struct sw_libstate_config cfg = { .sysroot = root, .exe = self_path };
    at_entry_of_self(f);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, interp);
    assert_non_null(lib);
    assert_string_equal(lib->path, path);
    assert_non_null(sw_lib_elf(lib));
}

static void
test_libstate_loader_missing_locally_listed_at_at_base_without_file(void **state)
{
    struct fixture *f = *state;
    const char *interp = self_interp();
    if (interp == NULL)
        skip();
    struct sw_libstate_config cfg = { .sysroot = make_sysroot(f), .exe = self_path };
    at_entry_of_self(f);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, interp);
    assert_non_null(lib);
    assert_null(lib->path);
    assert_null(sw_lib_elf(lib));
    assert_int_equal(lib->bias, LD_BASE);
}

static void
test_libstate_at_base_without_exe_file_adds_no_loader(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_BASE, LD_BASE } };
    fake_proc_set_exec_path(f->proc, "/nonexistent/prog");
    set_auxv_pairs(f->proc, pairs, 1);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_count(ls),
                     1); /* the executable, without a file: no PT_INTERP to read */
}

static void
test_libstate_at_base_zero_adds_no_loader(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_ENTRY, getauxval(AT_ENTRY) }, { AT_BASE, 0 } };
    fake_proc_set_exec_path(f->proc, self_path);
    set_auxv_pairs(f->proc, pairs, 2);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_count(ls), 1);
}

static void
test_libstate_auxv_dead_link_fails_refresh_naming_auxv(void **state)
{
    struct fixture *f = *state;
    struct sw_libstate_config cfg = { .exe = self_path };
    struct sw_libstate *ls = new_ls(f, &cfg);
    fake_proc_fail_auxv(f->proc, SW_ETIMEDOUT);

    assert_int_equal(sw_libstate_refresh(ls), SW_ETIMEDOUT);
    assert_msg_has(sw_libstate_errmsg(ls), "reading the auxiliary vector: ");
    assert_msg_has(sw_libstate_errmsg(ls), "injected failure");
}

/* ---- the vDSO from target memory ------------------------------------------ */

static void
test_libstate_vdso_from_at_sysinfo_ehdr_resolves_through_symlookup(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_SYSINFO_EHDR, VDSO_BASE } };
    if (!fake_vdso(f->proc))
        skip();
    set_auxv_pairs(f->proc, pairs, 1);
    struct sw_libstate *ls = new_ls(f, NULL);
    struct sw_elfsym s;
    struct sw_symbol sym;
    sw_addr lo, hi;

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, "[vdso]");
    assert_non_null(lib);
    assert_null(lib->path);
    assert_non_null(sw_lib_elf(lib));
    sw_elf_load_range(sw_lib_elf(lib), &lo, &hi);
    assert_int_equal(lib->bias, VDSO_BASE - lo);
    assert_int_equal(lib->start, VDSO_BASE);
    const uint8_t *image;
    size_t image_len;
    sw_lib_image(lib, &image, &image_len);
    assert_non_null(image);
    assert_memory_equal(image, (const void *)getauxval(AT_SYSINFO_EHDR), image_len);

    assert_int_equal(sw_elf_symbol_by_name(sw_lib_elf(lib), "__vdso_clock_gettime", &s), 0);
    struct sw_symlookup *sl = sw_symlookup_elf_new(ls);
    assert_non_null(sl);
    assert_int_equal(sl->ops->lookup(sl, lib->bias + s.value + 1, &sym), 0);
    assert_int_equal(sym.start, lib->bias + s.value);
    assert_non_null(strstr(sym.name, "clock_gettime")); /* or its alias __vdso_... */
    assert_string_equal(sym.module, "[vdso]");
    sw_symlookup_free(sl);

    /* Its CFI is there for a stepper that reads the image. */
    const uint8_t *eh;
    size_t eh_len;
    sw_addr eh_addr;
    assert_int_equal(sw_elf_section(sw_lib_elf(lib), ".eh_frame", false, &eh, &eh_len, &eh_addr),
                     0);
    assert_true(eh >= image && eh + eh_len <= image + image_len);
}

static void
test_libstate_listed_vdso_read_at_at_sysinfo_ehdr_once(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_SYSINFO_EHDR, VDSO_BASE } };
    if (!fake_vdso(f->proc))
        skip();
    set_auxv_pairs(f->proc, pairs, 1);
    fake_proc_add_module(f->proc, "linux-vdso.so.1", 0x1000); /* l_addr ignored */
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(count_libs(ls, "[vdso]"), 1);
    const struct sw_lib *lib = find_lib(ls, "[vdso]");
    assert_non_null(sw_lib_elf(lib));
    assert_int_equal(lib->start, VDSO_BASE);

    /* The image is kept in the ELF cache: a refresh reads no memory. */
    unsigned reads = fake_proc_reads(f->proc);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(fake_proc_reads(f->proc), reads);
    assert_non_null(sw_lib_elf(find_lib(ls, "[vdso]")));
}

static void
test_libstate_vdso_image_asked_for_in_the_build_id_batch(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_SYSINFO_EHDR, VDSO_BASE } };
    if (!fake_vdso(f->proc))
        skip();
    fake_proc_enable_batch(f->proc);
    set_auxv_pairs(f->proc, pairs, 1);
    fake_proc_add_module(f->proc, "linux-vdso.so.1", 0x1000);
    struct sw_libstate *ls = new_ls(f, NULL);

    /* The batch that checks the files' build-ids (none here) says the vDSO's
     * image is read next: a backend with a cache fetches it in that round trip. */
    assert_int_equal(sw_libstate_refresh(ls), 0);
    const sw_addr *warmed;
    assert_int_equal(fake_proc_batches(f->proc), 1);
    assert_int_equal(fake_proc_warmed(f->proc, &warmed), 1);
    assert_int_equal(warmed[0], VDSO_BASE);
    assert_non_null(sw_lib_elf(find_lib(ls, "[vdso]")));
    /* Cached in the ELF cache: the next refresh asks for nothing. */
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(fake_proc_batches(f->proc), 1);
}

static void
test_libstate_listed_vdso_without_auxv_read_at_l_addr(void **state)
{
    struct fixture *f = *state;
    if (!fake_vdso(f->proc))
        skip();
    fake_proc_add_module(f->proc, "linux-vdso.so.1", VDSO_BASE);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, "[vdso]");
    assert_non_null(lib);
    assert_non_null(sw_lib_elf(lib));
    assert_int_equal(lib->start, VDSO_BASE);
}

static void
test_libstate_unreadable_vdso_listed_without_symbols(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_SYSINFO_EHDR, VDSO_BASE } };
    set_auxv_pairs(f->proc, pairs, 1); /* nothing mapped there */
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, "[vdso]");
    assert_non_null(lib);
    assert_null(sw_lib_elf(lib));
    assert_null(sw_lib_entry_of(lib)->image);
    assert_int_equal(lib->bias, VDSO_BASE);
}

static void
test_libstate_vdso_not_elf_or_too_large_listed_without_symbols(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_SYSINFO_EHDR, VDSO_BASE } };
    size_t len;
    const uint8_t *vdso = own_vdso(&len);
    if (vdso == NULL)
        skip();
    set_auxv_pairs(f->proc, pairs, 1);
    fake_proc_add_mem(f->proc, VDSO_BASE, NULL, 0x20000); /* zeros: no ELF magic */
    struct sw_libstate *ls = new_ls(f, NULL);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_null(sw_lib_elf(find_lib(ls, "[vdso]")));

    /* Section headers said to lie past the 64 KiB bound. */
    uint8_t *img = malloc(len);
    assert_non_null(img);
    memcpy(img, vdso, len);
    ((Elf64_Ehdr *)img)->e_shoff = 0x18000;
    fake_proc_put(f->proc, VDSO_BASE, img, len);
    free(img);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_null(sw_lib_elf(find_lib(ls, "[vdso]")));
}

static void
test_libstate_vdso_read_on_dead_link_fails_refresh_naming_address(void **state)
{
    struct fixture *f = *state;
    const uint64_t pairs[][2] = { { AT_SYSINFO_EHDR, VDSO_BASE } };
    set_auxv_pairs(f->proc, pairs, 1);
    fake_proc_fail_reads(f->proc, SW_ETIMEDOUT);
    struct sw_libstate *ls = new_ls(f, NULL);

    assert_int_equal(sw_libstate_refresh(ls), SW_ETIMEDOUT);
    assert_msg_has(sw_libstate_errmsg(ls), "reading the vDSO at 0x7ffff7fc1000: ");
    assert_msg_has(sw_libstate_errmsg(ls), "injected failure");
}

static void
test_libstate_allocation_failures_with_loader_and_vdso_keep_list(void **state)
{
    struct fixture *f = *state;
    const char *interp = self_interp();
    const uint64_t pairs[][2] = { { AT_ENTRY, getauxval(AT_ENTRY) },
                                  { AT_BASE, LD_BASE },
                                  { AT_SYSINFO_EHDR, VDSO_BASE } };
    if (interp == NULL || !fake_vdso(f->proc))
        skip();
    fake_proc_set_exec_path(f->proc, self_path);
    set_auxv_pairs(f->proc, pairs, 3);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);

    /* Each allocation of a first refresh (nothing cached yet) failing in
     * turn: ENOMEM with its message and no list, or success. */
    for (unsigned long k = 1; k < 400; k++) {
        struct sw_libstate *ls = NULL;
        assert_int_equal(sw_libstate_new(f->proc, NULL, &ls), 0);
        sw_test_fail_alloc_at(k);
        int rc = sw_libstate_refresh(ls);
        sw_test_fail_alloc_at(0);
        size_t n = sw_libstate_count(ls);
        if (rc == 0) {
            assert_int_equal(n, 4); /* executable, libc, loader, vDSO */
            assert_non_null(sw_lib_elf(find_lib(ls, "[vdso]")));
            sw_libstate_free(ls);
            return;
        }
        assert_int_equal(rc, SW_ENOMEM);
        assert_msg_has(sw_libstate_errmsg(ls), "out of memory");
        assert_int_equal(n, 0);
        sw_libstate_free(ls);
    }
    fail_msg("refresh still failing after 400 allocations");
}

static void
test_libstate_free_null_is_noop(void **state)
{
    (void)state;
    sw_libstate_free(NULL);
}

static void
test_libstate_config_init_gives_the_zero_defaults_and_no_shared_cache(void **state)
{
    struct sw_libstate_config cfg, zero;
    (void)state;
    memset(&cfg, 0xa5, sizeof cfg);
    memset(&zero, 0, sizeof zero);
    sw_libstate_config_init(&cfg);
    assert_null(cfg.modcache);
    assert_memory_equal(&cfg, &zero, sizeof cfg);
}

/* ---- files from the target (read_file) ---------------------------------- */

/* A temporary directory with an empty sysroot ROOT/sys and a cache
 * ROOT/cache (not created: the library makes it). */
static void
make_fetch_dirs(struct fixture *f, char *sys, char *cache, size_t n)
{
    char tmpl[] = "/tmp/test_libstate_fetch.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    f->sysroot = strdup(tmpl);
    snprintf(sys, n, "%s/sys", tmpl);
    snprintf(cache, n, "%s/cache", tmpl);
    assert_int_equal(mkdir(sys, 0755), 0);
}

/* CACHE/<hex of ELF's build-id>/BASE */
static void
cached_path(const char *cache, const struct sw_elf *elf, const char *base, char *out, size_t n)
{
    const uint8_t *id;
    size_t len;
    char hex[2 * 64 + 1];
    sw_elf_build_id(elf, &id, &len);
    assert_true(len > 0 && len <= 64);
    for (size_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    snprintf(out, n, "%s/%s/%s", cache, hex, base);
}

static void
test_libstate_missing_library_fetched_into_cache_by_build_id(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200], want[8500];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    fake_proc_add_file(f->proc, LIBM, LIBM);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, LIBM);
    assert_non_null(lib);
    assert_non_null(sw_lib_elf(lib));
    cached_path(cache, sw_lib_elf(lib), "libm.so.6", want, sizeof want);
    assert_string_equal(lib->path, want);
    assert_int_equal(access(want, R_OK), 0);
    assert_true(lib->end > lib->start);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 0);
}

static void
test_libstate_cached_file_reused_without_reading_the_whole_file(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200], first[4200];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    fake_proc_add_file(f->proc, LIBM, LIBM);
    struct sw_libstate *ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(first, sizeof first, "%s", find_lib(ls, LIBM)->path);
    size_t fetched = fake_proc_file_bytes(f->proc);
    struct stat st;
    assert_int_equal(stat(LIBM, &st), 0);
    assert_true(fetched >= (size_t)st.st_size);

    /* A new library state (a new rspwalk run) over the same cache: the
     * first page is read, for the build-id, and the copy is checked against
     * the target's file where walks read it (libstate/cache.h): under a
     * third of libm's bytes. */
    sw_libstate_free(ls);
    f->ls = NULL;
    ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_string_equal(find_lib(ls, LIBM)->path, first);
    assert_true(fake_proc_file_bytes(f->proc) - fetched < (size_t)st.st_size / 3);
    /* A later refresh of the same state asks the target nothing. */
    size_t before = fake_proc_file_bytes(f->proc);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(fake_proc_file_bytes(f->proc), before);
    assert_string_equal(find_lib(ls, LIBM)->path, first);
}

/* Whether files A and B hold the same bytes. */
static bool
same_bytes(const char *a, const char *b)
{
    char cmd[17100];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

/* A cached copy with the right build-id and other symbol names (what a
 * lying target could have stored): found out at the next use, removed,
 * and the target's own file fetched in its place, with a warning. */
static void
test_libstate_poisoned_cache_entry_replaced_by_the_targets_file(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200], first[4200];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    fake_proc_add_file(f->proc, LIBM, LIBM);
    struct sw_libstate *ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(first, sizeof first, "%s", find_lib(ls, LIBM)->path);
    sw_libstate_free(ls);
    f->ls = NULL;

    /* One byte of a version name in .dynstr changed, the size kept. */
    FILE *fp = fopen(first, "r+b");
    assert_non_null(fp);
    static char bytes[4 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, fp);
    assert_true(n > 0 && n < sizeof bytes);
    const char *at = memmem(bytes, n, "GLIBC_2.2.5", 12);
    assert_non_null(at);
    assert_int_equal(fseek(fp, at - bytes, SEEK_SET), 0);
    assert_int_equal(fputc('X', fp), 'X');
    assert_int_equal(fclose(fp), 0);
    assert_false(same_bytes(first, LIBM));

    ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_string_equal(find_lib(ls, LIBM)->path, first);
    assert_true(same_bytes(first, LIBM));
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
    assert_non_null(strstr(msgs[0], "not the target's"));
    assert_non_null(strstr(msgs[0], "fetched again"));
}

/* What the cache holds is private: directories 0700, files 0600. */
static void
test_libstate_cache_directories_and_files_are_private(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200], dir[4200];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    fake_proc_add_file(f->proc, LIBM, LIBM);
    struct sw_libstate *ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    const char *path = find_lib(ls, LIBM)->path;
    struct stat st;
    assert_int_equal(stat(cache, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

/* A cache over its limit loses its least recently used entries, never the
 * one just stored. */
static void
test_libstate_cache_over_its_limit_evicts_the_oldest_entry(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200], libm_copy[4200];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache, .cache_max_bytes = 1 };
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    fake_proc_add_file(f->proc, LIBM, LIBM);
    struct sw_libstate *ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(libm_copy, sizeof libm_copy, "%s", find_lib(ls, LIBM)->path);
    assert_int_equal(access(libm_copy, R_OK), 0); /* the one just stored stays */
    sw_libstate_free(ls);
    f->ls = NULL;
    /* Used an hour ago: entries used in the last minute are kept. */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", libm_copy);
    *strrchr(dir, '/') = '\0';
    struct timespec ago[2];
    clock_gettime(CLOCK_REALTIME, &ago[0]);
    ago[0].tv_sec -= 3600;
    ago[1] = ago[0];
    assert_int_equal(utimensat(AT_FDCWD, dir, ago, 0), 0);

    /* Not entries (no build-id's hex name): never the cache's to remove. */
    char other[8500];
    snprintf(other, sizeof other, "%s/notes", cache);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(utimensat(AT_FDCWD, other, ago, 0), 0);

    fake_proc_remove_module(f->proc, LIBM);
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_file(f->proc, LIBC, LIBC);
    ls = new_ls(f, &cfg);
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(access(find_lib(ls, LIBC)->path, R_OK), 0);
    assert_int_not_equal(access(libm_copy, F_OK), 0); /* evicted: older, over the limit */
    assert_int_equal(access(other, F_OK), 0);
}

static void
test_libstate_local_file_with_other_build_id_reported_and_not_used(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200], path[8500], want[8500];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    /* The sysroot's libc.so.6 is really libm: another build-id. */
    snprintf(path, sizeof path, "%s/lib", sys);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/lib/x86_64-linux-gnu", sys);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s%s", sys, LIBC);
    assert_int_equal(copy_file(LIBM, path), 0);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_file(f->proc, LIBC, LIBC);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
    assert_string_equal(msgs[0],
                        LIBC ": local file's build-id differs from the target's; not used");
    const struct sw_lib *lib = find_lib(ls, LIBC);
    assert_non_null(sw_lib_elf(lib));
    cached_path(cache, sw_lib_elf(lib), "libc.so.6", want, sizeof want);
    assert_string_equal(lib->path, want); /* the target's copy */
    /* Reported once, however many refreshes. */
    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 1);
}

static void
test_libstate_matching_local_file_used_without_fetch(void **state)
{
    struct fixture *f = *state;
    const char *root = make_sysroot(f);
    char want[4200], cache[4200];
    snprintf(cache, sizeof cache, "%s/cache", root);
    struct sw_libstate_config cfg = { .sysroot = root, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBC, LIBC_BIAS);
    fake_proc_add_file(f->proc, LIBC, LIBC);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    snprintf(want, sizeof want, "%s%s", root, LIBC);
    assert_string_equal(find_lib(ls, LIBC)->path, want);
    assert_true(fake_proc_file_bytes(f->proc) <= 4096);
    assert_int_equal(access(cache, F_OK), -1); /* nothing stored */
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 0);
}

static void
test_libstate_read_file_unsupported_keeps_local_lookup(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    /* No file added: the fake's read_file is SW_EUNSUP (no Host I/O). */
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    const struct sw_lib *lib = find_lib(ls, LIBM);
    assert_null(lib->path);
    assert_null(sw_lib_elf(lib));
    assert_int_equal(access(cache, F_OK), -1);
    const char *const *msgs;
    assert_int_equal(sw_libstate_warnings(ls, &msgs), 0);
}

static void
test_libstate_target_file_missing_listed_without_file(void **state)
{
    struct fixture *f = *state;
    char sys[4200], cache[4200];
    make_fetch_dirs(f, sys, cache, sizeof sys);
    struct sw_libstate_config cfg = { .sysroot = sys, .cache_dir = cache };
    fake_proc_add_module(f->proc, LIBM, LIBM_BIAS);
    fake_proc_add_file(f->proc, "/other", LIBC); /* vFile works, LIBM is not there */
    struct sw_libstate *ls = new_ls(f, &cfg);

    assert_int_equal(sw_libstate_refresh(ls), 0);
    assert_null(find_lib(ls, LIBM)->path);
}

static void
test_libstate_fetch_build_id_of_image_reads_the_note(void **state)
{
    (void)state;
    FILE *fp = fopen(LIBC, "rb");
    assert_non_null(fp);
    uint8_t head[4096];
    size_t got = fread(head, 1, sizeof head, fp);
    fclose(fp);
    const uint8_t *id;
    size_t len, need;
    assert_int_equal(sw_elf_image_build_id(head, got, &id, &len, &need), 0);
    assert_int_equal(len, 20);
    /* Truncated to the ELF header: no id yet, and how much would settle it. */
    assert_int_equal(sw_elf_image_build_id(head, 64, &id, &len, &need), 0);
    assert_int_equal(len, 0);
    assert_true(need > 64);
    assert_int_equal(
        sw_elf_image_build_id((const uint8_t *)"not an ELF file!", 16, &id, &len, &need),
        SW_EBADELF);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_libstate_pie_exe_from_target_placed_by_at_entry),
        T(test_libstate_pie_exe_placed_by_at_phdr_without_at_entry),
        T(test_libstate_pie_exe_without_auxv_gets_bias_zero),
        T(test_libstate_exe_option_overrides_target_exec_path),
        T(test_libstate_exe_option_not_elf_fails_naming_file),
        T(test_libstate_exe_option_missing_fails_enoent),
        T(test_libstate_exe_option_for_other_arch_fails_naming_both),
        T(test_libstate_target_exe_without_local_copy_listed_without_file),
        T(test_libstate_no_executable_known_lists_modules_only),
        T(test_libstate_module_placed_at_l_addr_plus_load_range),
        T(test_libstate_sysroot_prefixes_module_paths),
        T(test_libstate_sysroot_with_trailing_slash_joins_once),
        T(test_libstate_sysroot_applies_to_target_exec_path),
        T(test_libstate_missing_library_listed_without_path),
        T(test_libstate_modules_past_the_limit_left_out_with_a_warning),
        T(test_libstate_library_for_other_arch_listed_without_file),
        T(test_libstate_vdso_listed_as_vdso_without_path),
        T(test_libstate_empty_module_name_skipped),
        T(test_libstate_elf_cache_kept_across_refreshes),
        T(test_libstate_shared_module_cache_gives_one_module_per_file),
        T(test_libstate_change_cb_reports_loads_then_only_differences),
        T(test_libstate_same_library_at_new_address_is_unload_and_load),
        T(test_libstate_failed_refresh_keeps_previous_list),
        T(test_libstate_empty_list_and_at_base_adds_pt_interp_at_at_base),
        T(test_libstate_loader_entry_resolves_through_symlookup),
        T(test_libstate_listed_loader_at_at_base_is_not_added_twice),
        T(test_libstate_loader_listed_after_entry_is_no_change),
        T(test_libstate_loader_goes_through_sysroot),
        T(test_libstate_loader_missing_locally_listed_at_at_base_without_file),
        T(test_libstate_at_base_without_exe_file_adds_no_loader),
        T(test_libstate_at_base_zero_adds_no_loader),
        T(test_libstate_auxv_dead_link_fails_refresh_naming_auxv),
        T(test_libstate_vdso_from_at_sysinfo_ehdr_resolves_through_symlookup),
        T(test_libstate_listed_vdso_read_at_at_sysinfo_ehdr_once),
        T(test_libstate_vdso_image_asked_for_in_the_build_id_batch),
        T(test_libstate_listed_vdso_without_auxv_read_at_l_addr),
        T(test_libstate_unreadable_vdso_listed_without_symbols),
        T(test_libstate_vdso_not_elf_or_too_large_listed_without_symbols),
        T(test_libstate_vdso_read_on_dead_link_fails_refresh_naming_address),
        T(test_libstate_allocation_failures_with_loader_and_vdso_keep_list),
        T(test_libstate_missing_library_fetched_into_cache_by_build_id),
        T(test_libstate_cached_file_reused_without_reading_the_whole_file),
        T(test_libstate_poisoned_cache_entry_replaced_by_the_targets_file),
        T(test_libstate_cache_directories_and_files_are_private),
        T(test_libstate_cache_over_its_limit_evicts_the_oldest_entry),
        T(test_libstate_local_file_with_other_build_id_reported_and_not_used),
        T(test_libstate_matching_local_file_used_without_fetch),
        T(test_libstate_read_file_unsupported_keeps_local_lookup),
        T(test_libstate_target_file_missing_listed_without_file),
        cmocka_unit_test(test_libstate_fetch_build_id_of_image_reads_the_note),
        cmocka_unit_test(test_libstate_free_null_is_noop),
        cmocka_unit_test(test_libstate_config_init_gives_the_zero_defaults_and_no_shared_cache),
    };
#undef T
    return cmocka_run_group_tests_name("libstate", tests, NULL, NULL);
}
