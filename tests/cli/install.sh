#!/bin/bash
# install.sh - make install DESTDIR=... PREFIX=/usr puts restack, its man
# page and its bash completion in place (the already built $RESTACK:
# nothing is compiled), the completion completes commands, each command's
# options, the formats of --to and the --stitch modes, and make uninstall
# removes all three.
. "$(dirname "$0")/lib.sh"

command -v make >/dev/null 2>&1 || skip_all "make is not installed"
DEST=$T/dest
BIN=$DEST/usr/bin/restack
MAN1=$DEST/usr/share/man/man1/restack.1
COMP=$DEST/usr/share/bash-completion/completions/restack
PROG=$(cd "$(dirname "$RESTACK")" && pwd)/$(basename "$RESTACK")
CAPTURE=$TESTDATA/perf/z-dwarf.data

# make in the repository, without the flags of a make that runs the suite
# (make check's MAKEFLAGS carry its BUILD, CFLAGS and jobserver).
tmake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory \
		-C "$TOP" INSTALL_PROG="$PROG" "$@"
}

if ! tmake install DESTDIR="$DEST" PREFIX=/usr >"$T/install.out" 2>&1; then
	fail "make install DESTDIR=... PREFIX=/usr" \
		"$(tail -n 20 "$T/install.out")"
	done_testing
fi
ok "make install DESTDIR=... PREFIX=/usr"
check "make install compiles nothing" \
	bash -c "! grep -E '^ *(CC|LINK) ' '$T/install.out'"
check "the binary is usr/bin/restack, mode 755" \
	test "$(stat -c %a "$BIN" 2>&1)" = 755
is "$("$BIN" --version 2>&1)" "$("$RESTACK" --version)" \
	"the installed restack runs --version"
same_file "$MAN1" "$TOP/docs/restack.1" \
	"the man page is share/man/man1/restack.1"
same_file "$COMP" "$TOP/scripts/completion.bash" \
	"the completion is share/bash-completion/completions/restack"
check "the default PREFIX is /usr/local" \
	grep -q " $T/d2/usr/local/bin/restack\$" \
	<(tmake -n install DESTDIR="$T/d2" 2>&1)

is "$(bash -c ". '$COMP' && complete -p restack" 2>&1)" \
	"complete -F _restack restack" "sourcing the completion registers it"

# complete WORD...: what the installed completion offers for the command
# line WORD... (the last one the word being completed), one a line, with
# the installed restack first on PATH.
complete_words() {
	PATH=$DEST/usr/bin:$PATH bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_restack; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@" |
		sort
}

# The formats of --to: the names of convert.c's format table.
sed -n 's/^[[:space:]]*{ "\([a-z0-9]*\)", FMT_[A-Z0-9_]*,.*/\1/p' \
	"$TOP/cmd/convert.c" | sort >"$T/formats.want"
complete_words restack convert --to "" >"$T/formats.got"
if [ -s "$T/formats.want" ]; then
	name="($(tr '\n' ' ' <"$T/formats.got" | sed 's/ $//'))"
	same_file "$T/formats.got" "$T/formats.want" \
		"restack convert --to <TAB> offers the formats $name"
else
	fail "cmd/convert.c's format table is found"
fi
is "$(complete_words restack convert --to sp)" "speedscope" \
	"restack convert --to sp<TAB> offers speedscope"
bad=
for f in $(cat "$T/formats.got"); do
	"$RESTACK" convert -q --to "$f" "$CAPTURE" -o "$T/out.$f" \
		2>"$T/err" || bad="$bad $f($(head -n 1 "$T/err"))"
done
is "$bad" "" "restack converts to every format offered"

python3 "$TOP/tests/tools/manpage_check.py" "$RESTACK" --commands |
	sort >"$T/cmds.want"
printf '%s\n' --help --version >>"$T/cmds.want"
sort -o "$T/cmds.want" "$T/cmds.want"
complete_words restack "" >"$T/cmds.got"
same_file "$T/cmds.got" "$T/cmds.want" "restack <TAB> offers the commands"

python3 "$TOP/tests/tools/manpage_check.py" "$RESTACK" --options \
	>"$T/opts.want"
for c in $(cat "$T/cmds.got"); do
	case $c in -*) continue ;; esac
	awk -v c="$c" '$1 == c { print $2 }' "$T/opts.want" | sort >"$T/o.want"
	complete_words restack "$c" - | sed 's/=$//' | sort >"$T/o.got"
	name="restack $c -<TAB> offers its --help's options"
	same_file "$T/o.got" "$T/o.want" "$name ($(wc -l <"$T/o.want"))"
done

is "$(complete_words restack convert --stitch = "" | tr '\n' ' ')" \
	"off on strict " "restack convert --stitch=<TAB> offers the modes"
is "$(complete_words restack stats --stitch=st)" "--stitch=strict" \
	"one word --stitch=st<TAB> (no '=' in COMP_WORDBREAKS)"
bad=
for m in $(complete_words restack convert --stitch = ""); do
	"$RESTACK" convert -q --stitch="$m" "$CAPTURE" -o "$T/s.folded" \
		2>"$T/err" || bad="$bad $m($(head -n 1 "$T/err"))"
done
is "$bad" "" "restack accepts every --stitch mode offered"
mkdir -p "$T/wd/sub d" && : >"$T/wd/file.data"
is "$(cd "$T/wd" && complete_words restack convert --outdir "")" "sub d" \
	"--outdir <TAB> offers directories (one, with a space)"
is "$(cd "$T/wd" && complete_words restack convert "" | tr '\n' '|')" \
	"file.data|sub d|" "an input completes as a file"

if tmake uninstall DESTDIR="$DEST" PREFIX=/usr >"$T/uninstall.out" 2>&1; then
	is "$(cd "$DEST" && find . ! -type d)" "" \
		"make uninstall removes the three files"
else
	fail "make uninstall DESTDIR=... PREFIX=/usr" \
		"$(tail -n 20 "$T/uninstall.out")"
fi
done_testing
