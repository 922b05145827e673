/* walker/stepper_group.h -- the StepperGroup's storage, for the walker. */
#ifndef RSPWALK_WALKER_STEPPER_GROUP_H
#define RSPWALK_WALKER_STEPPER_GROUP_H

#include "rspwalk/stepper.h"

struct sw_group_entry {
    struct sw_stepper *stepper; /* borrowed: the walker owns steppers */
    sw_addr start, end;
    unsigned long seq;
};

struct sw_stepper_group {
    struct sw_group_entry *entries; /* owned: sorted by priority, then seq */
    size_t n, cap;
    unsigned long seq;
};

int sw_stepper_group_init(struct sw_stepper_group *g);
void sw_stepper_group_fini(struct sw_stepper_group *g);

#endif /* RSPWALK_WALKER_STEPPER_GROUP_H */
