/* tests/unit/walker/test_locals.c -- getFunctionForFrame and getLocalVariableValue
 * (rspwalk/locals.h).
 *
 * Two sources of DWARF.  tests/unit/data/x86_64_locals.S has one variable of each location
 * kind, written by hand, so that every kind and every result code is checked against values
 * placed in a fake process's registers and memory.  And this test's own functions, compiled
 * by gcc (-O2 -g, -O1 -g under ASan) with one inlined into another: stopped for real on entry
 * to an assembly hook, walked over a copy of the live stack, their variables must hold what
 * the C code put in them, in the inline frame and in the physical one.  Host-only: x86-64.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <unistd.h>

#include "rspwalk/rspwalk.h"
#include "tests/tools/fake_proc.h"
#include "util/util.h"
#include "dwarf/dwarf.h"
#include "elf/elf.h"
#include "libstate/lib.h"
#include "walker/walker_internal.h"

#define ELF SW_TEST_DATA "/x86_64_locals.elf"

enum { RBX = 3, RBP = 6, RSP = 7, R12 = 12, R13 = 13, R14 = 14, R15 = 15 };

/* The stack of the hand-made frames: frame 0 in lv_func with SP = STACK, its caller's SP (the
 * CFA, DW_OP_call_frame_cfa) CFA, RBP = FP. */
#define STACK 0x7ffe0000ull
#define CFA   (STACK + 0x80)
#define FP    (STACK + 0x100)

struct fixture {
    struct sw_walker *w;
    struct sw_proc *p;           /* owned by W */
    sw_addr func, other, global; /* lv_func, lv_other, lv_global (link-time = run-time) */
    struct sw_stack st;
};

/* The value of NAME in ELF's .symtab, read with libelf (sw_elf keeps code symbols only). */
static sw_addr
data_symbol(const char *name)
{
    sw_addr v = 0;
    int fd = open(ELF, O_RDONLY);
    assert_true(fd >= 0);
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    assert_non_null(e);
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        if (sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            gelf_getsym(data, (int)i, &sym);
            if (strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name) == 0)
                v = sym.st_value;
        }
    }
    elf_end(e);
    close(fd);
    if (v == 0)
        fail_msg("%s: no symbol %s", ELF, name);
    return v;
}

