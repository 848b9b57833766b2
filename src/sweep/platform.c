#include "sweep/platform.h"

const char *platform_fail_name(enum platform_fail kind)
{
    switch (kind) {
    case PLATFORM_FAIL_NONE:
        return "failed";
    case PLATFORM_FAIL_APPLY:
        return "could not start";
    case PLATFORM_FAIL_DIED:
        return "died";
    case PLATFORM_FAIL_NEVER_READY:
        return "never ready";
    case PLATFORM_FAIL_OOM:
        return "OOM-killed";
    case PLATFORM_FAIL_UNSCHEDULABLE:
        return "unschedulable";
    case PLATFORM_FAIL_CANCELLED:
        return "cancelled";
    }
    return "failed";
}
