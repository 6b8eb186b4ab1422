#!/bin/bash
# sysprof-record.sh OUT.syscap COMMAND [ARG...] - records COMMAND with
# sysprof-cli (3.46) into OUT.syscap, as root, without touching the
# machine's D-Bus: in a private PID namespace with its own /proc (so the
# capture holds only the namespace's processes; the others appear as pid
# 0), a private system bus (dbus-daemon on a socket in a temporary
# directory), polkitd and sysprofd started on it, and sysprof-cli under
# env -i with only PATH, HOME (a temporary directory), LANG and the bus
# address.  Everything started ends with the namespace.  Exit status 77
# when something needed is missing or sysprof cannot record here.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OUT.syscap COMMAND [ARG...]" >&2; exit 64; }
out=$1
shift
for f in /usr/bin/sysprof-cli /usr/libexec/sysprofd /usr/bin/dbus-daemon \
	/usr/lib/polkit-1/polkitd /usr/bin/unshare; do
	[ -x "$f" ] || { echo "sysprof-record: $f is missing" >&2; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "sysprof-record: needs root" >&2; exit 77; }
tmp=$(mktemp -d /tmp/sysprof-record.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # polkitd runs as its own user
mkdir -p "$tmp/home"
cat >"$tmp/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$tmp/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
# The command line for the namespace's shell, quoted.
cmd=$(printf '%q ' "$@")
unshare --pid --fork --mount-proc env -i PATH=/usr/bin:/bin \
	REC_DEBUG="${REC_DEBUG:-}" \
	TMPDIR_REC="$tmp" OUT="$out" CMD="$cmd" bash -c '
	addr=unix:path=$TMPDIR_REC/bus
	dbus-daemon --config-file="$TMPDIR_REC/bus.conf" --nofork \
		>"$TMPDIR_REC/dbus.log" 2>&1 &
	for i in $(seq 50); do [ -S "$TMPDIR_REC/bus" ] && break; sleep 0.1; done
	DBUS_SYSTEM_BUS_ADDRESS=$addr /usr/lib/polkit-1/polkitd \
		>"$TMPDIR_REC/polkit.log" 2>&1 &
	DBUS_SYSTEM_BUS_ADDRESS=$addr /usr/libexec/sysprofd \
		>"$TMPDIR_REC/sysprofd.log" 2>&1 &
	# Wait until both services own their names.
	for i in $(seq 100); do
		n=0
		for name in org.freedesktop.PolicyKit1 org.gnome.Sysprof3; do
			DBUS_SYSTEM_BUS_ADDRESS=$addr dbus-send --system \
				--print-reply --dest=org.freedesktop.DBus / \
				org.freedesktop.DBus.NameHasOwner string:$name \
				2>/dev/null | grep -q true && n=$((n + 1))
		done
		[ $n = 2 ] && break
		sleep 0.1
	done
	env -i PATH=/usr/bin:/bin HOME="$TMPDIR_REC/home" LANG=C.UTF-8 \
		DBUS_SYSTEM_BUS_ADDRESS=$addr \
		timeout -s INT 60 sysprof-cli --no-battery --no-disk \
		--no-network --no-memory --force -c "$CMD" "$OUT" \
		>"$TMPDIR_REC/cli.log" 2>&1
	rc=$?
	cat "$TMPDIR_REC/cli.log" >&2
	[ -n "${REC_DEBUG:-}" ] && tail "$TMPDIR_REC"/*.log >&2
	exit $rc'
rc=$?
if grep -q "Failure\|failed to" "$tmp"/*.log 2>/dev/null || [ ! -s "$out" ]; then
	echo "sysprof-record: sysprof-cli did not record (exit $rc)" >&2
	exit 77
fi
exit 0
