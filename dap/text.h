/* dap/text.h -- the strings a DAP session writes: one-line failures and JSON strings.
 *
 * Shared by the files of dap/; no protocol logic here.
 */
#ifndef RSPWALK_DAP_TEXT_H
#define RSPWALK_DAP_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* Write one line to ERR (ERRLEN bytes); returns -1, a request handler's failure. */
int dap_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A JSON string of STR (NULL: null); bytes that are not UTF-8 become '?'.
 * New reference, NULL when out of memory. */
json_t *dap_json_str(const char *str);

#endif /* RSPWALK_DAP_TEXT_H */
