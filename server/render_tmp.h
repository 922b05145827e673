/* server/render_tmp.h -- the stand-in for sw_render_stacks_json (server/render_tmp.c).
 *
 * Goes when render/ has the library's renderer: the server then calls
 * sw_render_stacks_json, as the CLI does.
 */
#ifndef RSPWALK_SERVER_RENDER_TMP_H
#define RSPWALK_SERVER_RENDER_TMP_H

#include <stdio.h>

#include "rspwalk/render.h"

/* As sw_render_stacks_json (rspwalk/render.h), without locals. */
int srv_tmp_render_stacks_json(FILE *f, const struct sw_render_opts *o, struct sw_walker *w,
                               const sw_tid *tids, size_t n, struct sw_errbuf *err);

#endif /* RSPWALK_SERVER_RENDER_TMP_H */
