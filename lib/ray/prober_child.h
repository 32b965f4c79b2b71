/* The prober's child side (prober_child.c), for prober.c's fork only. */
#ifndef RAYBOOT_PROBER_CHILD_H
#define RAYBOOT_PROBER_CHILD_H

/* The child: sheds what it inherited but fd (its socket to the parent), sets up, confines itself,
 * then answers until the parent goes. Never returns: exits 0 when the parent is gone, 1 when
 * set-up failed (after sending why). */
_Noreturn void prober_child_main(int fd, const char *root);

#endif
