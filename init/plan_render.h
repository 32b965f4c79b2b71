/* The plan as `rayboot plan` prints it: one JSON object (a stable interface) or a text summary
 * for bug reports. */
#ifndef RAYBOOT_PLAN_RENDER_H
#define RAYBOOT_PLAN_RENDER_H

#include "plan.h"

/* Returns a malloc'd NUL-terminated string (JSON ends without a newline), or NULL when out of
 * memory. */
char *plan_render_json(const struct plan *p);
char *plan_render_text(const struct plan *p);

#endif
