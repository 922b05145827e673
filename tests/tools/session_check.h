/* tests/tools/session_check.h -- checks shared by the tests of scripted RSP sessions.
 *
 * Test-only: they fail the current cmocka test.
 */
#ifndef RSPWALK_TESTS_SESSION_CHECK_H
#define RSPWALK_TESTS_SESSION_CHECK_H

#include <stdbool.h>

#include "rspwalk/rsp.h"
#include "tests/tools/fake_transport.h"

/* End a scripted session: close S (may be NULL), then fail when the session
 * strayed from FS (fake_script_error) or, with ALL_PLAYED, left lines of it
 * unplayed; frees FS. */
void fake_script_finish(struct rsp_session *s, struct fake_script *fs, bool all_played);

/* Fail unless MSG contains PART, naming both. */
void assert_contains(const char *msg, const char *part);

#endif /* RSPWALK_TESTS_SESSION_CHECK_H */
