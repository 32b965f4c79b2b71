/* RELRO that holds at run time: the program's PT_GNU_RELRO pages (.init_array, .fini_array,
 * .data.rel.ro, .got) made read-only once start-up has relocated them. */
#ifndef RAYBOOT_RELRO_H
#define RAYBOOT_RELRO_H

#include "errbuf.h"

/* Call first thing in main. Returns 0 (also when the pages were already read-only, as under a
 * dynamic loader), or -1 with a message (no RELRO segment, or mprotect failed). */
int relro_protect(struct errbuf *err);

#endif
