/* server/events.h -- the Server-Sent Events hub behind GET /v1/events.
 *
 * The registry reports target state changes and sample progress through
 * srv_events_publish (a srv_event_fn); each subscribed client has a bounded
 * queue of formatted SSE text.  Publishing never waits: a client whose queue
 * is full is dropped (its stream ends), so a slow reader delays no one.
 * Keep-alive comments flow while nothing happens, so proxies and the idle
 * connection timeout leave the stream open.
 */
#ifndef RSPWALK_SERVER_EVENTS_H
#define RSPWALK_SERVER_EVENTS_H

#include <stddef.h>
#include <sys/types.h>

struct srv_events;
struct srv_events_client;

/* At most MAX_CLIENTS streams at once, each with at most QUEUE_BYTES of
 * undelivered text.  Returns 0 and *OUT (srv_events_free), or -1. */
int srv_events_new(size_t max_clients, size_t queue_bytes, struct srv_events **out);

/* End every stream (readers return -1 from now on); new subscriptions fail.
 * Called before the HTTP server stops, which waits for its readers. */
void srv_events_close(struct srv_events *h);

/* Free; every client must have been unsubscribed.  NULL is a no-op. */
void srv_events_free(struct srv_events *h);

/* A srv_event_fn (server/registry.h): ARG is the hub.  Queues
 * "event: TYPE\ndata: JSON\n\n" for every client; drops those whose queue
 * would overflow.  Callable from any thread. */
void srv_events_publish(void *arg, const char *type, const char *json);

/* A new stream, its queue starting with a comment and the client's retry
 * delay.  Returns NULL when MAX_CLIENTS are subscribed or the hub is closed.
 * Caller frees with srv_events_unsubscribe. */
struct srv_events_client *srv_events_subscribe(struct srv_events *h);

void srv_events_unsubscribe(struct srv_events_client *c);

/* Copy up to MAX bytes of C's queue into BUF, waiting up to KEEPALIVE_MS for
 * some; with none by then, a keep-alive comment.  Returns the byte count, or
 * -1 when the stream has ended (hub closed, client dropped). */
ssize_t srv_events_read(struct srv_events_client *c, char *buf, size_t max, int keepalive_ms);

#endif /* RSPWALK_SERVER_EVENTS_H */
