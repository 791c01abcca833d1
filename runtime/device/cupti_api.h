// Cupti::Api: the entry points of cupti_api.def as members with the CUPTI
// headers' types. Included by the files that call CUPTI (they need its
// headers anyway); cupti_library.h keeps the headers out of its includers.
#pragma once

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "runtime/device/cupti_library.h"

namespace tessera::device {

struct Cupti::Api {
#define CUPTI_FN(name) decltype(&::name) name = nullptr;
#define CUPTI_FN_OPT(name) CUPTI_FN(name)
#include "runtime/device/cupti_api.def"
#undef CUPTI_FN_OPT
#undef CUPTI_FN
};

}  // namespace tessera::device
