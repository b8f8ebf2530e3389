/*
 * rooflined/rooflined_plugin.h - the ABI header's former name, kept so that
 * plugins written against it (#include <rooflined/rooflined_plugin.h>) build
 * unchanged.  The ABI is <rooflined/plugin.h>; include that.
 */
#ifndef ROOFLINED_ROOFLINED_PLUGIN_H
#define ROOFLINED_ROOFLINED_PLUGIN_H

#include "plugin.h"

#endif