static sw_addr
symbol(struct sw_walker *w, const char *name)
{
    struct sw_libstate *ls = sw_walker_libstate(w);
    struct sw_elfsym sym;
    assert_int_equal(sw_libstate_count(ls), 1);
    if (sw_elf_symbol_by_name(sw_lib_elf(sw_libstate_lib(ls, 0)), name, &sym) != 0)
        fail_msg("%s: no symbol %s", ELF, name);
    return sym.value;
}

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct sw_walker_config cfg = { .exe = ELF, .cache_dir = "" };
    struct sw_errbuf err = { 0 };
    static const uint8_t b[8] = { 0xcb, 0x04, 0xfb, 0x71, 0x1f, 0x01, 0, 0 }; /* 1234567890123 */
    static const uint8_t pt_rest[3] = { 0xfc, 0xff, 'z' };                    /* y -4, tag */
    static const uint8_t cfav[8] = { 0x89, 0x67, 0x45, 0x23, 0x01, 0, 0, 0 }; /* 0x123456789 */
    static const double d = -2.25;
    static const int arr[3] = { 7, 8, 9 }, inner = 4242, sq = 81, o = 5, g = 99;

    assert_non_null(f);
    f->p = fake_proc_new(&arch_x86_64);
    assert_non_null(f->p);
    fake_proc_add_mem(f->p, STACK, NULL, 0x200);
    fake_proc_put(f->p, CFA - 24, b, sizeof b);
    fake_proc_put(f->p, CFA - 32, pt_rest, sizeof pt_rest);
    fake_proc_put(f->p, FP - 1, "A", 1);
    fake_proc_put(f->p, CFA - 40, cfav, sizeof cfav);
    fake_proc_put(f->p, CFA - 48, &d, sizeof d);
    fake_proc_put(f->p, CFA - 52, &inner, sizeof inner);
    fake_proc_put(f->p, CFA - 72, &sq, sizeof sq);
    fake_proc_put(f->p, CFA - 64, arr, sizeof arr);
    fake_proc_put(f->p, STACK + 0x100 - 20, &o, sizeof o); /* lv_other's CFA is frame 2's SP */
    if (sw_walker_new(f->p, &cfg, &f->w, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(sw_libstate_refresh(sw_walker_libstate(f->w)), 0);
    f->func = symbol(f->w, "lv_func");
    f->other = symbol(f->w, "lv_other");
    f->global = data_symbol("lv_global");
    fake_proc_add_mem(f->p, f->global, &g, sizeof g);
    sw_stack_init(&f->st);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;
    sw_stack_fini(&f->st);
    sw_walker_free(f->w);
    free(f);
    return 0;
}

/* Append a frame: PC (the return address of frames past 0), SP and KIND. */
static struct sw_frame *
push(struct fixture *f, sw_addr pc, sw_addr sp, enum sw_frame_kind kind)
{
    struct sw_frame fr;
    sw_frame_init(&fr);
    fr.ra = pc;
    fr.sp = sp;
    fr.thread = 1;
    fr.kind = kind;
    fr.top = f->st.n == 0;
    fr.level = (unsigned)f->st.n;
    fr.stepper = (const struct sw_stepper *)f; /* any non-NULL marker */
    if (f->st.n == f->st.cap) {
        f->st.cap = f->st.cap ? 2 * f->st.cap : 8;
        f->st.frames = sw_realloc(f->st.frames, f->st.cap * sizeof fr);
        assert_non_null(f->st.frames);
    }
    f->st.frames[f->st.n] = fr;
    return &f->st.frames[f->st.n++];
}

/* The stack of most tests: lv_func at PC (frame 0, its registers), called from lv_other
 * (frame 1, SP = the CFA), called from somewhere without debug information (frame 2). */
static void
stack_at(struct fixture *f, sw_addr pc)
{
    f->st.n = 0;
    struct sw_frame *top = push(f, pc, STACK, SW_FRAME_NORMAL);
    sw_frame_set_reg(top, 16, pc);
    sw_frame_set_reg(top, RSP, STACK);
    sw_frame_set_reg(top, RBP, FP);
    sw_frame_set_reg(top, RBX, (sw_word)-10);
    sw_frame_set_reg(top, R12, 0x7ffe1234);
    sw_frame_set_reg(top, R13, 3);
    sw_frame_set_reg(top, R14, 0x1111);
    sw_frame_set_reg(top, R15, 9);
    push(f, f->other + 0x11, CFA, SW_FRAME_NORMAL);
    push(f, 0x1000, STACK + 0x100, SW_FRAME_NORMAL);
}

static const struct sw_local_var *
var(const struct sw_function *fn, const char *name)
{
    for (size_t i = 0; i < fn->nvars; i++)
        if (strcmp(fn->vars[i].name, name) == 0)
            return &fn->vars[i];
    fail_msg("%s has no variable %s", fn->name, name);
    return NULL;
}

static bool
has_var(const struct sw_function *fn, const char *name)
{
    for (size_t i = 0; i < fn->nvars; i++)
        if (strcmp(fn->vars[i].name, name) == 0)
            return true;
    return false;
}

/* The names of FN's variables, "a,b,c". */
static const char *
names(const struct sw_function *fn)
{
    static char buf[512];
    buf[0] = 0;
    for (size_t i = 0; i < fn->nvars; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "," : "",
                 fn->vars[i].name);
    return buf;
}

static struct sw_function *
function_of(struct fixture *f, size_t k)
{
    struct sw_function *fn = NULL;
    if (sw_frame_function(f->w, &f->st, k, &fn) != 0)
        fail_msg("frame %zu: %s", k, sw_walker_errmsg(f->w));
    return fn;
}

/* The value of NAME of FN in frame K, formatted; or a name for its code. */
static const char *
value(struct fixture *f, const struct sw_function *fn, size_t k, const char *name)
{
    static char out[256];
    uint8_t buf[64];
    const struct sw_local_var *v = var(fn, name);
    int rc = sw_local_value(f->w, &f->st, k, v, buf, sizeof buf);
    switch (rc) {
    case 0:
        assert_int_equal(sw_local_format(f->w, v, buf, v->size, out, sizeof out), 0);
        return out;
    case SW_EOUTOFSCOPE:
        return "<out of scope>";
    case SW_EUNAVAIL:
        return "<unknown>";
    case SW_EBUFSIZE:
        return "<buffer size>";
    case SW_EINVAL:
        return "<bad parameter>";
    default:
        fail_msg("%s: %s", name, sw_errname(rc));
        return NULL;
    }
}

/* ---- the function of a frame ------------------------------------------------------------ */

static void
test_locals_function_lists_params_then_innermost_block_first_not_inlined_code(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);

    assert_string_equal(fn->name, "lv_func");
    assert_int_equal(fn->entry, f->func);
    assert_false(fn->inlined);
    /* ext is a declaration; k, q, sq, blk, gone2 belong to the inlined lv_inl. */
    assert_string_equal(names(fn), "a,b,inner,c,p,pt,half,ll,sv,ok,iv,br,cv,cf,gone,ev,cfav,g,"
                                   "unk,bad,d,arr");
    assert_int_equal(var(fn, "a")->kind, SW_VAR_PARAM);
    assert_int_equal(var(fn, "b")->kind, SW_VAR_PARAM);
    assert_int_equal(var(fn, "c")->kind, SW_VAR_LOCAL);
    assert_string_equal(var(fn, "b")->type_name, "long int");
    assert_string_equal(var(fn, "p")->type_name, "int *");
    assert_string_equal(var(fn, "pt")->type_name, "struct pt");
    assert_string_equal(var(fn, "arr")->type_name, "int [3]");
    assert_string_equal(var(fn, "ok")->type_name, "_Bool");
    assert_int_equal(var(fn, "pt")->size, 8);
    assert_int_equal(var(fn, "arr")->size, 12);
    assert_int_equal(var(fn, "c")->size, 1);
    assert_ptr_equal(var(fn, "a")->fn, fn);
    sw_function_free(fn);
}

