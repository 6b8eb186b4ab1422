#!/bin/sh
# deps.sh - make sure the Debian packages restack builds and tests with are
# installed.  As root it installs what is missing with apt-get; otherwise it
# prints the apt-get line and fails.
#
#   scripts/deps.sh build   # compiler, make, pkg-config, the -dev libraries
#   scripts/deps.sh test    # build + perf, clang (fuzzing), python3, node,
#                           # sqlite3 (test workloads); debuginfod,
#                           # util-linux (unshare), iproute2 (ip), curl and
#                           # bzip2 (perf archive) for tests/cli/locate.sh;
#                           # chromium and npm (checking pprof, speedscope
#                           # and SVG output); libsysprof-4-dev (sysprof
#                           # output validator), sysprof + dbus (sysprof-cli
#                           # recordings); man-db (the man page check);
#                           # golang-go (go tool pprof checks pprof),
#                           # default-jdk-headless (java.sh), rustc
#                           # (tests/cli/rust.sh), parallel (the fleet
#                           # recipe of tests/cli/merge.sh), xz-utils and
#                           # zip (tests/cli/arm64.sh, apk.sh)
#   scripts/deps.sh bench   # test + hotspot (its perfparser, a peer)
set -u
what=${1:-build}

pkgs="gcc make pkg-config libdw-dev libelf-dev libzstd-dev zlib1g-dev libdebuginfod-dev libarchive-dev libtraceevent-dev libiberty-dev libdeflate-dev"
test_pkgs="linux-perf clang python3 binutils time nodejs sqlite3 debuginfod util-linux iproute2 curl bzip2 chromium libsysprof-4-dev sysprof dbus man-db golang-go default-jdk-headless parallel xz-utils zip"
# a rustc on the PATH (rustup's) will do for tests/cli/rust.sh
command -v rustc >/dev/null 2>&1 || test_pkgs="$test_pkgs rustc"
# npm installs the output checkers (pprof-format, speedscope,
# @firefox-devtools/profiler-cli); some nodejs builds bundle it, and
# Debian's npm package conflicts there.
command -v npm >/dev/null 2>&1 || test_pkgs="$test_pkgs npm"
case $what in
build) ;;
test) pkgs="$pkgs $test_pkgs" ;;
bench) pkgs="$pkgs $test_pkgs hotspot" ;;
*) echo "deps.sh: unknown set '$what' (build, test or bench)" >&2; exit 64 ;;
esac

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "restack needs these Debian packages; as root run:" >&2
	echo "  apt-get install -y$missing" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q $missing >/tmp/restack-apt.log 2>&1; then
	apt-get update -q >/dev/null 2>&1 || true
	if ! apt-get install -y -q $missing >/tmp/restack-apt.log 2>&1; then
		tail -n 20 /tmp/restack-apt.log >&2
		echo "deps.sh: apt-get install failed (log: /tmp/restack-apt.log)" >&2
		exit 1
	fi
fi
