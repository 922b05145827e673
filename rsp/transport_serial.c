/* rsp/transport_serial.c -- serial devices (/dev/ttyX[@BAUD]) in raw mode.
 *
 * Opens the device without making it our controlling terminal, switches it to
 * raw 8N1 at a standard rate and hands the descriptor to the generic
 * descriptor transport.  No modem control, no flow control.
 */
/* cfmakeraw and the B57600+ rates are BSD/GNU extensions of termios. */
#define _DEFAULT_SOURCE

#include "rsp/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "util/util.h"

/* gdb's default for "set serial baud" is 9600, but every stub we meet
 * (gdbserver on a board console, OpenOCD's UART bridges, Zephyr) runs 115200. */
#define SERIAL_DEFAULT_BAUD 115200u

struct baud_row {
    unsigned baud;
    speed_t speed;
};

static const struct baud_row baud_rows[] = {
    { 1200, B1200 },       { 2400, B2400 },       { 4800, B4800 },       { 9600, B9600 },
    { 19200, B19200 },     { 38400, B38400 },     { 57600, B57600 },     { 115200, B115200 },
    { 230400, B230400 },   { 460800, B460800 },   { 500000, B500000 },   { 576000, B576000 },
    { 921600, B921600 },   { 1000000, B1000000 }, { 1152000, B1152000 }, { 1500000, B1500000 },
    { 2000000, B2000000 }, { 3000000, B3000000 }, { 4000000, B4000000 },
};

static const struct baud_row *
baud_find(unsigned baud)
{
    for (size_t i = 0; i < sizeof baud_rows / sizeof baud_rows[0]; i++)
        if (baud_rows[i].baud == baud)
            return &baud_rows[i];
    return NULL;
}

static int
bad_baud(struct sw_errbuf *err, const char *dev, unsigned baud)
{
    char list[256];
    size_t used = 0;

    list[0] = '\0';
    for (size_t i = 0; i < sizeof baud_rows / sizeof baud_rows[0] && used < sizeof list; i++) {
        int n = snprintf(list + used, sizeof list - used, "%s%u", i ? ", " : "", baud_rows[i].baud);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return sw_fail(err, SW_EINVAL, "%s@%u: unsupported baud rate %u; expected one of %s", dev, baud,
                   baud, list);
}

/* Raw 8N1, receiver on, modem lines ignored (a USB-serial adapter without
 * DCD would otherwise block the open or hang up), no flow control. */
static int
serial_setup(int fd, speed_t speed)
{
    struct termios tio;

    if (tcgetattr(fd, &tio) != 0)
        return -1;
    cfmakeraw(&tio);
    tio.c_cflag |= CLOCAL | CREAD;
    tio.c_cflag &= ~(tcflag_t)(CSTOPB | CRTSCTS);
    tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF | IXANY);
    /* read() returns what is there; transport.c waits with poll(). */
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (cfsetispeed(&tio, speed) != 0 || cfsetospeed(&tio, speed) != 0)
        return -1;
    if (tcsetattr(fd, TCSANOW, &tio) != 0)
        return -1;
    /* Whatever the stub sent before we came is stale. */
    tcflush(fd, TCIFLUSH);
    return 0;
}

int
rsp_transport_serial_open(const char *dev, unsigned baud, struct rsp_transport **out,
                          struct sw_errbuf *err)
{
    char name[512];

    *out = NULL;
    if (baud == 0)
        baud = SERIAL_DEFAULT_BAUD;
    const struct baud_row *row = baud_find(baud);
    if (row == NULL)
        return bad_baud(err, dev, baud);
    /* The name is the device and rate the user wrote; the default rate is
     * left out so "/dev/ttyS0" reads as given. */
    if (baud == SERIAL_DEFAULT_BAUD)
        snprintf(name, sizeof name, "%s", dev);
    else
        snprintf(name, sizeof name, "%s@%u", dev, baud);

    /* O_NONBLOCK so that a line without carrier cannot block the open. */
    int fd = open(dev, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return sw_fail(err, e == ENOENT ? SW_ENOENT : SW_EIO, "%s: %s", dev, strerror(e));
    }
    if (!isatty(fd)) {
        close(fd);
        return sw_fail(err, SW_EINVAL, "%s: not a terminal device", dev);
    }
    int fl = fcntl(fd, F_GETFL);
    if (serial_setup(fd, row->speed) != 0 || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return sw_fail(err, SW_EIO, "%s: setting raw mode at %u baud: %s", dev, baud, strerror(e));
    }
    return rsp_transport_fd_open(fd, name, out, err);
}
