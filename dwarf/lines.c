/* dwarf/lines.c -- source lines: the line table at an address, and the call site of an
 * inlined subroutine.
 *
 * What gdb's backtrace prints after "at": the line-table row covering a pc
 * (DWARF 5 section 6.2), and, for a function that code was inlined into,
 * the DW_AT_call_file and DW_AT_call_line of the inlined subroutine (section
 * 3.3.8.2).  Which of the two a frame gets is walker/source.c's business.
 */
#include "dwarf/dwarf_internal.h"

/* The unit DIE of the unit covering VADDR, under D's lock. */
static int
unit_die_at(struct sw_dinfo *d, sw_addr vaddr, Dwarf_Die *cudie)
{
    struct di_cu *cu;
    int rc = sw_di_find_cu(d, vaddr, &cu);
    if (rc < 0)
        return rc;
    return sw_di_die_at(d, cu->off, cudie) ? 0 : SW_ENOENT;
}

/* The unit's DW_AT_comp_dir, the directory its relative file names are in;
 * NULL when it has none. */
static const char *
comp_dir(struct sw_dinfo *d, Dwarf_Die *cudie)
{
    const char *dir = NULL;
    return sw_di_attr_string(d, cudie, DW_AT_comp_dir, &dir) ? dir : NULL;
}

int
sw_dinfo_line(struct sw_dinfo *d, sw_addr vaddr, const char **file, const char **dir,
              unsigned *line)
{
    Dwarf_Die cudie;
    int rc, ln = 0;

    if (d == NULL || d->dbg == NULL)
        return SW_ENOENT;
    sw_di_lock(d);
    rc = unit_die_at(d, vaddr, &cudie);
    if (rc == 0) {
        Dwarf_Line *l = dwarf_getsrc_die(&cudie, vaddr);
        const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
        if (f == NULL || dwarf_lineno(l, &ln) != 0 || ln <= 0) {
            (void)dwarf_errno(); /* no row: not an error of the file */
            rc = SW_ENOENT;
        } else {
            *file = f;
            *dir = comp_dir(d, &cudie);
            *line = (unsigned)ln;
        }
    }
    sw_di_unlock(d);
    return rc;
}

int
sw_dinfo_call_line(struct sw_dinfo *d, uint64_t die, const char **file, const char **dir,
                   unsigned *line)
{
    Dwarf_Die in, cudie;
    Dwarf_Word fidx, ln;
    Dwarf_Files *files;
    size_t nfiles;
    int rc = SW_ENOENT;

    if (d == NULL || d->dbg == NULL)
        return SW_ENOENT;
    sw_di_lock(d);
    if (sw_di_die_at(d, (Dwarf_Off)die, &in) && sw_di_attr_udata(d, &in, DW_AT_call_file, &fidx) &&
        sw_di_attr_udata(d, &in, DW_AT_call_line, &ln) && ln > 0 && ln <= UINT32_MAX &&
        dwarf_diecu(&in, &cudie, NULL, NULL) != NULL &&
        dwarf_getsrcfiles(&cudie, &files, &nfiles) == 0 && fidx < nfiles) {
        const char *f = dwarf_filesrc(files, fidx, NULL, NULL);
        if (f != NULL) {
            *file = f;
            *dir = comp_dir(d, &cudie);
            *line = (unsigned)ln;
            rc = 0;
        }
    }
    if (rc < 0)
        (void)dwarf_errno();
    sw_di_unlock(d);
    return rc;
}
