/* server/assets.c -- lookup and ETags of the built-in web files (server/assets.h).
 *
 * The table is generated (scripts/embed-web); this file only searches it and
 * hashes each file once, on first use.
 */
#include "server/assets.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "\"" + 16 hex digits + "\"" + NUL. */
#define ETAG_LEN 19

static char (*etags)[ETAG_LEN];
static pthread_once_t etags_once = PTHREAD_ONCE_INIT;

static void
etags_init(void)
{
    etags = calloc(srv_assets_count ? srv_assets_count : 1, sizeof *etags);
    if (!etags)
        return;
    for (size_t i = 0; i < srv_assets_count; i++) {
        /* FNV-1a 64: enough to tell two builds of a file apart. */
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t k = 0; k < srv_assets[i].size; k++)
            h = (h ^ srv_assets[i].data[k]) * 0x100000001b3ull;
        snprintf(etags[i], ETAG_LEN, "\"%016" PRIx64 "\"", h);
    }
}

const struct srv_asset *
srv_asset_find(const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    for (size_t i = 0; i < srv_assets_count; i++)
        if (strcmp(srv_assets[i].path, path) == 0)
            return &srv_assets[i];
    return NULL;
}

const char *
srv_asset_etag(const struct srv_asset *a)
{
    pthread_once(&etags_once, etags_init);
    if (!etags)
        return "\"0\"";
    return etags[a - srv_assets];
}