static void
test_locals_block_locals_only_while_the_pc_is_in_the_block(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x50);
    struct sw_function *fn = function_of(f, 0);
    assert_false(has_var(fn, "inner"));
    assert_true(has_var(fn, "c"));
    sw_function_free(fn);
    stack_at(f, f->func + 0xbf);
    fn = function_of(f, 0);
    assert_true(has_var(fn, "inner"));
    sw_function_free(fn);
}

static void
test_locals_frame_function_failures(void **state)
{
    struct fixture *f = *state;
    struct sw_function *fn = (struct sw_function *)&fn;
    stack_at(f, f->func + 0x10);

    assert_int_equal(sw_frame_function(NULL, &f->st, 0, &fn), SW_EINVAL);
    assert_int_equal(sw_frame_function(f->w, NULL, 0, &fn), SW_EINVAL);
    assert_int_equal(sw_frame_function(f->w, &f->st, 0, NULL), SW_EINVAL);
    assert_int_equal(sw_frame_function(f->w, &f->st, 3, &fn), SW_EINVAL);
    assert_non_null(strstr(sw_walker_errmsg(f->w), "no frame 3"));
    /* Frame 2 is outside every module. */
    assert_int_equal(sw_frame_function(f->w, &f->st, 2, &fn), SW_ENOSYM);
    assert_non_null(strstr(sw_walker_errmsg(f->w), "no debug info"));
    f->st.frames[1].kind = SW_FRAME_TAILCALL;
    assert_int_equal(sw_frame_function(f->w, &f->st, 1, &fn), SW_EINVAL);
    assert_non_null(strstr(sw_walker_errmsg(f->w), "tail-call frame"));
    f->st.frames[1].kind = SW_FRAME_SIGNAL;
    assert_int_equal(sw_frame_function(f->w, &f->st, 1, &fn), SW_EINVAL);
    /* The ELF header is in the module but in no DWARF function. */
    f->st.frames[1].kind = SW_FRAME_NORMAL;
    f->st.frames[0].ra = 0x400040;
    assert_int_equal(sw_frame_function(f->w, &f->st, 0, &fn), SW_ENOSYM);
    assert_non_null(strstr(sw_walker_errmsg(f->w), "no DWARF function in"));
    assert_ptr_equal(fn, (struct sw_function *)&fn); /* untouched on failure */
    sw_function_free(NULL);
}

/* ---- values: one location kind each -------------------------------------------------------- */

static void
test_locals_register_memory_and_frame_base_locations(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);

    assert_string_equal(value(f, fn, 0, "a"), "-10");           /* DW_OP_reg3 */
    assert_string_equal(value(f, fn, 0, "b"), "1234567890123"); /* fbreg, base = CFA */
    assert_string_equal(value(f, fn, 0, "c"), "65 'A'");        /* DW_OP_breg6 -1 */
    assert_string_equal(value(f, fn, 0, "p"), "0x7ffe1234");    /* a pointer in r12 */
    assert_string_equal(value(f, fn, 0, "d"), "-2.25");
    assert_string_equal(value(f, fn, 0, "arr"), "{7, 8, 9}");
    assert_string_equal(value(f, fn, 0, "inner"), "4242");
    assert_string_equal(value(f, fn, 0, "cfav"), "4886718345"); /* DW_OP_call_frame_cfa - 40 */
    assert_string_equal(value(f, fn, 0, "g"), "99");            /* DW_OP_addr */
    sw_function_free(fn);
}

