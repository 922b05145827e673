/* dap/text.c -- one-line failures and JSON strings for the files of dap/ (dap/text.h).
 *
 * jansson refuses strings that are not UTF-8; names read from a target's
 * files need not be, so they are made safe here rather than dropped.
 */
#include "dap/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
dap_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

json_t *
dap_json_str(const char *str)
{
    if (str == NULL)
        return json_null();
    json_t *j = json_string(str);
    if (j != NULL)
        return j;
    /* Not UTF-8 (a symbol name from a binary): bytes past ASCII become '?'. */
    char *copy = strdup(str);
    if (copy == NULL)
        return NULL;
    for (char *c = copy; *c; c++)
        if ((unsigned char)*c >= 0x80)
            *c = '?';
    j = json_string(copy);
    free(copy);
    return j;
}
