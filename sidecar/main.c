/* rayboot-sidecar's entry point. Its drain, probes and HTTP server come with later changes; today
 * it answers --help and --version. */
#include <stdio.h>
#include <string.h>

#include "exitcode.h"
#include "log.h"
#include "version.h"

static const char usage_text[] =
    "Usage: rayboot-sidecar [--help | --version]\n"
    "\n"
    "A second container beside a Ray container: drains the pod's Ray node on eviction and answers\n"
    "probes. Not functional yet in this version.\n";

int main(int argc, char **argv)
{
    log_init("rayboot-sidecar", LOG_FORMAT_TEXT);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0) {
            version_print(stdout, "rayboot-sidecar");
            return EXIT_OK;
        }
        log_error("unknown option %s (see rayboot-sidecar --help)", argv[i]);
        return EXIT_CONFIG;
    }
    log_error("the sidecar's drain and probes are not built yet in this version");
    return EXIT_CONFIG;
}
