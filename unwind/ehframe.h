/*
 * ehframe.h - a sanity pass over .eh_frame bytes before libdw sees them:
 * every register number in the CFA instructions must be small.  libdw
 * sizes its register table by the largest number it meets, so one crafted
 * instruction could make it allocate gigabytes.  Unwinding info from a
 * jitdump is checked strictly (every entry must parse); a module's
 * .eh_frame leniently (an entry with opcodes or augmentations this pass
 * does not know is left to libdw, which refuses what it cannot read).
 */
#ifndef RESTACK_UNWIND_EHFRAME_H
#define RESTACK_UNWIND_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EHFRAME_MAX_REG 255  /* above any architecture's DWARF registers */

/*
 * True when the len bytes of .eh_frame data (host byte order) are a
 * sequence of CIEs and FDEs whose instructions name no register above
 * max_reg.  strict: also every entry parses, with opcodes and
 * augmentations DWARF 5, GNU and the psABIs define.
 */
bool ehframe_check(const uint8_t *data, size_t len, unsigned max_reg,
		   bool strict);

#endif
