/* Budgets from deadlines; see deadline.h. */
#include "deadline.h"

long deadline_left_ms(long deadline_ms, long now_ms)
{
    long left = deadline_ms - now_ms;
    return left > 1 ? left : 1;
}

long deadline_cap_ms(long timeout_ms, long budget_ms)
{
    return budget_ms > 0 && budget_ms < timeout_ms ? budget_ms : timeout_ms;
}