static void
test_locals_pieces_join_registers_and_memory_and_padding_may_be_missing(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);
    uint8_t buf[8];

    assert_int_equal(sw_local_value(f->w, &f->st, 0, var(fn, "pt"), buf, sizeof buf), 0);
    assert_int_equal(buf[0], 3); /* x from r13 */
    assert_int_equal(buf[4], 0xfc);
    assert_int_equal(buf[6], 'z');
    assert_string_equal(value(f, fn, 0, "pt"), "{x = 3, y = -4, tag = 122 'z'}");
    /* half's y and tag have no location: the whole is out of scope. */
    assert_string_equal(value(f, fn, 0, "half"), "<out of scope>");
    sw_function_free(fn);
}

static void
test_locals_location_list_entries_by_pc(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x10); /* [F, F+0x40): r14 */
    struct sw_function *fn = function_of(f, 0);
    assert_string_equal(value(f, fn, 0, "ll"), "4369");
    sw_function_free(fn);
    stack_at(f, f->func + 0x50); /* the gap */
    fn = function_of(f, 0);
    assert_string_equal(value(f, fn, 0, "ll"), "<out of scope>");
    sw_function_free(fn);
    stack_at(f, f->func + 0x90); /* [F+0x60, F+0x100): lit7 stack_value */
    fn = function_of(f, 0);
    assert_string_equal(value(f, fn, 0, "ll"), "7");
    /* A caller's pc is its return address - 1: lv_func+0x40 looks up lv_func+0x3f, in r14. */
    f->st.frames[0].top = false;
    f->st.frames[0].ra = f->func + 0x40;
    assert_string_equal(value(f, fn, 0, "ll"), "4369");
    sw_function_free(fn);
}

static void
test_locals_computed_implicit_and_constant_values(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);
    assert_string_equal(value(f, fn, 0, "sv"), "-5"); /* rbx + 5, DW_OP_stack_value */
    assert_string_equal(value(f, fn, 0, "ok"), "true");
    assert_string_equal(value(f, fn, 0, "iv"), "42");  /* DW_OP_implicit_value */
    assert_string_equal(value(f, fn, 0, "br"), "9");   /* rbx < 0: DW_OP_bra taken */
    assert_string_equal(value(f, fn, 0, "cv"), "-77"); /* DW_AT_const_value, sdata */
    assert_string_equal(value(f, fn, 0, "cf"), "1.5"); /* DW_AT_const_value, block */
    sw_function_free(fn);
}

static void
test_locals_optimized_out_is_out_of_scope(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);
    assert_string_equal(value(f, fn, 0, "gone"), "<out of scope>"); /* no location */
    assert_string_equal(value(f, fn, 0, "ev"), "<out of scope>");   /* DW_OP_entry_value */
    sw_function_free(fn);
}

static void
test_locals_unknown_register_memory_or_cfa(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);
    assert_string_equal(value(f, fn, 0, "unk"), "<unknown>"); /* r9 not recovered */
    assert_string_equal(value(f, fn, 0, "bad"), "<unknown>"); /* CFA - 4096: no memory */
    /* Without the caller's frame there is no CFA, so no frame base. */
    f->st.n = 1;
    assert_string_equal(value(f, fn, 0, "b"), "<unknown>");
    assert_string_equal(value(f, fn, 0, "cfav"), "<unknown>");
    assert_string_equal(value(f, fn, 0, "a"), "-10");
    f->st.n = 3;
    fake_proc_fail_reads(f->p, SW_EIO);
    assert_string_equal(value(f, fn, 0, "b"), "<unknown>");
    fake_proc_fail_reads(f->p, 0);
    sw_function_free(fn);
}

