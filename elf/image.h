/* elf/image.h -- ELF images read by hand, without libelf (elf/image.c).
 *
 * Bytes that are not (yet) a whole opened file: a prefix of an image in
 * target memory, a file's first page read from the target.  Pure functions
 * of the bytes; no cache, no files.
 */
#ifndef RSPWALK_ELF_IMAGE_H
#define RSPWALK_ELF_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "rspwalk/types.h"

/* A GNU build-id is 20 bytes (SHA-1) by default, 16 with --build-id=md5 and
 * uuid; 64 bytes covers --build-id=0xHEX of any length gcc users write. */
#define SW_ELF_MAX_BUILD_ID 64

/* How many bytes of an ELF image held in memory (the vDSO in the target)
 * make up the image, from its first LEN bytes at HEAD: read the ELF header,
 * then the program headers, then the rest.  Returns 0 with *NEED set; when
 * *NEED > LEN, call again with the first *NEED bytes, else *NEED is the
 * image's size (headers, PT_LOAD file contents, section headers).  Returns
 * SW_EBADELF (no ELF magic, unknown class or byte order, bad program header
 * size, no PT_LOAD, sizes that overflow) with the message in ERR naming NAME. */
int sw_elf_image_size(const void *head, size_t len, const char *name, size_t *need,
                      struct sw_errbuf *err);

/* The build-id note in the first LEN bytes of an ELF image at IMAGE (a
 * file's first page, or a whole file; elf/image.c): *ID (borrowed from IMAGE)
 * and *ID_LEN, 0 when the image has none.  When the program headers or a
 * note lie past LEN, *NEED (may be NULL) gets how many bytes would settle it
 * (> LEN), else LEN.  Returns 0 or SW_EBADELF (no ELF magic, unknown class or
 * byte order). */
int sw_elf_image_build_id(const uint8_t *image, size_t len, const uint8_t **id, size_t *id_len,
                          size_t *need);

/* The build-id note of the ELF image IMAGE[0, LEN) as the loader maps it:
 * *VADDR, the note's link-time address (its PT_NOTE's p_vaddr plus its
 * offset there), and *NOTE (borrowed from IMAGE), its *NOTE_LEN bytes as in
 * the file: header, "GNU", descriptor.  Target memory at VADDR plus the load
 * bias holds the same bytes when the target runs this very file.  Returns 0,
 * SW_ENOENT (no build-id note within LEN) or SW_EBADELF. */
int sw_elf_image_build_id_note(const uint8_t *image, size_t len, sw_addr *vaddr,
                               const uint8_t **note, size_t *note_len);

#endif /* RSPWALK_ELF_IMAGE_H */
