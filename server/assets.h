/* server/assets.h -- the web page's files, built into rspwalkd.
 *
 * scripts/embed-web writes srv_assets[] from server/web/ at build time
 * (build/<config>/server/web_assets.c), so the installed server needs no
 * files beside it and serves exactly what was built.  A request names a file
 * by its path; nothing here touches the file system.
 */
#ifndef RSPWALK_SERVER_ASSETS_H
#define RSPWALK_SERVER_ASSETS_H

#include <stddef.h>

struct srv_asset {
    const char *path; /* "/index.html", "/app.js": the URL path */
    const char *type; /* the Content-Type */
    const unsigned char *data;
    size_t size;
};

/* Generated: SRV_ASSETS_COUNT rows, then one of zeros. */
extern const struct srv_asset srv_assets[];
extern const size_t srv_assets_count;

/* The file at URL PATH ("/" is "/index.html"), or NULL.  Exact match only:
 * "..", "%2e" or a doubled slash name nothing. */
const struct srv_asset *srv_asset_find(const char *path);

/* A strong ETag of A's bytes ("\"16 hex digits\""), static storage. */
const char *srv_asset_etag(const struct srv_asset *a);

#endif /* RSPWALK_SERVER_ASSETS_H */
