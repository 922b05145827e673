/* targets/rsp_byteorder.c -- the byte order of a stub that does not name it.
 *
 * target.xml's <architecture> "powerpc:common64" is both ppc64 (ELFv1,
 * big-endian) and ppc64le: QEMU sends the same text for both.  Without an
 * executable's ELF header to settle it, ask the stopped target: its MSR,
 * then its auxv.  Not the arch tables (arch/) and not the process backend
 * (targets/rsp_proc.c), which calls this once while it is built.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#include "rspwalk/arch.h"
#include "rspwalk/rsp.h"
#include "targets/targets_internal.h"
#include "util/util.h"

/* MSR bits (Power ISA 3.1, Book III, 4.2.1; IBM numbers bits from the
 * top): SF, bit 0, is set in 64-bit mode; LE, bit 63, in little-endian
 * mode.  A 64-bit Linux process runs with SF set, in its ELF's byte order. */
#define TGT_MSR_SF (UINT64_C(1) << 63)
#define TGT_MSR_LE UINT64_C(1)

/* Linux's AT_* keys are below 64 (include/uapi/linux/auxvec.h and the
 * arch auxvec.h files: AT_MINSIGSTKSZ is 51); in the wrong byte order a
 * key K reads as K << 56 on a 64-bit target.  256 leaves room for new keys. */
#define TGT_AUXV_KEY_MAX 256

enum tgt_order { TGT_ORDER_UNKNOWN = 0, TGT_ORDER_BIG, TGT_ORDER_LITTLE };

/* The description sharing A's <architecture> and word size in the other
 * byte order; NULL if the tables have none (every arch but ppc64). */
static const struct arch_desc *
twin_of(const struct arch_desc *a)
{
    for (const struct arch_desc *const *p = arch_all(); *p != NULL; p++)
        if ((*p)->big_endian != a->big_endian && (*p)->word_size == a->word_size &&
            strcasecmp((*p)->tdesc_arch, a->tdesc_arch) == 0)
            return *p;
    return NULL;
}

/* The order under which the 8 MSR bytes at P say 64-bit mode with LE
 * agreeing; UNKNOWN when both or neither do. */
static enum tgt_order
order_from_msr(const struct arch_desc *big, const struct arch_desc *little, const uint8_t *p)
{
    uint64_t as_big = arch_load(big, p, 8);
    uint64_t as_little = arch_load(little, p, 8);
    bool big_ok = (as_big & TGT_MSR_SF) && !(as_big & TGT_MSR_LE);
    bool little_ok = (as_little & TGT_MSR_SF) && (as_little & TGT_MSR_LE);
    if (big_ok == little_ok)
        return TGT_ORDER_UNKNOWN;
    return big_ok ? TGT_ORDER_BIG : TGT_ORDER_LITTLE;
}

/* The order under which every auxv key up to AT_NULL is small; UNKNOWN
 * when both or neither. */
static enum tgt_order
order_from_auxv(const struct arch_desc *big, const struct arch_desc *little, const uint8_t *data,
                size_t len)
{
    size_t w = big->word_size;
    bool big_ok = true, little_ok = true;
    size_t keys = 0;
    for (size_t off = 0; off + 2 * w <= len; off += 2 * w) {
        uint64_t kb = arch_load(big, data + off, w);
        uint64_t kl = arch_load(little, data + off, w);
        if (kb == 0 && kl == 0)
            break; /* AT_NULL */
        keys++;
        big_ok = big_ok && kb < TGT_AUXV_KEY_MAX;
        little_ok = little_ok && kl < TGT_AUXV_KEY_MAX;
    }
    if (keys == 0 || big_ok == little_ok)
        return TGT_ORDER_UNKNOWN;
    return big_ok ? TGT_ORDER_BIG : TGT_ORDER_LITTLE;
}

static bool
link_error(int rc)
{
    return rc == SW_ECONN || rc == SW_ETIMEDOUT;
}

/* The MSR of the stopped thread: from the stop reply when it carried it,
 * else from one 'g'.  0 with *ORDER set (maybe UNKNOWN), or a link error. */
static int
msr_order(struct rsp_session *s, const struct arch_desc *big, const struct arch_desc *little,
          enum tgt_order *order, struct sw_errbuf *err)
{
    const struct rsp_tdesc *td = rsp_session_tdesc(s);
    const struct rsp_treg *msr = NULL;
    *order = TGT_ORDER_UNKNOWN;
    for (size_t i = 0; td != NULL && i < td->nregs && msr == NULL; i++)
        if (strcasecmp(td->regs[i].name, "msr") == 0 && td->regs[i].bitsize == 64)
            msr = &td->regs[i];
    if (msr == NULL)
        return 0;

    const struct rsp_stop *st = rsp_last_stop(s);
    if (st == NULL || st->kind != RSP_STOP_SIGNAL)
        return 0;
    for (size_t i = 0; i < st->nexpedited; i++)
        if (st->expedited[i].regnum == msr->regnum && st->expedited[i].len >= 8) {
            *order = order_from_msr(big, little, st->expedited[i].bytes);
            return 0;
        }
    struct rsp_thread_id any = { 0, 0 };
    const uint8_t *g;
    size_t glen;
    int rc = rsp_regs_read(s, st->has_thread ? st->thread : any, &g, &glen);
    if (rc < 0)
        return link_error(rc) ? sw_fail(err, rc, "%s", rsp_session_errmsg(s)) : 0;
    if (msr->offset + 8 <= glen)
        *order = order_from_msr(big, little, g + msr->offset);
    return 0;
}

static int
auxv_order(struct rsp_session *s, const struct arch_desc *big, const struct arch_desc *little,
           enum tgt_order *order, struct sw_errbuf *err)
{
    char *data = NULL;
    size_t len = 0;
    *order = TGT_ORDER_UNKNOWN;
    if (!rsp_has_feature(s, RSP_FEAT_XFER_AUXV))
        return 0;
    int rc = rsp_xfer_read(s, "auxv", "", &data, &len);
    if (rc < 0)
        return link_error(rc) ? sw_fail(err, rc, "%s", rsp_session_errmsg(s)) : 0;
    *order = order_from_auxv(big, little, (const uint8_t *)data, len);
    free(data);
    return 0;
}

int
tgt_rsp_byte_order(struct rsp_session *s, const struct arch_desc *a, const struct arch_desc **out,
                   struct sw_errbuf *err)
{
    const struct arch_desc *twin = twin_of(a);
    *out = a;
    if (twin == NULL || a->word_size != 8)
        return 0;
    const struct arch_desc *big = a->big_endian ? a : twin;
    const struct arch_desc *little = a->big_endian ? twin : a;

    enum tgt_order order;
    int rc = msr_order(s, big, little, &order, err);
    if (rc == 0 && order == TGT_ORDER_UNKNOWN)
        rc = auxv_order(s, big, little, &order, err);
    if (rc < 0)
        return rc;
    if (order != TGT_ORDER_UNKNOWN)
        *out = order == TGT_ORDER_BIG ? big : little;
    return 0;
}
