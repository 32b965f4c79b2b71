/* What a forked helper sheds before it confines itself: descriptors it did not open, and the
 * environment. For the prober (prober_child.c), which parses DNS and HTTP/2 from the network and could
 * send whatever it holds to anywhere its seccomp filter lets it connect, and for the smaller
 * confined children (the rendezvous, the worker's watch). */
#ifndef RAYBOOT_SCRUB_H
#define RAYBOOT_SCRUB_H

/* Points 0, 1 and 2 at /dev/null (left as they are if it cannot be opened) and closes every other
 * descriptor but keep_fd. Returns the descriptor keep_fd is now (moved above 2 if it was one of
 * them), or -1 if that move failed. */
int scrub_fds(int keep_fd);

/* Closes every descriptor above 2 but keep_a and keep_b (-1: none); 0, 1 and 2 stay as they are.
 * close_range(2) where the kernel has it, else what /proc/self/fd lists: no fixed bound. For the
 * rendezvous' child and the worker's watch (rendezvous.c, rdvwatch.c). */
void scrub_fds_but(int keep_a, int keep_b);

/* Overwrites the environment's bytes with zeros (the block the kernel shows as /proc/PID/environ,
 * and every string environ points to) and empties environ. Read what you need first. Relies on
 * no caller having putenv'ed a string in read-only memory (rayboot never changes its own
 * environment: the children's envp is built apart, env.c). */
void scrub_environment(void);

#endif
