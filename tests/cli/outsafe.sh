#!/bin/bash
# outsafe.sh - -o never replaces what it should write to or must keep: a
# character device or FIFO is written where it is (a FIFO's reader gets
# the profile), a symbolic link stays a link and its target gets the
# profile, the temporary's name cannot be guessed (a link planted at the
# old NAME.tmp.PID is not followed), and an output that is an input (same
# device and inode: the name itself, another path, a hard link, a symbolic
# link, --outdir, --stats-json, -o - appended to it) is exit 64 with the
# input left byte for byte.  As root and, with setpriv, as nobody.
. "$(dirname "$0")/lib.sh"

in=$TESTDATA/perf/file-dwarf.data
rs() { "$RESTACK" convert --offline "$@" 2>>"$T/err"; }
rs "$in" --to folded -o "$T/ref.folded" || fail "reference conversion"

# no_tmp NAME DIR: nothing named *.tmp* was left in DIR
no_tmp() {
	local left
	left=$(find "$2" -name '*.tmp*' | head -n 3)
	is "$left" "" "$1: no temporary left"
}

# --- character devices -----------------------------------------------
if [ "$(id -u)" = 0 ] && mknod "$T/null" c 1 3 && mknod "$T/full" c 1 7
then
	rs "$in" --to folded -o "$T/null"
	is "$?" 0 "char device: exit 0"
	check "char device: still a character device" test -c "$T/null"
	rs "$in" --to folded -o "$T/full"
	is "$?" 2 "char device /dev/full: a write error is exit 2"
	check "char device /dev/full: still a character device" \
		test -c "$T/full"
	no_tmp "char devices" "$T"
	# the real /dev/null only once a private one survived
	if [ -c "$T/null" ]; then
		rs "$in" -o /dev/null
		is "$?" 0 "/dev/null: exit 0"
		if [ -c /dev/null ]; then
			ok "/dev/null: still a character device"
		else
			fail "/dev/null: still a character device" \
				"$(ls -l /dev/null; rm -f /dev/null.tmp.*)"
			rm -f /dev/null && mknod -m 666 /dev/null c 1 3
		fi
	fi
else
	skip "char device" "mknod needs root"
fi

# a name without an extension is folded, whatever the directories' names
mkdir "$T/dir.ext"
rs "$in" -o "$T/dir.ext/plain"
is "$?" 0 "no extension, a dot in a directory's name: exit 0"
same_file "$T/ref.folded" "$T/dir.ext/plain" "no extension, a dot in a directory's name: folded"

# --- FIFOs: the reader gets the profile ---------------------------------
mkfifo "$T/fifo"
timeout 60 cat "$T/fifo" >"$T/fifo.got" &
reader=$!
timeout 60 "$RESTACK" convert --offline "$in" --to folded -o "$T/fifo" \
	2>>"$T/err"
is "$?" 0 "FIFO: exit 0"
wait $reader
is "$?" 0 "FIFO: the reader got an end of file"
same_file "$T/ref.folded" "$T/fifo.got" "FIFO: the reader got the profile"
check "FIFO: still a FIFO" test -p "$T/fifo"
# perf.data into a FIFO is pipe mode (no seeking back to the header)
timeout 60 cat "$T/fifo" >"$T/fifo.data" &
reader=$!
timeout 60 "$RESTACK" convert --offline "$in" --to perf -o "$T/fifo" \
	2>>"$T/err"
is "$?" 0 "FIFO, --to perf: exit 0"
wait $reader
rs "$in" --to perf -o - >"$T/pipe.data"
same_file "$T/pipe.data" "$T/fifo.data" \
	"FIFO, --to perf: the pipe-mode perf.data of -o -"
no_tmp "FIFOs" "$T"

# --- symbolic links: followed, the link stays ---------------------------
mkdir "$T/l" "$T/l/sub"
echo old >"$T/l/target.folded"
ln -s target.folded "$T/l/link.folded"
rs "$in" -o "$T/l/link.folded"
is "$?" 0 "symlink: exit 0"
check "symlink: still a symlink" test -L "$T/l/link.folded"
same_file "$T/ref.folded" "$T/l/target.folded" "symlink: the target has the profile"
ln -s sub/../new.folded "$T/l/dangling.folded"
rs "$in" -o "$T/l/dangling.folded"
check "dangling symlink: still a symlink" test -L "$T/l/dangling.folded"
same_file "$T/ref.folded" "$T/l/new.folded" "dangling symlink: its target is created"
# a link to /proc/self/fd/1 (as /dev/stdout is): written through, on a pipe
ln -s /proc/self/fd/1 "$T/l/stdout"
rs "$in" --to folded -o "$T/l/stdout" | cat >"$T/l/stdout.got"
is "${PIPESTATUS[0]}" 0 "link to /proc/self/fd/1: exit 0"
same_file "$T/ref.folded" "$T/l/stdout.got" "link to /proc/self/fd/1: the pipe got the profile"
check "link to /proc/self/fd/1: still a symlink" test -L "$T/l/stdout"
no_tmp "symlinks" "$T/l"

