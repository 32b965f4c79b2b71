/* The plan: which role this pod plays, where the head is, and the exact `ray start` argv. A pure
 * function of the environment, the pod's files (under RAYBOOT_ROOT) and the plugin flags; both
 * programs use it, so the sidecar finds the GCS by the same rules as rayboot. */
#ifndef RAYBOOT_PLAN_H
#define RAYBOOT_PLAN_H

#include "errbuf.h"
#include "plandata.h"
#include "pluginargs.h"

/* Volcano's defaults, then RAYBOOT_PLUGIN_ARGS from envp; the caller applies command-line flags
 * on top (they win). The message names RAYBOOT_PLUGIN_ARGS and the flag. */
int plan_plugin_args(const char *const *envp, struct plugin_args *pa, struct errbuf *err);

/* Builds the plan (plandata.h has its types). Returns 0, or -1 with a message naming the
 * variable, flag or file at fault (a configuration error: rayboot exits 2). plan_free is needed
 * either way. */
int plan_build(const struct plan_input *in, struct plan *out, struct errbuf *err);
/* rayboot's own check of the command after --, which the sidecar cannot make (it does not know
 * the Ray container's command): a submitter needs one, a worker outside an Indexed Job must have
 * none. Both `rayboot plan` and the run call it, so they refuse the same pods. Returns 0, or -1
 * with the message (a configuration error). */
int plan_check_command(const struct plan *p, struct errbuf *err);

#endif
