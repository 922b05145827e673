/* util/env.c -- the environment variables rspwalk reads, read in one place.
 *
 * Read once per process (pthread_once), so any thread may ask.  The list and
 * the meaning of each are in docs/usage.md ("Environment").  The library
 * below the configs reads them only through the *_config_init functions and,
 * where a layer has no config (the debug channels, the CFI table switch, the
 * ELF cache's uncompressed copies, the cache directory's default), here.
 */
#include "util/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct sw_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* Whether variable NAME is set to something other than "" or "0". */
static bool
env_on(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/* A process-lifetime copy of variable NAME, or NULL when it is unset. */
static char *
env_copy(const char *name)
{
    const char *v = getenv(name);
    return v != NULL ? strdup(v) : NULL; /* not sw_strdup: no allocation-failure hook */
}

static void
env_read(void)
{
    const char *dbg = getenv("RSPWALK_DEBUG");

    free(env.xdg_cache_home);
    free(env.home);
    memset(&env, 0, sizeof env);
    /* Set at all, as before they were read here: RSPWALK_NO_CACHE=0 still
     * turns the caches off. */
    env.no_cache = getenv("RSPWALK_NO_CACHE") != NULL;
    env.no_pipeline = getenv("RSPWALK_NO_PIPELINE") != NULL;
    env.cfi_whole_table = env_on("RSPWALK_CFI_WHOLE_TABLE");
    if (dbg != NULL) {
        if (strstr(dbg, "pkt"))
            env.debug |= SW_DBG_PKT;
        if (strstr(dbg, "step"))
            env.debug |= SW_DBG_STEP;
        if (strstr(dbg, "cache"))
            env.debug |= SW_DBG_CACHE;
        if (strstr(dbg, "time"))
            env.debug |= SW_DBG_TIME;
        if (strstr(dbg, "all"))
            env.debug |= SW_DBG_PKT | SW_DBG_STEP | SW_DBG_CACHE;
    }
    env.xdg_cache_home = env_copy("XDG_CACHE_HOME");
    env.home = env_copy("HOME");
    /* The clock of sw_now_us, read here so that util/debug.c, which prints
     * the time since now, is the one that uses this file. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    env.t0_us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

const struct sw_env *
sw_env_get(void)
{
    pthread_once(&env_once, env_read);
    return &env;
}

void
sw_test_env_reread(void)
{
    pthread_once(&env_once, env_read);
    env_read();
}
