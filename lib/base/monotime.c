/* CLOCK_MONOTONIC in milliseconds: never jumps with the wall clock (NTP, a pod's clock set
 * back), which would cut a wait short or stretch it. Wall-clock times (the GCS's drain deadline,
 * log stamps) are their callers' own. */
#include "monotime.h"

#include <time.h>

long monotime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}
