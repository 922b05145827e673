/* dap/value.c -- a printed aggregate split into its members, for expandable variables.
 *
 * The library prints a structure one level deep and an array's first
 * elements as gdb's print does ("{x = 1, y = 2}", "{1, 2, 3}", with nested
 * braces and quoted strings); an editor shows them as a tree.  The members
 * are cut from that text, so each shows exactly what `rspwalk --locals`
 * prints for it.  No target reads here.
 */
#include "dap/session_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
dap_value_expandable(const char *value)
{
    size_t n = value ? strlen(value) : 0;
    if (n < 3 || value[0] != '{' || value[n - 1] != '}')
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!isspace((unsigned char)value[i]))
            return true;
    return false;
}

void
dap_members_free(struct dap_member *m, size_t n)
{
    for (size_t i = 0; m != NULL && i < n; i++) {
        free(m[i].name);
        free(m[i].value);
    }
    free(m);
}

static char *
dup_trim(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    char *out = malloc(n + 1);
    if (out != NULL) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    return out;
}

/* Where " = " separates a member's name from its value in ITEM (N bytes):
 * after a name (an identifier or "[index]") at the item's start; else 0. */
static size_t
name_end(const char *item, size_t n)
{
    size_t i = 0;
    while (i < n && isspace((unsigned char)item[i]))
        i++;
    size_t first = i;
    if (i < n && item[i] == '[') {
        while (i < n && item[i] != ']')
            i++;
        i++;
    } else {
        while (i < n && (isalnum((unsigned char)item[i]) || item[i] == '_'))
            i++;
    }
    if (i == first || i + 3 > n || memcmp(item + i, " = ", 3) != 0)
        return 0;
    return i;
}

long
dap_value_split(const char *value, struct dap_member **out)
{
    *out = NULL;
    if (!dap_value_expandable(value))
        return 0;
    size_t n = strlen(value) - 1, cap = 0, count = 0;
    struct dap_member *m = NULL;
    int depth = 0;
    char quote = 0;
    size_t start = 1;

    for (size_t i = 1; i <= n; i++) {
        char c = value[i];
        if (quote) {
            if (c == '\\' && i + 1 < n)
                i++;
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '{' || c == '(' || c == '<') {
            depth++;
        } else if ((c == '}' || c == ')' || c == '>') && depth > 0 && i < n) {
            depth--;
        } else if ((c == ',' && depth == 0) || i == n) {
            /* One item: value[start, i). */
            const char *item = value + start;
            size_t len = i - start, ne = name_end(item, len);
            if (count == cap) {
                size_t nc = cap ? 2 * cap : 8;
                struct dap_member *nm = realloc(m, nc * sizeof *nm);
                if (nm == NULL) {
                    dap_members_free(m, count);
                    return -1;
                }
                m = nm;
                cap = nc;
            }
            char idx[32];
            snprintf(idx, sizeof idx, "[%zu]", count);
            m[count].name = ne ? dup_trim(item, ne) : strdup(idx);
            m[count].value = ne ? dup_trim(item + ne + 3, len - ne - 3) : dup_trim(item, len);
            count++;
            if (m[count - 1].name == NULL || m[count - 1].value == NULL) {
                dap_members_free(m, count);
                return -1;
            }
            start = i + 1;
        }
    }
    *out = m;
    return (long)count;
}
