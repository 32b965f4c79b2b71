/* `rayboot install DIR`: puts rayboot and rayboot-sidecar into DIR, for an initContainer that
 * hands them to a stock Ray image through a shared emptyDir. */
#ifndef RAYBOOT_INIT_INSTALL_H
#define RAYBOOT_INIT_INSTALL_H

/* Returns the exit code (0, or EXIT_CANT_CREATE with a message naming DIR). */
int install_main(const char *dir);

#endif
