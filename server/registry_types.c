/* server/registry_types.c -- the names of the registry's states.
 *
 * The rest of server/registry_types.h is types alone.
 */
#include "server/registry_types.h"

const char *
srv_state_name(enum srv_state s)
{
    switch (s) {
    case SRV_CONNECTING:
        return "connecting";
    case SRV_STOPPED:
        return "stopped";
    case SRV_RUNNING:
        return "running";
    case SRV_EXITED:
        return "exited";
    case SRV_LINK_LOST:
        return "link-lost";
    }
    return "unknown";
}
