/* A caller's deadline handed down to the calls it makes: a request carries what is left of it
 * (its budget), and each call cuts its own timeout to that, so the last attempt before a
 * deadline ends with it instead of running its full timeout past it. */
#ifndef RAYBOOT_DEADLINE_H
#define RAYBOOT_DEADLINE_H

/* What is left of deadline_ms at now_ms, at least 1: a budget of 0 means "none". */
long deadline_left_ms(long deadline_ms, long now_ms);

/* timeout_ms, or budget_ms when that is shorter; budget_ms <= 0 cuts nothing. */
long deadline_cap_ms(long timeout_ms, long budget_ms);

#endif
