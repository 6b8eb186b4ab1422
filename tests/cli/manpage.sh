#!/bin/bash
# manpage.sh - docs/restack.1 documents every option each command's --help
# prints, with the same short form and argument name, and no option --help
# does not print (tests/tools/manpage_check.py; a new option needs only
# its .TP paragraph under the right "Options of ..." subsection); and
# man renders it without a warning.
. "$(dirname "$0")/lib.sh"

MAN=$TOP/docs/restack.1
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

python3 "$TOP/tests/tools/manpage_check.py" "$RESTACK" "$MAN" || lib_failed=1

if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man --warnings -l "$MAN" >"$T/man.txt" 2>"$T/man.err"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$T/man.err" ]; then
		fail "man renders docs/restack.1 without warnings" \
			"exit status $rc" "$(head -n 20 "$T/man.err")"
	else
		ok "man renders docs/restack.1 without warnings"
	fi
	sections='NAME|SYNOPSIS|DESCRIPTION|COMMANDS|OPTIONS|EXIT STATUS'
	sections="$sections|ENVIRONMENT|FILES|EXAMPLES|SEE ALSO"
	check "the rendered page has every section" \
		awk -v re="^($sections)\$" '$0 ~ re { n++ } END { exit n != 10 }' \
		"$T/man.txt"
else
	skip "man renders docs/restack.1 without warnings" \
		"man is not installed (man-db)"
fi
done_testing
