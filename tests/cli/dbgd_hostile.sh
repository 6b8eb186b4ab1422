#!/bin/bash
# dbgd_hostile.sh - debuginfod servers that answer badly: a 2 GiB body
# announced by its Content-Length, a body without a length that never
# ends, and an HTML page with status 200.  Each run must end quickly
# (<= 5 s) with exit 0, small (peak RSS <= 100 MiB), leave nothing in the
# client cache or $TMPDIR, and say in the module warning what happened:
# "too large", or what the answer was instead of an ELF file.
#
# The servers are a few lines of Python in a private network namespace
# (unshare -n, only lo up); the capture is testdata/perf/file-dwarf.data,
# whose program (/tmp/restack-testdata/prog) is not on this machine.
. "$(dirname "$0")/lib.sh"

if [ -z "${RESTACK_DBGD_NETNS:-}" ]; then
	command -v unshare >/dev/null || skip_all "unshare (util-linux) is needed"
	command -v ip >/dev/null || skip_all "ip (iproute2) is needed"
	command -v python3 >/dev/null || skip_all "python3 is needed"
	unshare -n true 2>/dev/null || skip_all "cannot make a network namespace (not root?)"
	rm -rf "$T"
	trap - EXIT
	RESTACK_DBGD_NETNS=1 exec unshare -n bash "$0" "$@"
fi
ip link set lo up || skip_all "cannot bring lo up in the namespace"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is needed for the peak RSS"

data=$TESTDATA/perf/file-dwarf.data
bid=cce7cbd43334a59d2e449e840d5d799e01a2c68c
[ -e /tmp/restack-testdata/prog ] && skip_all "/tmp/restack-testdata/prog exists here"

# One server per behaviour: 8002 big (Content-Length: 2 GiB, zeros sent
# as long as the client reads), 8003 nolen (the same without a length),
# 8004 html (a 200 answer holding an error page).
python3 - <<'PY' 2>"$T/srv.log" &
import http.server, socketserver, threading
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def log_message(self, *a): pass
    def do_GET(self):
        mode = self.server.mode
        if mode == "html":
            body = b"<!DOCTYPE html><html><body>Not here</body></html>\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        if mode == "big":
            self.send_header("Content-Length", str(2 << 30))
        self.end_headers()
        zeros = bytes(1 << 16)
        try:
            for _ in range((2 << 30) >> 16):
                self.wfile.write(zeros)
        except OSError:
            pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
for port, mode in ((8002, "big"), (8003, "nolen"), (8004, "html")):
    s = S(("127.0.0.1", port), H)
    s.mode = mode
    threading.Thread(target=s.serve_forever, daemon=True).start()
threading.Event().wait()
PY
srv=$!
trap 'kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; [ -n "${RESTACK_KEEP_TMP:-}" ] || rm -rf "$T"' EXIT
for i in $(seq 100); do
	python3 -c 'import socket
for p in (8002, 8003, 8004):
    socket.create_connection(("127.0.0.1", p), 0.2).close()' 2>/dev/null && break
	sleep 0.1
done

# hostile NAME PORT [OPTION...]: convert against the server on PORT with
# a fresh client cache and $TMPDIR; checks time, RSS and what is left.
hostile() {
	local name=$1 port=$2 start took rc rss left
	shift 2
	mkdir -p "$T/$name.tmp"
	start=$(date +%s%N)
	env -i PATH=/usr/bin:/bin HOME="$T/home" TMPDIR="$T/$name.tmp" \
		DEBUGINFOD_URLS="http://127.0.0.1:$port" \
		DEBUGINFOD_CACHE_PATH="$T/$name.cache" DEBUGINFOD_TIMEOUT=3 \
		timeout 60 /usr/bin/time -f 'rss %M' -o "$T/$name.time" \
		"$RESTACK" convert "$@" "$data" -o "$T/$name.folded" \
		2>"$T/$name.err"
	rc=$?
	took=$((($(date +%s%N) - start) / 1000000))
	is "$rc" 0 "$name: exit 0"
	check "$name: done in <= 5 s ($took ms)" test "$took" -le 5000
	rss=$(awk '/^rss/ { print $2 }' "$T/$name.time")
	check "$name: peak RSS <= 100 MiB (${rss:-?} KiB)" \
		test "${rss:-999999}" -le 102400
	left=$(du -sk "$T/$name.cache" 2>/dev/null | cut -f1)
	check "$name: client cache holds nothing of it (${left:-0} KiB)" \
		test "${left:-0}" -le 64
	check "$name: no file of it in the cache" \
		bash -c "! find '$T/$name.cache' -type f -path '*$bid*' | grep -q ."
	check "$name: nothing left in \$TMPDIR" \
		bash -c "[ -z \"\$(ls -A '$T/$name.tmp')\" ]"
	check "$name: the output is written" test -s "$T/$name.folded"
}

hostile big 8002
check "big: the module warning says too large" \
	grep -q "prog (build-id $bid) not found: debuginfod file too large (over 1024 MiB)" "$T/big.err"

hostile nolen 8003 --debuginfod-maxsize 8
check "nolen: cut off at the limit, too large" \
	grep -q "prog (build-id $bid) not found: debuginfod file too large (over 8 MiB)" "$T/nolen.err"

hostile html 8004
check "html: the warning says what the answer was" \
	grep -q "prog (build-id $bid) not found: debuginfod answered with something that is not an ELF file (it starts with '<!DOCTYP')" "$T/html.err"
check "html: no debuginfo lookup after a non-ELF executable" \
	grep -q "debuginfod: 1 lookups: " "$T/html.err"

# The limit from the environment, when no option gives one.
mkdir -p "$T/env.tmp"
env -i PATH=/usr/bin:/bin HOME="$T/home" TMPDIR="$T/env.tmp" \
	DEBUGINFOD_URLS="http://127.0.0.1:8003" DEBUGINFOD_MAXSIZE=2097152 \
	DEBUGINFOD_CACHE_PATH="$T/env.cache" DEBUGINFOD_TIMEOUT=3 \
	timeout 60 "$RESTACK" convert "$data" -o "$T/env.folded" 2>"$T/env.err"
check "\$DEBUGINFOD_MAXSIZE is the default limit" \
	grep -q "not found: debuginfod file too large (over 2 MiB)" "$T/env.err"

env -i PATH=/usr/bin:/bin "$RESTACK" convert --debuginfod-maxsize 0 \
	"$data" -o "$T/x.folded" 2>"$T/usage.err"
is "$?" 64 "--debuginfod-maxsize 0: usage error"

done_testing
