/*
 * ehhdr.h - which function (FDE) an address belongs to, from the binary
 * search table in a module's .eh_frame_hdr.  Works on stripped files,
 * where symbols cannot say it.
 */
#ifndef RESTACK_UNWIND_EHHDR_H
#define RESTACK_UNWIND_EHHDR_H

#include <stdbool.h>
#include <stdint.h>

struct module;

/*
 * The start of the FDE covering module address rel (the largest initial
 * location not above it) in *start.  False when the module's runtime file
 * has no usable .eh_frame_hdr table or rel lies before its first entry.
 * The module must be loaded.
 */
bool ehhdr_function_start(struct module *m, uint64_t rel, uint64_t *start);

/*
 * Whether no FDE begins in (min(a, b), max(a, b)]: two addresses no FDE
 * covers are then in the same stretch of code without CFI.  False when
 * the table is unusable.  The module must be loaded.
 */
bool ehhdr_same_gap(struct module *m, uint64_t a, uint64_t b);

#endif
