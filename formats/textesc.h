/*
 * textesc.h - escaping text for the XML (SVG) and JSON writers.
 *
 * Frame names come from ELF and DWARF strings and may hold any bytes:
 * invalid UTF-8 and control characters (which XML 1.0 does not allow)
 * become U+FFFD, so the output always parses.
 */
#ifndef RESTACK_FORMATS_TEXTESC_H
#define RESTACK_FORMATS_TEXTESC_H

#include <stddef.h>

#include "common/strbuf.h"

/* Appends s with &, <, >, " escaped as XML entities. */
void textesc_xml(struct strbuf *sb, const char *s);
/* Appends s as a JSON string, quotes included. */
void textesc_json(struct strbuf *sb, const char *s);

#endif
