/* Ray processes this container can see (only with shareProcessNamespace). */
#ifndef RAYBOOT_SIDECAR_RAYPIDS_H
#define RAYBOOT_SIDECAR_RAYPIDS_H

int raypids_count(void);

#endif
