#!/bin/bash
# arm64_fixtures.sh - regenerate testdata/arm64/: real arm64 captures,
# recorded by perf itself on arm64 Debian running under emulation.
#
#   tests/tools/arm64_fixtures.sh [WORKDIR]     (root; default /tmp/restack-arm64)
#
# Not run by make check (the debootstrap takes about 25 minutes on two
# cores, the rest a minute or two).  Needs debootstrap, qemu-user-static
# registered with binfmt_misc (for the second stage and for compiling in
# the rootfs: mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc;
# cat /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register),
# qemu-system-arm, e2fsprogs (mkfs.ext4 -d, debugfs), python3 and xz.
# Steps:
#
#   1. debootstrap --arch=arm64 a minbase bookworm rootfs with perf, gcc,
#      xz, python3 and Debian's arm64 kernel (skipped when WORKDIR/rootfs
#      is already there);
#   2. compile testdata/src's programs in it (through qemu-user): prog.c
#      with frame pointers, threads.c + libwork.c and deep.c without,
#      plt.c, clock.c (samples in the vdso); with
#      -mbranch-protection=standard, so that their return addresses are
#      signed with pointer authentication (PAC), and prog and threads
#      also without (-nopac), which perf 6.1 unwinds fully;
#   3. boot it with qemu-system-aarch64 -M virt -cpu max,sve=off (PAC on;
#      SVE off: perf 6.1's --call-graph dwarf fails with EOPNOTSUPP with
#      it) and an init script that records each workload with
#      perf record -e cpu-clock --call-graph dwarf --buildid-all (not -z:
#      perf then writes no build-ids) and writes perf script's output next
#      to it (the oracle), then powers off;
#   4. read the results back with debugfs and write testdata/arm64/: the
#      captures and oracles xz-compressed, and the build-id cache as a
#      small perf-archive-shaped tarball (arm64_shrink.py).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
W=${1:-/tmp/restack-arm64}
OUT=$TOP/testdata/arm64
GUEST=/tmp/restack-arm64            # the guest's working directory
NAMES="prog prog-nopac threads threads-nopac deep plt clock xz python3"
start=$(date +%s)

mkdir -p "$W"
if [ ! -x "$W/rootfs/usr/bin/perf" ]; then
	rm -rf "$W/rootfs"
	debootstrap --arch=arm64 --variant=minbase \
		--include=linux-perf,gcc,libc6-dev,xz-utils,python3-minimal,linux-image-arm64,initramfs-tools,kmod \
		bookworm "$W/rootfs" http://deb.debian.org/debian
fi
R=$W/rootfs

# 2. the programs, compiled in the rootfs
rm -rf "${R:?}$GUEST"
mkdir -p "$R$GUEST/src" "$R$GUEST/home"
cp "$TOP"/testdata/src/{prog.c,threads.c,libwork.c,deep.c,plt.c,clock.c} \
	"$R$GUEST/src/"
cat >"$R$GUEST/build.sh" <<'EOF'
set -e
cd /tmp/restack-arm64
for pac in standard none; do
	x=; [ $pac = none ] && x=-nopac
	o="-O2 -g -mbranch-protection=$pac"
	gcc $o -fno-omit-frame-pointer -o prog$x src/prog.c
	gcc $o -fomit-frame-pointer -fPIC -shared -o libwork$x.so \
		src/libwork.c -lm
	gcc $o -fomit-frame-pointer -o threads$x src/threads.c \
		-L. -lwork$x -Wl,-rpath,/tmp/restack-arm64 -lpthread
done
gcc -O2 -g -mbranch-protection=standard -fomit-frame-pointer -o deep \
	src/deep.c
gcc -O1 -g -mbranch-protection=standard -fno-builtin -o plt src/plt.c
gcc -O2 -g -mbranch-protection=standard -o clock src/clock.c
head -c 400000 /usr/lib/aarch64-linux-gnu/libc.so.6 >xzin
EOF
chroot "$R" /bin/sh "$GUEST/build.sh"

# 3. the guest's init: record, perf script, power off
cat >"$R/restack-init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp/restack-arm64/home
cd /tmp/restack-arm64
export PATH=/usr/bin:/bin:/usr/sbin:/sbin
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/proc/sys/kernel/kptr_restrict
rec() {
	name=$1
	shift
	env -i PATH=/usr/bin:/bin HOME=/tmp/restack-arm64/home \
		perf record -q -e cpu-clock -F 250 --call-graph dwarf --buildid-all \
		-o $name.data "$@" >/dev/null 2>>log
	env -i PATH=/usr/bin:/bin HOME=/tmp/restack-arm64/home \
		perf script -i $name.data >$name.perf 2>>log
}
{ uname -a; perf version; grep -m1 Features /proc/cpuinfo; } >log
rec prog -- ./prog 3000
rec prog-nopac -- ./prog-nopac 3000
rec threads -- ./threads 1500 8
rec threads-nopac -- ./threads-nopac 1500 8
rec deep -- ./deep 6000
rec plt -- ./plt 2000000
rec clock -- ./clock 3000000
rec xz -- xz -6 -T1 -c xzin
rec python3 -- python3 -c 'import json
d = [{"k": i, "v": str(i) * 3} for i in range(10000)]
for _ in range(3): json.loads(json.dumps(d))'
cp -a home/.debug cache
cat /proc/kallsyms >kallsyms
ls -la >>log
sync
echo o >/proc/sysrq-trigger
sleep 10
EOF
chmod +x "$R/restack-init"

# the kernel and initramfs, and a disk image of the rootfs
kernel=$(ls "$R"/boot/vmlinuz-*-arm64 | tail -1)
initrd=$(ls "$R"/boot/initrd.img-*-arm64 | tail -1)
rm -f "$W/disk.img"
mkfs.ext4 -q -F -d "$R" "$W/disk.img" 3G
qemu_t0=$(date +%s)
timeout 3600 qemu-system-aarch64 -M virt -cpu max,sve=off,pauth-impdef=on \
	-smp 2 -m 2048 -nographic -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "root=/dev/vda rw console=ttyAMA0 init=/restack-init quiet" \
	-drive file="$W/disk.img",format=raw,if=virtio </dev/null \
	>"$W/console.log" 2>&1 || true
echo "guest ran $(( $(date +%s) - qemu_t0 )) s"

# 4. read back
rm -rf "$W/out"
debugfs -R "rdump $GUEST $W" "$W/disk.img" 2>/dev/null
mv "$W/restack-arm64" "$W/out"
cat "$W/out/log"
rm -rf "$OUT"; mkdir -p "$OUT"
for f in $NAMES; do
	xz -9 -c "$W/out/$f.data" >"$OUT/$f.data.xz"
	xz -9 -c "$W/out/$f.perf" >"$OUT/$f.perf.xz"
done
python3 "$TOP/tests/tools/arm64_shrink.py" "$W/out" "$OUT"
echo "done in $(( $(date +%s) - start )) s"