static void
test_locals_result_codes_for_bad_parameters_scope_and_buffer_size(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);
    const struct sw_local_var *b = var(fn, "b");
    uint8_t buf[8];

    assert_int_equal(sw_local_value(NULL, &f->st, 0, b, buf, 8), SW_EINVAL);
    assert_int_equal(sw_local_value(f->w, NULL, 0, b, buf, 8), SW_EINVAL);
    assert_int_equal(sw_local_value(f->w, &f->st, 0, NULL, buf, 8), SW_EINVAL);
    assert_int_equal(sw_local_value(f->w, &f->st, 3, b, buf, 8), SW_EINVAL);
    assert_int_equal(sw_local_value(f->w, &f->st, 0, b, NULL, 8), SW_EINVAL);
    assert_int_equal(sw_local_value(f->w, &f->st, 0, b, buf, 7), SW_EBUFSIZE);
    assert_int_equal(sw_local_value(f->w, &f->st, 0, b, buf, 8), 0);
    /* Frame 1 is lv_other: not b's function.  Tail-call and signal frames have none. */
    assert_int_equal(sw_local_value(f->w, &f->st, 1, b, buf, 8), SW_EOUTOFSCOPE);
    f->st.frames[0].kind = SW_FRAME_TAILCALL;
    assert_int_equal(sw_local_value(f->w, &f->st, 0, b, buf, 8), SW_EOUTOFSCOPE);
    f->st.frames[0].kind = SW_FRAME_SIGNAL;
    assert_int_equal(sw_local_value(f->w, &f->st, 0, b, buf, 8), SW_EOUTOFSCOPE);
    /* A frame outside every module cannot be checked. */
    assert_int_equal(sw_local_value(f->w, &f->st, 2, b, buf, 8), SW_EUNAVAIL);
    sw_function_free(fn);
}

static void
test_locals_caller_frame_uses_its_own_cfa(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 1);
    assert_string_equal(fn->name, "lv_other");
    assert_string_equal(value(f, fn, 1, "o"), "5"); /* fbreg -20 from frame 2's SP */
    uint8_t buf[4];
    assert_int_equal(sw_local_value(f->w, &f->st, 0, var(fn, "o"), buf, 4), SW_EOUTOFSCOPE);
    sw_function_free(fn);
}

/* ---- inline frames ------------------------------------------------------------------------- */

/* The stack at PC with the inline frames sw_walk_stack would add. */
static void
inline_stack_at(struct fixture *f, sw_addr pc)
{
    stack_at(f, pc);
    assert_int_equal(sw_walker_add_virtual_frames(f->w, &f->st), 0);
}

static void
test_locals_inline_frame_lists_the_inlined_functions_variables(void **state)
{
    struct fixture *f = *state;
    inline_stack_at(f, f->func + 0x98);
    assert_int_equal(f->st.n, 4);
    assert_int_equal(f->st.frames[0].kind, SW_FRAME_INLINE);
    struct sw_function *fn = function_of(f, 0);

    assert_string_equal(fn->name, "lv_inl");
    assert_true(fn->inlined);
    assert_int_equal(fn->entry, f->func + 0x88);
    /* k is the copy's; q and gone2 only the abstract instance's; sq and blk (in blocks of
     * the copy) once each, innermost first. */
    assert_string_equal(names(fn), "k,q,blk,sq,gone2");
    assert_int_equal(var(fn, "q")->kind, SW_VAR_PARAM);
    assert_string_equal(value(f, fn, 0, "k"), "9");   /* r15 of the physical frame */
    assert_string_equal(value(f, fn, 0, "sq"), "81"); /* lv_func's frame base, CFA of frame 2 */
    assert_string_equal(value(f, fn, 0, "blk"), "3");
    assert_string_equal(value(f, fn, 0, "q"), "<out of scope>");
    assert_string_equal(value(f, fn, 0, "gone2"), "<out of scope>");
    /* The physical frame lists lv_func's variables, not lv_inl's. */
    struct sw_function *phys = function_of(f, 1);
    assert_string_equal(phys->name, "lv_func");
    assert_false(has_var(phys, "k"));
    assert_string_equal(value(f, phys, 1, "b"), "1234567890123");
    /* Each variable only in its own frame. */
    uint8_t buf[8];
    assert_int_equal(sw_local_value(f->w, &f->st, 1, var(fn, "k"), buf, 8), SW_EOUTOFSCOPE);
    assert_int_equal(sw_local_value(f->w, &f->st, 0, var(phys, "b"), buf, 8), SW_EOUTOFSCOPE);
    sw_function_free(phys);
    sw_function_free(fn);
}

static void
test_locals_inline_variable_of_a_block_the_pc_left_is_listed_optimized_out(void **state)
{
    struct fixture *f = *state;
    inline_stack_at(f, f->func + 0xa8); /* in lv_inl, past blk's block */
    struct sw_function *fn = function_of(f, 0);
    assert_string_equal(names(fn), "k,q,sq,gone2,blk");
    assert_string_equal(value(f, fn, 0, "blk"), "<out of scope>");
    assert_string_equal(value(f, fn, 0, "sq"), "81");
    sw_function_free(fn);
}

