# flip.sh - patch bytes of the fixtures at chosen offsets (tests/corrupt/
# cases) and check that restack info fails with exit 2 and one line
# "restack: FILE+0xOFF: ..." naming the expected offset and cause.
. "$(dirname "$0")/../cli/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
CORRUPT=$TOP/tests/corrupt

# expect_error FILE OFFSET FRAGMENT LABEL: restack info FILE exits 2 with
# exactly one stderr line naming FILE+OFFSET and containing FRAGMENT.
expect_error() {
	local f=$1 off=$2 frag=$3 label=$4 rc want line
	"$RESTACK" info "$f" >/dev/null 2>"$T/err"
	rc=$?
	want=$(printf 'restack: %s+0x%x: ' "$f" "$off")
	line=$(head -n 1 "$T/err")
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	   [ "${line#"$want"}" != "$line" ] &&
	   [ "${line#*"$frag"}" != "$line" ]; then
		ok "$label"
	else
		fail "$label" "exit $rc, want 2" "want: $want...$frag..." \
			"got:  $(cat "$T/err")"
	fi
}

load_offsets() { # fixture -> variables in the environment
	local src=$1
	[ "$src" = be-dwarf.data ] && src=file-dwarf.data
	eval "$(python3 "$CORRUPT/offsets.py" "$TESTDATA/perf/$src")"
}

while read -r fixture where patch erroff frag; do
	case $fixture in '#'* | '') continue ;; esac
	load_offsets "$fixture"
	w=$((where))
	e=$((erroff))
	cp "$TESTDATA/perf/$fixture" "$T/x.data"
	python3 "$CORRUPT/patch.py" "$T/x.data" "$w" "${patch%%:*}" "${patch#*:}" ||
		{ fail "$fixture: patch $patch at $where"; continue; }
	expect_error "$T/x.data" "$e" "$frag" \
		"$fixture: $patch at $where ($(printf '0x%x' "$w")) fails at $erroff: $frag"
done <"$CORRUPT/cases"

done_testing
