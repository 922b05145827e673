/* tests/integration/locals_inline.c -- inlined functions with locals, for run-locals.sh.
 *
 * main -> lv_work (a real frame) -> lv_mid -> lv_leaf, the last two always inlined, so that
 * gdb shows the stop as two inline frames over lv_work.  Each level has parameters, locals in
 * registers and (lv_leaf's buf, lv_work's pt) in memory, and lv_leaf a lexical block and a
 * parameter the compiler drops; run-locals.sh builds it -O0 and -O2 and compares
 * `rspwalk --locals` with gdb's info args / info locals in every frame, inline ones included.
 * Not a fixture of the walk matrix (fixtures/src/fixture.c): only the locals test uses it.
 */
volatile int g_sink;
volatile int g_do_stop = 1;

struct lv_pt {
    int x;
    short y;
    char tag;
};

/* Keeps ARR in memory: its address escapes into a call the compiler cannot see through. */
__attribute__((noinline, noipa)) void
lv_use(const int *arr)
{
    g_sink = arr[0];
}

static inline __attribute__((always_inline)) int
lv_leaf(int k, const struct lv_pt *p, int dropped)
{
    int sq = k * k;
    (void)dropped; /* gdb: <optimized out> at -O2 */
    long prod = (long)sq * p->x;
    int buf[4] = { k, k + 1, k + 2, k + 3 };
    lv_use(buf);
    {
        int blk = sq + 3;
        if (g_do_stop)
            /* run-locals.sh is x86_64 only.  gdbserver reports this stop as a
             * software breakpoint with the pc of the int3, gdb shows the pc after
             * it: the nop keeps both pcs inside one range of every location list. */
            __asm__ volatile("int3\n\tnop");
        g_sink = blk;
    }
    g_sink = (int)prod + buf[1];
    return (int)prod + p->y;
}

static inline __attribute__((always_inline)) int
lv_mid(int m, struct lv_pt *p)
{
    int twice = m * 2;
    char mark = 'm';
    p->x += twice;
    int r = lv_leaf(twice + 1, p, m);
    g_sink = twice + mark;
    return r + twice;
}

__attribute__((noinline, noipa)) int
lv_work(int a, int b)
{
    struct lv_pt pt = { a, (short)-b, 'z' };
    unsigned long ul = 0xfeedfaceul;
    int r = lv_mid(a + b, &pt);
    g_sink = pt.x + pt.tag + (int)ul;
    return r;
}

int
main(int argc, char **argv)
{
    (void)argv;
    g_sink = lv_work(argc + 4, 7);
    return 0;
}
