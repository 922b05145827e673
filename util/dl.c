/* util/dl.c -- shared libraries opened on first use (util/dl.h). */
#include "util/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static bool
load_locked(struct sw_dl *dl)
{
    dl->lib = dlopen(dl->soname, RTLD_NOW | RTLD_LOCAL);
    if (dl->lib == NULL) {
        const char *e = dlerror();
        snprintf(dl->error, sizeof dl->error, "%s", e ? e : "cannot be opened");
        if (strstr(dl->error, dl->soname) == NULL)
            snprintf(dl->error, sizeof dl->error, "%s: %s", dl->soname, e ? e : "cannot be opened");
        return false;
    }
    for (size_t i = 0; i < dl->nsyms; i++) {
        void *fn = dlsym(dl->lib, dl->syms[i].name);
        if (fn == NULL) {
            snprintf(dl->error, sizeof dl->error, "%s: no function %s", dl->soname,
                     dl->syms[i].name);
            dlclose(dl->lib);
            dl->lib = NULL;
            return false;
        }
        /* A function pointer through its object representation, as dlsym
         * hands it over (POSIX requires the two to convert). */
        memcpy(dl->syms[i].slot, &fn, sizeof fn);
    }
    return true;
}

bool
sw_dl_load(struct sw_dl *dl, const char **why)
{
    pthread_mutex_lock(&dl->lock);
    if (!dl->tried) {
        dl->tried = true;
        dl->ok = load_locked(dl);
        if (!dl->ok)
            sw_debug(SW_DBG_CACHE, "dl: %s", dl->error);
    }
    bool ok = dl->ok;
    pthread_mutex_unlock(&dl->lock);
    if (!ok && why != NULL)
        *why = dl->error;
    return ok;
}
