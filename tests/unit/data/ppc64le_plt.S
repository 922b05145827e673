/* tests/unit/data/ppc64le_plt.S -- ppc64_plt.S built little-endian (ELFv2). */
#include "ppc64_plt.S"