/* ---- formatting ---------------------------------------------------------------------------- */

static void
test_locals_format_truncates_and_rejects_null(void **state)
{
    struct fixture *f = *state;
    stack_at(f, f->func + 0x90);
    struct sw_function *fn = function_of(f, 0);
    const struct sw_local_var *pt = var(fn, "pt");
    uint8_t buf[8];
    char out[8];
    assert_int_equal(sw_local_value(f->w, &f->st, 0, pt, buf, sizeof buf), 0);
    assert_int_equal(sw_local_format(f->w, pt, buf, pt->size, out, sizeof out), 0);
    assert_string_equal(out, "{x = 3,");
    assert_int_equal(sw_local_format(NULL, pt, buf, 8, out, sizeof out), SW_EINVAL);
    assert_int_equal(sw_local_format(f->w, NULL, buf, 8, out, sizeof out), SW_EINVAL);
    assert_int_equal(sw_local_format(f->w, pt, NULL, 8, out, sizeof out), SW_EINVAL);
    assert_int_equal(sw_local_format(f->w, pt, buf, 8, NULL, sizeof out), SW_EINVAL);
    assert_int_equal(sw_local_format(f->w, pt, buf, 8, out, 0), SW_EINVAL);
    /* Fewer bytes than the type: what is missing is said so. */
    assert_int_equal(sw_local_format(f->w, var(fn, "b"), buf, 4, out, sizeof out), 0);
    assert_string_equal(out, "<unavai");
    sw_function_free(fn);
}

/* ---- allocation failures ------------------------------------------------------------------- */

/* Every allocation of reading a function's and an inlined copy's variables fails once in
 * turn: SW_ENOMEM, nothing leaked (ASan), and the next call answers. */
static void
test_locals_allocation_failures_return_enomem(void **state)
{
    struct fixture *f = *state;
    struct sw_errbuf err = { 0 };
    struct sw_dinfo *d = NULL;
    bool finished = false;

    assert_int_equal(sw_dinfo_open(ELF, NULL, NULL, &d, &err), 0);
    for (unsigned long k = 1; k < 2000 && !finished; k++) {
        struct sw_dinfo_func *a = NULL, *b = NULL;
        sw_test_fail_alloc_at(k);
        int rc = sw_dinfo_frame_vars(d, f->func + 0x98, &a);
        if (rc == 0)
            rc = sw_dinfo_inline_vars(d, f->func + 0x98, 0, &b);
        unsigned long count = sw_test_alloc_count();
        sw_test_fail_alloc_at(0);
        if (rc != 0 && rc != SW_ENOMEM)
            fail_msg("allocation %lu: %s %s", k, sw_errname(rc), sw_dinfo_errmsg(d));
        finished = rc == 0 && count < k;
        sw_dinfo_func_free(a);
        sw_dinfo_func_free(b);
    }
    assert_true(finished);
    struct sw_dinfo_func *fn = NULL;
    assert_int_equal(sw_dinfo_inline_vars(d, f->func + 0x98, 0, &fn), 0);
    assert_int_equal(fn->nvars, 5);
    sw_dinfo_func_free(fn);
    assert_int_equal(sw_dinfo_inline_vars(d, f->func + 0x98, 1, &fn), SW_ENOENT);
    assert_int_equal(sw_dinfo_inline_vars(d, f->func + 0x50, 0, &fn), SW_ENOENT);
    sw_dinfo_close(d);
}

/* ---- this test's own code, compiled by gcc, stopped for real -------------------------------- */

/* lt_outer calls lt_inner, always inlined, which calls lt_capture, an assembly hook that saves
 * the callee-saved registers and the SP at its entry into lt_regs (by DWARF number) and jumps
 * to lt_check.  lt_check walks a fake process holding those registers and a copy of the live
 * stack from that SP: lt_capture, the inline frame lt_inner, lt_outer, their caller.  The
 * variables must hold what the C code put in them.  Compiled as the test is (-O2 -g, or -O1
 * -g and ASan): every variable is used after the hook so that it is live across the call. */
struct lt_pt {
    int x;
    short y;
    char tag;
};

void lt_capture(void);
void lt_check(void);
void lt_use(int *arr);
void lt_keep(long v);
int lt_outer(int a, long b);

