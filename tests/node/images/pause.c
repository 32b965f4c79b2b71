/* The node's sandbox ("pause") image: holds a pod's namespaces and does nothing else. There is
 * no registry to pull Kubernetes' own pause image from, so this is the smallest program that
 * behaves like it: PID 1 of the sandbox, it sleeps until SIGTERM or SIGINT, and reaps nothing
 * because nothing else runs in its PID namespace. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void request_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

int main(void)
{
    struct sigaction sa = {.sa_handler = request_stop};
    sigemptyset(&sa.sa_mask);
    /* PID 1 gets no default action for these, so without handlers the pod could not stop. */
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return 1;
    while (!stop_requested)
        pause();
    return 0;
}