# --- --stats-json is an output like -o: replaced whole, links followed --
mkdir "$T/s"
echo old >"$T/s/stats.json"
ln "$T/s/stats.json" "$T/s/other-name.json"
ln -s stats.json "$T/s/link.json"
rs "$in" --stats-json "$T/s/link.json" -o "$T/s/o.folded"
is "$?" 0 "--stats-json through a symlink: exit 0"
check "--stats-json: the symlink stays" test -L "$T/s/link.json"
check "--stats-json: the target has the statistics" \
	grep -q '"inputs_total":1' "$T/s/stats.json"
is "$(cat "$T/s/other-name.json")" old \
	"--stats-json: replaced, not rewritten in place (a hard link keeps the old file)"
no_tmp "--stats-json" "$T/s"

# --- a replaced file keeps its permissions; a new one is 0644 less umask
mkdir "$T/m"
echo old >"$T/m/private.folded"
chmod 600 "$T/m/private.folded"
rs "$in" -o "$T/m/private.folded"
is "$(stat -c %a "$T/m/private.folded")" 600 "a replaced file keeps its mode"
(umask 027 && rs "$in" -o "$T/m/new.folded")
is "$(stat -c %a "$T/m/new.folded")" 640 "a new file: 0644 less the umask"

# --- the temporary's name cannot be guessed -----------------------------
# restack keeps the shell's pid through exec: a link planted at the old
# OUT.tmp.PID name must not be followed (it would overwrite the victim)
mkdir "$T/g"
echo victim >"$T/g/victim"
bash -c 'ln -s victim "$1.tmp.$$" && exec "$RESTACK" convert --offline \
	"$2" -o "$1"' sh "$T/g/out.folded" "$in" 2>>"$T/err"
is "$?" 0 "planted temporary name: exit 0"
is "$(cat "$T/g/victim")" victim "planted temporary name: the link's target is untouched"
same_file "$T/ref.folded" "$T/g/out.folded" "planted temporary name: the output is complete"

# --- the output is an input: exit 64, the input kept ---------------------
mkdir "$T/x" "$T/y"
cp "$in" "$T/x/in.data"
ln "$T/x/in.data" "$T/x/hard.data"
ln -s in.data "$T/x/soft.data"
cp "$in" "$T/y/p"
cp "$in" "$T/x/p.folded"

# same NAME CMD...: exit 64 naming the input, the inputs unchanged
same() {
	local name=$1 rc
	shift
	"$@" 2>"$T/same.err" >>"$T/same.out"
	rc=$?
	is "$rc" 64 "$name: exit 64"
	check "$name: the message says so" grep -q "is the input" "$T/same.err"
	same_file "$in" "$T/x/in.data" "$name: the input is unchanged"
	same_file "$in" "$T/x/p.folded" "$name: the other input is unchanged"
}
same "-o the input" "$RESTACK" convert --offline --to perf \
	"$T/x/in.data" -o "$T/x/in.data"
same "-o ./../x/input" bash -c 'cd "$1" && exec "$RESTACK" convert \
	--offline --to perf in.data -o ./../x/in.data' sh "$T/x"
same "-o a hard link to the input" "$RESTACK" convert --offline \
	"$T/x/in.data" -o "$T/x/hard.data"
same "-o a symlink to the input" "$RESTACK" convert --offline \
	"$T/x/in.data" -o "$T/x/soft.data"
same "--outdir the input's directory" "$RESTACK" convert --offline \
	--to perf --outdir "$T/x" "$T/x/in.data"
same "--outdir: one input's output is another input" "$RESTACK" convert \
	--offline --outdir "$T/x" "$T/y/p" "$T/x/p.folded"
same "--stats-json the input" "$RESTACK" convert --offline \
	--stats-json "$T/x/in.data" "$T/x/in.data" -o "$T/o.folded"
same "stats --stats-json the input" "$RESTACK" stats --offline \
	--stats-json "$T/x/in.data" "$T/x/in.data"
same "-o - appended to the input" bash -c 'exec "$RESTACK" convert \
	--offline "$1" -o - >>"$1"' sh "$T/x/in.data"
check "nothing converted into the inputs' directory" \
	test ! -e "$T/x/in.folded" -a ! -e "$T/x/p.folded.folded"
no_tmp "same file" "$T/x"

# --- as nobody ----------------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null
then
	nobody() {
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	}
	mkdir "$T/n"
	cp "$in" "$T/n/in.data"
	mkfifo "$T/n/fifo"
	chmod 755 "$T"
	chown -R 65534:65534 "$T/n"
	nobody "$RESTACK" convert --offline "$in" -o /dev/null 2>>"$T/err"
	is "$?" 0 "nobody, -o /dev/null: exit 0"
	check "nobody, -o /dev/null: still a character device" test -c /dev/null
	nobody timeout 60 cat "$T/n/fifo" >"$T/n.got" &
	reader=$!
	nobody timeout 60 "$RESTACK" convert --offline "$in" --to folded \
		-o "$T/n/fifo" 2>>"$T/err"
	is "$?" 0 "nobody, FIFO: exit 0"
	wait $reader
	same_file "$T/ref.folded" "$T/n.got" "nobody, FIFO: the reader got the profile"
	nobody "$RESTACK" convert --offline --to perf "$T/n/in.data" \
		-o "$T/n/in.data" 2>"$T/n.err"
	is "$?" 64 "nobody, -o the input: exit 64"
	same_file "$in" "$T/n/in.data" "nobody, -o the input: the input is unchanged"
	no_tmp "nobody" "$T/n"
else
	skip "as nobody" "needs root and setpriv"
fi

done_testing
