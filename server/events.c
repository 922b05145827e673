/* server/events.c -- the Server-Sent Events hub (server/events.h).
 *
 * One lock for the hub and its clients: publishing appends to every queue
 * under it, a reader takes from its own queue under it.  Format:
 * https://html.spec.whatwg.org/multipage/server-sent-events.html (event and
 * data fields; a line starting with ':' is a comment, used as keep-alive).
 */
#include "server/events.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct srv_events_client {
    struct srv_events *hub;
    struct srv_events_client *next;
    char *buf; /* QUEUE_BYTES of undelivered text, LEN used */
    size_t len;
    bool dropped;
};

struct srv_events {
    pthread_mutex_t lock;
    pthread_cond_t ready; /* something queued, or the hub closed */
    struct srv_events_client *clients;
    size_t nclients, max_clients, queue_bytes;
    bool closed;
};

/* The delay EventSource waits before it reconnects, in milliseconds. */
static const char greeting[] = ": rspwalkd events\nretry: 2000\n\n";

int
srv_events_new(size_t max_clients, size_t queue_bytes, struct srv_events **out)
{
    struct srv_events *h = calloc(1, sizeof *h);
    if (!h)
        return -1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->ready, &ca);
    pthread_condattr_destroy(&ca);
    h->max_clients = max_clients;
    h->queue_bytes = queue_bytes < sizeof greeting ? sizeof greeting : queue_bytes;
    *out = h;
    return 0;
}

void
srv_events_close(struct srv_events *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->closed = true;
    pthread_cond_broadcast(&h->ready);
    pthread_mutex_unlock(&h->lock);
}

void
srv_events_free(struct srv_events *h)
{
    if (!h)
        return;
    pthread_cond_destroy(&h->ready);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

/* Append TEXT (N bytes) to C's queue, or drop C when it does not fit. */
static void
client_push(struct srv_events_client *c, const char *text, size_t n)
{
    if (c->dropped)
        return;
    if (c->len + n > c->hub->queue_bytes) {
        c->dropped = true;
        return;
    }
    memcpy(c->buf + c->len, text, n);
    c->len += n;
}

void
srv_events_publish(void *arg, const char *type, const char *json)
{
    struct srv_events *h = arg;
    /* "data:" once per line of JSON, so a document with newlines stays one
     * event. */
    size_t lines = 1;
    for (const char *s = json; *s; s++)
        lines += *s == '\n';
    size_t cap = strlen(type) + strlen(json) + lines * 7 + 16;
    char *msg = malloc(cap);
    if (!msg)
        return;
    int n = snprintf(msg, cap, "event: %s\n", type);
    size_t len = (size_t)n;
    const char *s = json;
    for (;;) {
        size_t l = strcspn(s, "\n");
        memcpy(msg + len, "data: ", 6);
        memcpy(msg + len + 6, s, l);
        len += 6 + l;
        msg[len++] = '\n';
        if (s[l] == '\0')
            break;
        s += l + 1;
    }
    msg[len++] = '\n';
    pthread_mutex_lock(&h->lock);
    for (struct srv_events_client *c = h->clients; c; c = c->next)
        client_push(c, msg, len);
    pthread_cond_broadcast(&h->ready);
    pthread_mutex_unlock(&h->lock);
    free(msg);
}

struct srv_events_client *
srv_events_subscribe(struct srv_events *h)
{
    struct srv_events_client *c = calloc(1, sizeof *c);
    char *buf = malloc(h->queue_bytes);
    if (!c || !buf) {
        free(c);
        free(buf);
        return NULL;
    }
    c->hub = h;
    c->buf = buf;
    pthread_mutex_lock(&h->lock);
    if (h->closed || h->nclients >= h->max_clients) {
        pthread_mutex_unlock(&h->lock);
        free(buf);
        free(c);
        return NULL;
    }
    client_push(c, greeting, sizeof greeting - 1);
    c->next = h->clients;
    h->clients = c;
    h->nclients++;
    pthread_mutex_unlock(&h->lock);
    return c;
}

void
srv_events_unsubscribe(struct srv_events_client *c)
{
    if (!c)
        return;
    struct srv_events *h = c->hub;
    pthread_mutex_lock(&h->lock);
    for (struct srv_events_client **pp = &h->clients; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            h->nclients--;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    free(c->buf);
    free(c);
}

ssize_t
srv_events_read(struct srv_events_client *c, char *buf, size_t max, int keepalive_ms)
{
    static const char keepalive[] = ":\n\n";
    struct srv_events *h = c->hub;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += keepalive_ms / 1000;
    until.tv_nsec += (long)(keepalive_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&h->lock);
    int rc = 0;
    while (!h->closed && !c->dropped && c->len == 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&h->ready, &h->lock, &until);
    ssize_t n;
    if (h->closed || c->dropped) {
        n = -1;
    } else if (c->len == 0) {
        n = (ssize_t)(max < sizeof keepalive - 1 ? max : sizeof keepalive - 1);
        memcpy(buf, keepalive, (size_t)n);
    } else {
        size_t k = c->len < max ? c->len : max;
        memcpy(buf, c->buf, k);
        memmove(c->buf, c->buf + k, c->len - k);
        c->len -= k;
        n = (ssize_t)k;
    }
    pthread_mutex_unlock(&h->lock);
    return n;
}
