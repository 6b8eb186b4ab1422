#!/bin/bash
# firstrun.sh - a first run (empty DWARF cache) does not wait while the
# warmup thread decompresses DWARF or reads the kernel symbols: with one
# worker, samples whose frames need them are held, the samples after
# them too, and named once that work is done (cmd/run_held.c).  What
# comes out must not show it: on a capture of several threads, a shared
# library, libc and kernel frames, three first runs give the same bytes
# as the warm run after them (folded, Firefox and speedscope output: the
# order samples come in decides these tables), the same end reasons (a
# thread's first function, named late, still ends its stack), and -j2,
# which holds nothing, gives the same bytes too.  At least one of the
# first runs held samples (--stats-json samples_named_late), else this
# tested nothing.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
command -v python3 >/dev/null || skip_all "python3 is needed"
# the program's own DWARF compressed, as Debian's debug packages ship it
"$cc" -O2 -g -gz=zlib -fomit-frame-pointer -fPIC -shared \
	-o "$T/libwork.so" "$TESTDATA/src/libwork.c" -lm ||
	skip_all "cannot build libwork.so with compressed debug sections"
"$cc" -O2 -g -gz=zlib -fomit-frame-pointer -o "$T/threads" \
	"$TESTDATA/src/threads.c" -L"$T" -lwork -Wl,-rpath,"$T" -lpthread ||
	skip_all "cannot build threads"
# threads in libwork, and a process in libc and the kernel
record -e cpu-clock -F 2000 --call-graph dwarf,8192 -o "$T/fr.data" -- \
	sh -c "./threads 300 & dd if=/dev/zero of=/dev/null bs=512 \
	       count=400000 2>/dev/null; wait" >/dev/null ||
	skip_all "perf record failed"

# ends FILE: the end reasons of --stats-json FILE
ends() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["inputs"][0]
print(" ".join("%s=%d" % kv for kv in sorted(d["end_reasons"].items())))' "$1"
}
late() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["inputs"][0]["samples_named_late"])' "$1"
}

held=0
for i in 1 2 3; do
	for fmt in folded firefox.json speedscope.json; do
		restack_clean convert -j1 --dwarf-cache "$T/cache$i" \
			--stats-json "$T/first$i.$fmt.stats" "$T/fr.data" \
			-o "$T/first$i.$fmt" 2>"$T/err"
	done
	n=$(late "$T/first$i.folded.stats")
	held=$((held + n))
	for fmt in folded firefox.json speedscope.json; do
		restack_clean convert -j1 --dwarf-cache "$T/cache$i" \
			--stats-json "$T/warm$i.$fmt.stats" "$T/fr.data" \
			-o "$T/warm$i.$fmt" 2>"$T/err"
		same_file "$T/first$i.$fmt" "$T/warm$i.$fmt" \
			"first run $i ($n samples named late): $fmt output equals the warm run's"
	done
	is "$(ends "$T/first$i.folded.stats")" "$(ends "$T/warm$i.folded.stats")" \
		"first run $i: the warm run's end reasons"
done
[ "$held" -gt 0 ] && ok "the first runs held $held samples for their names" ||
	fail "the first runs held samples for their names" \
		"none held in three runs: the test above compared nothing new"

restack_clean convert -j2 --dwarf-cache "$T/cache_j2" "$T/fr.data" \
	-o "$T/j2.folded" 2>"$T/err"
same_file "$T/first1.folded" "$T/j2.folded" \
	"a first run with two workers (which hold nothing): the same bytes"
restack_clean convert -j1 --no-dwarf-cache "$T/fr.data" \
	-o "$T/nocache.folded" 2>"$T/err"
same_file "$T/first1.folded" "$T/nocache.folded" \
	"--no-dwarf-cache: the same bytes"

done_testing
