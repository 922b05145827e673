/* tests/tools/fake_transport.h -- a transport that replays a recorded RSP transcript.
 *
 * The fake plays the stub: it checks every packet the session sends against
 * the next "->" line and answers with the "<-" lines, with acks as the mode
 * requires.  Test-only; not part of the library.
 *
 * Transcript format (fixtures/transcripts/NAME.rsp; RSPWALK_DEBUG=pkt prints it):
 *   # comment                  ignored, as are empty lines
 *   -> PAYLOAD                 the session must send this packet
 *   <- PAYLOAD                 the stub replies (framed here with a good checksum;
 *                              PAYLOAD is the raw text between '$' and '#', so
 *                              run-lengths and '}' escapes pass through as written)
 *   <% PAYLOAD                 a '%' notification
 *   -! interrupt               the session must send the raw byte 0x03
 *   <! garbage BYTES           raw bytes, no framing (also: <! raw BYTES)
 *   <! badsum PAYLOAD          a packet with a wrong checksum: in ack mode the
 *                              session must answer '-', then the next lines follow
 *   <! nak                     right after a "->" line: the stub answers '-' and
 *                              the next line must be the same "->" again
 *   <! hangup                  the stub closes the connection
 *   <! silence [MS]            the next read times out (SW_ETIMEDOUT), after MS
 *                              milliseconds of real time (default 0)
 *   <! flood BYTES             every later read returns BYTES, repeated, forever
 * In every payload, \xNN stands for the byte NN.  Ack mode is on until the
 * stub answers OK to QStartNoAckMode and the session acks that OK.
 */
#ifndef RSPWALK_TESTS_FAKE_TRANSPORT_H
#define RSPWALK_TESTS_FAKE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "rsp/transport.h"

struct fake_script;

/* Parse a transcript from TEXT or from the file PATH (relative to the
 * repository root, where the tests run).  NULL on a malformed line or a
 * missing file.  Free with fake_script_free. */
struct fake_script *fake_script_parse(const char *text);
struct fake_script *fake_script_load(const char *path);
void fake_script_free(struct fake_script *fs);

/* Deliver at most N bytes per read (1: a packet arrives byte by byte). */
void fake_script_set_chunk(struct fake_script *fs, size_t n);

/* A transport over FS; the session takes it over and closes it.  FS must
 * outlive it. */
struct rsp_transport *fake_transport_new(struct fake_script *fs);

/* "" while the session did what the transcript says; else the first
 * mismatch, naming the transcript line. */
const char *fake_script_error(const struct fake_script *fs);
/* True when every line has been played. */
bool fake_script_done(const struct fake_script *fs);
/* Bytes the session wrote, acks included. */
size_t fake_script_bytes_written(const struct fake_script *fs);

#endif /* RSPWALK_TESTS_FAKE_TRANSPORT_H */
