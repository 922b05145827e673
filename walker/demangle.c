/* walker/demangle.c -- function names as gdb's backtrace prints them.
 *
 * C++ linkage names are demangled with libiberty's cplus_demangle, the
 * demangler gdb itself uses, as gdb does (verbose): a symbol table's name
 * whole (gdb's minimal symbols), a DWARF function's name
 * without its return type (dwarf2_physname: DMGL_RET_DROP) and then without
 * its parameter list where gdb's own C++ name parser can take the name apart
 * (find_frame_funname's cp_remove_params); where that parser fails gdb
 * prints the name whole, and so does this.  libiberty is included here and
 * nowhere else.  Not the choice of the name (elf/symbols.c, the DWARF readers).
 */
#include "rspwalk/symlookup.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* gdb's parser (gdb/cp-name-parser.y) does not take these apart, as
 * measured with gdb 13.1's backtraces of g++ 12 programs: ABI tags
 * ("retstr[abi:cxx11](int)"), lambdas and unnamed types ("{lambda(int)#1}"),
 * noexcept function types, decltype(nullptr), unsigned __int128,
 * _Complex types, clone suffixes. */
static const char *const unparsed[] = {
    "[abi:", "{", "noexcept", "decltype(", "unsigned __int128", "_Complex", "[clone", NULL,
};

/* The demangler's special names, which are not functions with parameters
 * to gdb either: printed whole. */
static const char *const specials[] = {
    "vtable for ",
    "VTT for ",
    "construction vtable for ",
    "typeinfo for ",
    "typeinfo name for ",
    "typeinfo fn for ",
    "non-virtual thunk to ",
    "virtual thunk to ",
    "covariant return thunk to ",
    "guard variable for ",
    "TLS init function for ",
    "TLS wrapper function for ",
    "reference temporary #",
    "hidden alias for ",
    "transaction clone for ",
    "non-transaction clone for ",
    NULL,
};

static bool
is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

#define MAX_DEPTH 256

/* The length of the name NAME keeps without its parameter list and the
 * qualifiers after it ("ns::K::f(int) const" -> "ns::K::f"); strlen(NAME)
 * when it has none; -1 when gdb's parser would fail and print it whole. */
static long
name_without_params(const char *s)
{
    char stack[MAX_DEPTH];
    size_t depth = 0, open_at = 0, close_at = 0;
    bool have_group = false;

    for (size_t k = 0; unparsed[k]; k++)
        if (strstr(s, unparsed[k]) != NULL)
            return -1;
    for (size_t k = 0; specials[k]; k++)
        if (strncmp(s, specials[k], strlen(specials[k])) == 0)
            return -1;
    for (size_t i = 0; s[i] != '\0';) {
        char c = s[i];
        if (is_ident(c) && !isdigit((unsigned char)c)) {
            size_t j = i;
            while (is_ident(s[j]))
                j++;
            bool op = j - i == 8 && strncmp(s + i, "operator", 8) == 0;
            i = j;
            if (!op)
                continue;
            while (s[i] == ' ')
                i++;
            if ((s[i] == '(' && s[i + 1] == ')') || (s[i] == '[' && s[i + 1] == ']'))
                i += 2; /* operator(), operator[] */
            else if (s[i] == '"')
                return -1; /* a literal operator */
            else
                for (int n = 0; n < 3 && s[i] && strchr("+-*/%^&|~!=<>,", s[i]); n++)
                    i++; /* operator<<=, operator->* ... (else a conversion, new, delete) */
            continue;
        }
        if (c == '(' || c == '<' || c == '[') {
            if (depth == MAX_DEPTH)
                return -1;
            if (c == '(' && memchr(stack, '<', depth) != NULL) {
                /* In template arguments, "long (int)" is a function type,
                 * which gdb's parser rejects; "(*)(int)", "(&)", "(K::*)"
                 * are declarators and "(char)97" a cast, which it takes. */
                size_t p = i;
                while (p > 0 && s[p - 1] == ' ')
                    p--;
                char before = p > 0 ? s[p - 1] : '\0';
                if (is_ident(before) || before == '>' || before == '*' || before == '&') {
                    size_t q = i + 1;
                    while (is_ident(s[q]) || s[q] == ':')
                        q++;
                    bool declarator = s[i + 1] == '*' || s[i + 1] == '&' ||
                                      (q > i + 1 && s[q] == '*' && s[q - 1] == ':');
                    if (!declarator)
                        return -1;
                }
            }
            if (c == '(' && depth == 0)
                open_at = i;
            stack[depth++] = c;
        } else if (c == ')' || c == '>' || c == ']') {
            char want = c == ')' ? '(' : c == '>' ? '<' : '[';
            if (depth == 0 || stack[depth - 1] != want)
                return -1;
            depth--;
            if (c == ')' && depth == 0) {
                close_at = i;
                have_group = true;
            }
        }
        i++;
    }
    if (depth != 0)
        return -1;
    if (!have_group)
        return (long)strlen(s);
    /* After the last parameter list only cv-qualifiers; a ref-qualifier
     * ("f() &&") or anything else: gdb's parser fails. */
    for (const char *t = s + close_at + 1; *t != '\0';) {
        if (*t == ' ') {
            t++;
            continue;
        }
        size_t n = strncmp(t, "const", 5) == 0      ? 5
                   : strncmp(t, "volatile", 8) == 0 ? 8
                   : strncmp(t, "restrict", 8) == 0 ? 8
                                                    : 0;
        if (n == 0 || is_ident(t[n]))
            return -1;
        t += n;
    }
    size_t end = open_at;
    while (end > 0 && s[end - 1] == ' ')
        end--;
    return end > 0 ? (long)end : -1;
}

char *
sw_name_demangle(const char *name, enum sw_name_form form)
{
    if (name == NULL)
        return NULL;
    /* As gdb's demangling through bfd_demangle: leading dots aside, a
     * suffix from '@' ("@@GLIBCXX_3.4", "@plt") aside and put back; always
     * verbose ("std::basic_string<char, ...>", not "std::string"). */
    size_t pre = strspn(name, ".$");
    const char *at = strchr(name + pre, '@');
    size_t len = at ? (size_t)(at - name) - pre : strlen(name + pre);
    int opts =
        DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE | (form == SW_NAME_FROM_DEBUG ? DMGL_RET_DROP : 0);
    char *d = NULL;
    if (len > 2 && strncmp(name + pre, "_Z", 2) == 0) {
        char *core = strndup(name + pre, len);
        if (core == NULL)
            return NULL;
        d = cplus_demangle(core, opts);
        free(core);
    }
    if (d == NULL)
        return strdup(name);
    if (form == SW_NAME_FROM_DEBUG) {
        long keep = name_without_params(d);
        if (keep >= 0)
            d[keep] = '\0';
    }
    if (pre == 0 && at == NULL)
        return d;
    size_t dl = strlen(d), sl = at ? strlen(at) : 0;
    char *out = malloc(pre + dl + sl + 1);
    if (out != NULL) {
        memcpy(out, name, pre);
        memcpy(out + pre, d, dl);
        memcpy(out + pre + dl, at ? at : "", sl + 1);
    }
    free(d);
    return out;
}
