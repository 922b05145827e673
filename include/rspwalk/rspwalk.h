/* rspwalk/rspwalk.h -- the whole public API.
 *
 * Threads: each header says which of its objects may be used from several
 * threads at once; the short form is a walker per target, each on one
 * thread at a time (docs/api.md, "Threads").
 */
#ifndef RSPWALK_RSPWALK_H
#define RSPWALK_RSPWALK_H

#include "rspwalk/types.h"
#include "rspwalk/errors.h"
#include "rspwalk/arch.h"
#include "rspwalk/proc.h"
#include "rspwalk/frame.h"
#include "rspwalk/stepper.h"
#include "rspwalk/libstate.h"
#include "rspwalk/symlookup.h"
#include "rspwalk/walker.h"
#include "rspwalk/locals.h"
#include "rspwalk/rsp.h"
#include "rspwalk/target.h"
#include "rspwalk/render.h"
#include "rspwalk/sampler.h"
#include "rspwalk/rtos.h"

#endif /* RSPWALK_RSPWALK_H */
