/* rsp/event_fd.c -- rsp_session_event_fd: a descriptor to poll for stops.
 *
 * The link's own descriptor is not enough: a read may bring a reply and,
 * behind it, a stop (a target that exits at once after vCont, a %Stop
 * right after OK), which then waits in the session's buffer while poll()
 * on the socket blocks.  So the descriptor handed out is an epoll set of
 * the link's descriptor and an eventfd that the session keeps readable
 * while it holds anything unread: made on first use, when it installs the
 * exchange's changed hook, which the exchange calls after every read of the
 * link and every stop handed out (non-stop mode calls it too, through
 * rsp_exchange_changed).  Linux only, as the rest.
 */
#include "rsp/event_fd.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The exchange's changed hook (ARG is the session): the eventfd readable
 * while the exchange holds bytes or a stop not handed out, or non-stop mode
 * holds stops rsp_wait_stop has not returned. */
static void
event_fd_update(void *arg)
{
    struct rsp_session *s = arg;
    if (s->ev.ev_fd < 0)
        return;
    bool ready = rsp_exchange_unread(&s->x) || rsp_stops_pending(s) > 0;
    if (ready == s->ev.ready)
        return;
    uint64_t v = 1;
    ssize_t n = ready ? write(s->ev.ev_fd, &v, sizeof v) : read(s->ev.ev_fd, &v, sizeof v);
    if (n == (ssize_t)sizeof v || (!ready && n < 0 && errno == EAGAIN))
        s->ev.ready = ready;
}

void
rsp_event_fd_close(struct rsp_session *s)
{
    if (s->ev.ep_fd >= 0)
        close(s->ev.ep_fd);
    if (s->ev.ev_fd >= 0)
        close(s->ev.ev_fd);
    s->ev.ep_fd = s->ev.ev_fd = -1;
}

int
rsp_session_event_fd(struct rsp_session *s)
{
    if (s == NULL)
        return -1;
    if (s->ev.ep_fd >= 0)
        return s->ev.ep_fd;
    int ev = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event e = { .events = EPOLLIN };
    int link = rsp_session_fd(s);
    const char *what = ev < 0 ? "eventfd" : ep < 0 ? "epoll_create1" : NULL;
    if (what == NULL) {
        e.data.fd = ev;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e) < 0)
            what = "epoll_ctl";
    }
    if (what == NULL && link >= 0) {
        e.data.fd = link;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, link, &e) < 0)
            what = "epoll_ctl";
    }
    if (what != NULL) {
        int saved = errno;
        if (ev >= 0)
            close(ev);
        if (ep >= 0)
            close(ep);
        sw_fail(&s->err, SW_EIO, "the event descriptor: %s: %s", what, strerror(saved));
        return -1;
    }
    s->ev.ev_fd = ev;
    s->ev.ep_fd = ep;
    s->ev.ready = false;
    s->x.hooks.changed = event_fd_update;
    s->x.hooks.arg = s;
    event_fd_update(s);
    return ep;
}
