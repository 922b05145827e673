/* rspwalk/types.h -- scalar types, the export macro and the error buffer.
 *
 * Shared by every public header; no functions here.
 *
 * Threads, the rule of every header: an object is used by one thread at a
 * time, and objects that share nothing may be used on different threads at
 * once.  Each header's "Threads:" paragraph says which objects share.
 */
#ifndef RSPWALK_TYPES_H
#define RSPWALK_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SW_API __attribute__((visibility("default")))

/* An address in the target, wide enough for every supported target. */
typedef uint64_t sw_addr;
/* A register value in host byte order, zero-extended from the target width. */
typedef uint64_t sw_word;
/* A thread id within one process as the stub numbers it (the TID part of
 * "pPID.TID"); 0 means "the default thread". */
typedef uint64_t sw_tid;

#define SW_TID_DEFAULT ((sw_tid)0)

/* The last failure on an object: a code from errors.h and one line of text
 * ("<what we were doing>: <what was wrong>"), no trailing newline. */
struct sw_errbuf {
    int code;
    char msg[320];
};

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_TYPES_H */
