/*
 * textesc.c - XML and JSON escaping with UTF-8 repair (see textesc.h).
 */
#include <stdbool.h>
#include <stdint.h>

#include "formats/textesc.h"

#define TEXTESC_REPLACEMENT "\xef\xbf\xbd"   /* U+FFFD */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static size_t textesc_utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)   /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void textesc(struct strbuf *sb, const char *text, bool json)
{
	const unsigned char *s = (const unsigned char *)text;

	while (*s) {
		size_t n = textesc_utf8_len(s);

		if (n == 0 || (*s < 0x20 && !json)) {
			strbuf_addstr(sb, TEXTESC_REPLACEMENT);
			s += n ? n : 1;
			continue;
		}
		if (n > 1) {
			strbuf_add(sb, s, n);
			s += n;
			continue;
		}
		if (json && (*s == '"' || *s == '\\')) {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, (char)*s);
		} else if (json && *s < 0x20)
			strbuf_addf(sb, "\\u%04x", *s);
		else if (!json && *s == '&')
			strbuf_addstr(sb, "&amp;");
		else if (!json && *s == '<')
			strbuf_addstr(sb, "&lt;");
		else if (!json && *s == '>')
			strbuf_addstr(sb, "&gt;");
		else if (!json && *s == '"')
			strbuf_addstr(sb, "&quot;");
		else
			strbuf_addch(sb, (char)*s);
		s++;
	}
}

void textesc_xml(struct strbuf *sb, const char *s)
{
	textesc(sb, s, false);
}

void textesc_json(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	textesc(sb, s, true);
	strbuf_addch(sb, '"');
}
