/* tests/tools/fake_proc.h -- a ProcessState over tables of registers and memory.
 *
 * For stepper and walker unit tests: build a stack in memory, set the
 * registers of frame 0, walk.  Test-only; not part of the library.
 */
#ifndef RSPWALK_TESTS_FAKE_PROC_H
#define RSPWALK_TESTS_FAKE_PROC_H

#include "rspwalk/rspwalk.h"

/* A new fake process of architecture A with one thread (tid 1).  Free with
 * sw_proc_free (or hand to sw_walker_new). */
struct sw_proc *fake_proc_new(const struct arch_desc *a);

/* Set DWARF register DW (or the arch's pseudo PC number) of thread TID. */
void fake_proc_set_reg(struct sw_proc *p, sw_tid tid, unsigned dw, sw_word val);

/* Add a readable region of LEN bytes at ADDR, copied from DATA (zeros if NULL). */
void fake_proc_add_mem(struct sw_proc *p, sw_addr addr, const void *data, size_t len);

/* Store a target word (arch width and byte order) at ADDR inside a region. */
void fake_proc_put_word(struct sw_proc *p, sw_addr addr, sw_word val);

/* Copy LEN bytes into a region at ADDR. */
void fake_proc_put(struct sw_proc *p, sw_addr addr, const void *data, size_t len);

/* The thread list (default: {1}). */
void fake_proc_set_threads(struct sw_proc *p, const sw_tid *tids, size_t n);

/* Add a module the target reports (what libraries-svr4 would list). */
void fake_proc_add_module(struct sw_proc *p, const char *name, sw_addr l_addr);

/* Drop every module named NAME from the list the target reports. */
void fake_proc_remove_module(struct sw_proc *p, const char *name);

/* The raw auxiliary vector the target reports (LEN bytes copied from DATA,
 * target format); NULL for none, which makes the auxv op SW_EUNSUP. */
void fake_proc_set_auxv(struct sw_proc *p, const void *data, size_t len);

/* Make the auxv op fail with CODE (SW_ETIMEDOUT to fake a dead link) and the
 * message "auxv: injected failure"; 0 restores it. */
void fake_proc_fail_auxv(struct sw_proc *p, int code);

/* The executable path the target reports (exec-file); NULL for none. */
void fake_proc_set_exec_path(struct sw_proc *p, const char *path);

/* Make every later memory read fail with CODE (SW_ETIMEDOUT to fake a dead
 * link); 0 restores normal reads. */
void fake_proc_fail_reads(struct sw_proc *p, int code);

/* Memory reads served so far. */
unsigned fake_proc_reads(const struct sw_proc *p);

/* Give P a read_mem_batch op: exact ranges read as single reads are, ranges
 * without a buffer (sw_mem_req) only noted.  fake_proc_batches counts its
 * calls; fake_proc_warmed points *ADDRS at the noted addresses, in order,
 * and returns how many. */
void fake_proc_enable_batch(struct sw_proc *p);
unsigned fake_proc_batches(const struct sw_proc *p);
size_t fake_proc_warmed(const struct sw_proc *p, const sw_addr **addrs);

/* Give P a prefetch_threads op that notes the threads it is given, every
 * call's after the last's, or fails with CODE after fake_proc_fail_prefetch
 * (0 restores it) and the message "prefetch: injected failure".
 * fake_proc_prefetches counts its calls; fake_proc_prefetched points *TIDS
 * at the noted threads and returns how many. */
void fake_proc_enable_prefetch(struct sw_proc *p);
void fake_proc_fail_prefetch(struct sw_proc *p, int code);
unsigned fake_proc_prefetches(const struct sw_proc *p);
size_t fake_proc_prefetched(const struct sw_proc *p, const sw_tid **tids);

/* Serve the host file HOST_PATH as the target's file TARGET_PATH through
 * read_file (vFile).  Until a file is added, read_file fails with
 * SW_EUNSUP, as a stub without Host I/O does; an unknown path is SW_ENOENT. */
void fake_proc_add_file(struct sw_proc *p, const char *target_path, const char *host_path);

/* Bytes served by read_file so far. */
size_t fake_proc_file_bytes(const struct sw_proc *p);

#endif /* RSPWALK_TESTS_FAKE_PROC_H */