uint64_t lt_regs[17];
static int *lt_seen_calls;
static struct lt_pt *lt_seen_pt;
static bool lt_checked;

__asm__(".text\n"
        ".globl lt_capture\n"
        ".type lt_capture, @function\n"
        "lt_capture:\n"
        "    .cfi_startproc\n"
        "    movq %rbx, lt_regs+24(%rip)\n"
        "    movq %rbp, lt_regs+48(%rip)\n"
        "    movq %rsp, lt_regs+56(%rip)\n"
        "    movq %r12, lt_regs+96(%rip)\n"
        "    movq %r13, lt_regs+104(%rip)\n"
        "    movq %r14, lt_regs+112(%rip)\n"
        "    movq %r15, lt_regs+120(%rip)\n"
        "    jmp lt_check\n"
        "    .cfi_endproc\n"
        "    .size lt_capture, .-lt_capture\n");

__attribute__((noinline, noipa)) void
lt_use(int *arr)
{
    __asm__ volatile("" : : "r"(arr) : "memory");
}

/* Keeps V live up to the call: an opaque use the compiler cannot move before the hook. */
__attribute__((noinline, noipa)) void
lt_keep(long v)
{
    __asm__ volatile("" : : "r"(v) : "memory");
}

static inline __attribute__((always_inline)) int
lt_inner(int k, struct lt_pt *p)
{
    int sq = k * k;
    lt_capture();
    return sq + p->x + k;
}

__attribute__((noinline, noipa)) int
lt_outer(int a, long b)
{
    static int calls;
    struct lt_pt pt = { a, (short)-a, 'q' };
    int arr[3] = { a, a + 1, a + 2 };
    calls++;
    lt_seen_calls = &calls;
    lt_seen_pt = &pt;
    lt_use(arr);
    int r = lt_inner(a + 1, &pt);
    lt_keep(b);
    lt_keep(a);
    return r + a + pt.y + pt.tag + arr[1] + calls + (int)(b % 1000);
}

/* Copy the live stack from SP to the end of its mapping into P, without ASan's checks: the
 * frames above hold redzones it would report. */
__attribute__((no_sanitize_address, noinline)) static void
copy_stack(struct sw_proc *p, uintptr_t sp)
{
    uintptr_t lo = 0, hi = 0, end = 0;
    char line[512];
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    while (fgets(line, sizeof line, maps) != NULL)
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 && sp >= lo && sp < hi)
            end = hi;
    fclose(maps);
    assert_true(end > sp);
    size_t len = end - sp;
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    for (size_t i = 0; i < len; i++)
        copy[i] = ((const volatile uint8_t *)sp)[i];
    fake_proc_add_mem(p, sp, copy, len);
    free(copy);
}

