/* tests/unit/data/ppc64le_frames.S -- ppc64_frames.S built little-endian (ELFv2). */
#include "ppc64_frames.S"
