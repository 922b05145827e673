/* rsp/event_fd.c -- rsp_session_event_fd: a descriptor to poll for stops.
 *
 * The link's own descriptor is not enough: a read may bring a reply and,
 * behind it, a stop (a target that exits at once after vCont, a %Stop
 * right after OK), which then waits in the session's buffer while poll()
 * on the socket blocks.  So the descriptor handed out is an epoll set of
 * the link's descriptor and an eventfd that the session keeps readable
 * while it holds anything unread (rsp_event_fd_update after every read of
 * the link and every stop handed out).  Linux only, as the rest.
 */
#include "rsp/rsp_internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

void
rsp_event_fd_update(struct rsp_session *s)
{
    if (s->ev_fd < 0)
        return;
    bool ready = s->rpos < s->rlen || s->has_pending || s->nevents > 0 || s->ns_ack_due;
    if (ready == s->ev_ready)
        return;
    uint64_t v = 1;
    ssize_t n = ready ? write(s->ev_fd, &v, sizeof v) : read(s->ev_fd, &v, sizeof v);
    if (n == (ssize_t)sizeof v || (!ready && n < 0 && errno == EAGAIN))
        s->ev_ready = ready;
}

void
rsp_event_fd_close(struct rsp_session *s)
{
    if (s->ep_fd >= 0)
        close(s->ep_fd);
    if (s->ev_fd >= 0)
        close(s->ev_fd);
    s->ep_fd = s->ev_fd = -1;
}

int
rsp_session_event_fd(struct rsp_session *s)
{
    if (s == NULL)
        return -1;
    if (s->ep_fd >= 0)
        return s->ep_fd;
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
    s->ev_fd = ev;
    s->ep_fd = ep;
    s->ev_ready = false;
    rsp_event_fd_update(s);
    return ep;
}
