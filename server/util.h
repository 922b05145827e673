/* server/util.h -- clocks, messages and timed waits that every file of server/ uses.
 *
 * Nothing here knows targets or links.
 */
#ifndef RSPWALK_SERVER_UTIL_H
#define RSPWALK_SERVER_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC and CLOCK_REALTIME in microseconds. */
uint64_t srv_now_us(void);
int64_t srv_wall_us(void);

/* Write a formatted message into BUF of LEN bytes (BUF may be NULL);
 * returns CODE. */
int srv_fail(char *buf, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "rspwalkd: " and the formatted line on stderr, escaped as the text output
 * escapes names (sw_text_fputs): log lines quote target names, stub replies
 * and file names, which must not forge lines or drive a terminal. */
void srv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A condition variable on CLOCK_MONOTONIC, and a wait on it until
 * DEADLINE_US (CLOCK_MONOTONIC microseconds; 0: no limit) that returns false
 * once the deadline has passed. */
void srv_cond_init(pthread_cond_t *cv);
bool srv_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t deadline_us);

#endif /* RSPWALK_SERVER_UTIL_H */
