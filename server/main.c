/* server/main.c -- rspwalkd, the stack server: options and start-up.
 *
 * A placeholder until the server lands: it says so and exits non-zero.
 */
#include <stdio.h>
#include <stdlib.h>

int
main(void)
{
    fputs("rspwalkd: not built yet\n", stderr);
    return EXIT_FAILURE;
}