static void
set_self_auxv(struct sw_proc *p)
{
    uint8_t buf[4096];
    FILE *f = fopen("/proc/self/auxv", "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 0);
    fake_proc_set_auxv(p, buf, n);
}

/* Runs on lt_capture's stack, in place of it: returns to lt_outer. */
__attribute__((noinline)) void
lt_check(void)
{
    static const unsigned saved[] = { RBX, RBP, RSP, R12, R13, R14, R15 };
    struct sw_walker_config cfg = { .cache_dir = "", .max_frames = 3 };
    struct sw_errbuf err = { 0 };
    struct sw_walker *w;
    struct sw_stack st;
    struct sw_function *inl, *outer;
    char self[4096], want[32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

    assert_true(n > 0);
    self[n] = 0;
    struct sw_proc *p = fake_proc_new(&arch_x86_64);
    assert_non_null(p);
    fake_proc_set_reg(p, 1, 16, (uintptr_t)&lt_capture);
    for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++)
        fake_proc_set_reg(p, 1, saved[i], lt_regs[saved[i]]);
    copy_stack(p, (uintptr_t)lt_regs[RSP]);
    fake_proc_add_mem(p, (uintptr_t)lt_seen_calls, lt_seen_calls, sizeof *lt_seen_calls);
    fake_proc_set_exec_path(p, self);
    set_self_auxv(p);
    if (sw_walker_new(p, &cfg, &w, &err) != 0)
        fail_msg("%s", err.msg);
    sw_stack_init(&st);
    assert_int_equal(sw_walk_stack(w, 1, &st), 0);
    assert_true(st.n >= 3);
    assert_int_equal(st.frames[1].kind, SW_FRAME_INLINE);
    assert_string_equal(st.frames[1].vname, "lt_inner");
    assert_int_equal(st.frames[2].kind, SW_FRAME_NORMAL);
    assert_string_equal(st.frames[2].vname, "lt_outer");

    struct fixture f = { .w = w, .p = p, .st = st };
    assert_int_equal(sw_frame_function(w, &st, 1, &inl), 0);
    assert_true(inl->inlined);
    /* GCC lists an inlined copy's parameters in reverse; gdb shows them in that order. */
    assert_int_equal(inl->nvars, 3);
    assert_int_equal(var(inl, "k")->kind, SW_VAR_PARAM);
    assert_int_equal(var(inl, "p")->kind, SW_VAR_PARAM);
    assert_int_equal(var(inl, "sq")->kind, SW_VAR_LOCAL);
    assert_string_equal(value(&f, inl, 1, "k"), "7");
    assert_string_equal(value(&f, inl, 1, "sq"), "49");
    snprintf(want, sizeof want, "%p", (void *)lt_seen_pt);
    assert_string_equal(value(&f, inl, 1, "p"), want);

    assert_int_equal(sw_frame_function(w, &st, 2, &outer), 0);
    assert_false(outer->inlined);
    assert_string_equal(value(&f, outer, 2, "a"), "6");
    assert_string_equal(value(&f, outer, 2, "b"), "1234567890123");
#ifdef __SANITIZE_ADDRESS__
    /* gcc -fsanitize=address moves locals whose address is taken into its own frame layout
     * and gives them no DW_AT_location: gdb shows them <optimized out> too. */
    assert_string_equal(value(&f, outer, 2, "pt"), "<out of scope>");
    assert_string_equal(value(&f, outer, 2, "arr"), "<out of scope>");
#else
    assert_string_equal(value(&f, outer, 2, "pt"), "{x = 6, y = -6, tag = 113 'q'}");
    assert_string_equal(value(&f, outer, 2, "arr"), "{6, 7, 8}");
#endif
    assert_string_equal(value(&f, outer, 2, "calls"), "1"); /* DW_OP_addr, PIE bias */
    /* Each variable only in its own frame. */
    uint8_t buf[8];
    assert_int_equal(sw_local_value(w, &st, 2, var(inl, "k"), buf, sizeof buf), SW_EOUTOFSCOPE);
    assert_int_equal(sw_local_value(w, &st, 1, var(outer, "a"), buf, sizeof buf), SW_EOUTOFSCOPE);
    sw_function_free(outer);
    sw_function_free(inl);
    sw_stack_fini(&st);
    sw_walker_free(w);
    lt_checked = true;
}

static void
test_locals_gcc_compiled_inline_and_outer_frames_hold_their_values(void **state)
{
    (void)state;
    lt_checked = false;
    int r = lt_outer(6, 1234567890123L);
    assert_true(lt_checked);
    /* lt_inner: 49 + 6 + 7; then + a - 6 + 'q' + 7 + calls + 123. */
    assert_int_equal(r, 62 + 6 - 6 + 'q' + 7 + 1 + 123);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_locals_function_lists_params_then_innermost_block_first_not_inlined_code),
        cmocka_unit_test(test_locals_block_locals_only_while_the_pc_is_in_the_block),
        cmocka_unit_test(test_locals_frame_function_failures),
        cmocka_unit_test(test_locals_register_memory_and_frame_base_locations),
        cmocka_unit_test(test_locals_pieces_join_registers_and_memory_and_padding_may_be_missing),
        cmocka_unit_test(test_locals_location_list_entries_by_pc),
        cmocka_unit_test(test_locals_computed_implicit_and_constant_values),
        cmocka_unit_test(test_locals_optimized_out_is_out_of_scope),
        cmocka_unit_test(test_locals_unknown_register_memory_or_cfa),
        cmocka_unit_test(test_locals_result_codes_for_bad_parameters_scope_and_buffer_size),
        cmocka_unit_test(test_locals_caller_frame_uses_its_own_cfa),
        cmocka_unit_test(test_locals_inline_frame_lists_the_inlined_functions_variables),
        cmocka_unit_test(
            test_locals_inline_variable_of_a_block_the_pc_left_is_listed_optimized_out),
        cmocka_unit_test(test_locals_format_truncates_and_rejects_null),
        cmocka_unit_test(test_locals_allocation_failures_return_enomem),
        cmocka_unit_test(test_locals_gcc_compiled_inline_and_outer_frames_hold_their_values),
    };
    return cmocka_run_group_tests_name("locals", tests, setup, teardown);
}
