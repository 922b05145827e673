/* tests/tools/session_check.c -- checks shared by the tests of scripted RSP sessions. */
#include "tests/tools/session_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

void
fake_script_finish(struct rsp_session *s, struct fake_script *fs, bool all_played)
{
    rsp_session_close(s);
    const char *e = fake_script_error(fs);
    if (e[0] != '\0')
        fail_msg("transcript: %s", e);
    if (all_played && !fake_script_done(fs))
        fail_msg("transcript: not every line was played");
    fake_script_free(fs);
}

void
assert_contains(const char *msg, const char *part)
{
    if (strstr(msg, part) == NULL)
        fail_msg("message '%s' does not contain '%s'", msg, part);
}
