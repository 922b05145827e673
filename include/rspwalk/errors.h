/* rspwalk/errors.h -- error codes, generated from one list.
 *
 * Every function returns 0 or one of these negative codes.  The message that
 * names the packet, address or file is kept on the object that failed.
 *
 * Threads: sw_strerror and sw_errname may be called from any thread at any
 * time; they read only static tables.
 */
#ifndef RSPWALK_ERRORS_H
#define RSPWALK_ERRORS_H

#include "rspwalk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Append only: the numbers are ABI. */
#define SW_ERRORS(X)                                                                               \
    X(OK, 0, "success")                                                                            \
    X(EINVAL, 1, "invalid argument")                                                               \
    X(ENOMEM, 2, "out of memory")                                                                  \
    X(EPROTO, 3, "malformed or unexpected reply from the stub")                                    \
    X(ETIMEDOUT, 4, "no reply from the stub before the timeout")                                   \
    X(ECONN, 5, "connection to the stub lost")                                                     \
    X(EMEM, 6, "target memory not readable")                                                       \
    X(ENOREG, 7, "register not available on this target")                                          \
    X(EUNSUP, 8, "the stub does not support this request")                                         \
    X(ENOENT, 9, "no such thread, file or object")                                                 \
    X(EBADELF, 10, "not a usable ELF file")                                                        \
    X(ENOSYM, 11, "no symbol covers the address")                                                  \
    X(EEXITED, 12, "the target has exited")                                                        \
    X(ESTUB, 13, "the stub reported an error")                                                     \
    X(EIO, 14, "input/output error")                                                               \
    X(ENOARCH, 15, "unknown or unsupported target architecture")                                   \
    X(ENOCFI, 16, "no call frame information covers the address")                                  \
    X(EOUTOFSCOPE, 17, "the variable has no value at this frame's pc (optimized out)")             \
    X(EBUFSIZE, 18, "the buffer is smaller than the value")                                        \
    X(EUNAVAIL, 19, "the value cannot be read (register not recovered, memory, location)")

enum sw_err {
#define SW_ERR_ENUM(name, num, msg) SW_##name = -(num),
    SW_ERRORS(SW_ERR_ENUM)
#undef SW_ERR_ENUM
};

/* The fixed text for CODE ("invalid argument").  Returns a static string,
 * never NULL ("unknown error" for a code outside the list). */
SW_API const char *sw_strerror(int code);

/* The enum name for CODE without the prefix ("EPROTO"); static, never NULL. */
SW_API const char *sw_errname(int code);

#ifdef __cplusplus
}
#endif
#endif /* RSPWALK_ERRORS_H */
