// st_jsrec.js - stitching ground truth (tests/cli/stitch_truth.sh): one
// recursive JS function entered from three functions, each recursing to
// a random depth around 40, 150 or 300 and spinning at the bottom, for
// about SECONDS seconds of CPU time (first argument, default 1.5).  Run
// under node --perf-basic-prof.
'use strict';

let seed = 31337;
function rand(n) {
	seed = (seed * 1103515245 + 12345) % 2147483648;
	return seed % n;
}

function spin(n) {
	let x = n;
	for (let i = 0; i < 20000; i++)
		x = (x * 1664525 + 1013904223) % 4294967296;
	return x;
}

function rec(depth, target) {
	const r = depth >= target ? spin(depth) : rec(depth + 1, target);
	return r + depth;	// no tail call
}

function entryShallow() { return rec(1, 30 + rand(20)) + 1; }
function entryMiddle(a, b, c) { return rec(1, 140 + rand(20)) + 2; }
function entryDeep(a, b, c, d, e) { return rec(1, 290 + rand(20)) + 3; }

const secs = Number(process.argv[2] || 1.5);
const start = process.cpuUsage();
let sink = 0;
for (;;) {
	const u = process.cpuUsage(start);
	if ((u.user + u.system) / 1e6 >= secs)
		break;
	for (let i = 0; i < 30; i++) {
		switch (rand(3)) {
		case 0: sink += entryShallow(); break;
		case 1: sink += entryMiddle(1, 2, 3); break;
		default: sink += entryDeep(1, 2, 3, 4, 5); break;
		}
	}
}
console.log(sink);
