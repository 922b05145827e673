/* rspwalk/rspwalk.h -- the whole public API. */
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

#endif /* RSPWALK_RSPWALK_H */
