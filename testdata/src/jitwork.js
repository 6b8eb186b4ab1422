// jitwork.js - a CPU-bound node workload for restack's JIT tests: recursion,
// sorting with a JS comparator and string building, for about SECONDS
// seconds of CPU time (first argument, default 4), so that a busy machine
// gives as many samples as an idle one.
'use strict';

function fib(n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function sortMany(n) {
	const a = [];
	for (let j = 0; j < n; j++)
		a.push((j * 7919) % 1000);
	a.sort((x, y) => x - y);
	return a.length;
}

function buildString(n) {
	let s = '';
	for (let j = 0; j < n; j++)
		s += String.fromCharCode(97 + (j % 26));
	return s.length;
}

function cpuSeconds(since) {
	const u = process.cpuUsage(since);
	return (u.user + u.system) / 1e6;
}

function work(seconds) {
	const start = process.cpuUsage();
	let s = 0;
	while (cpuSeconds(start) < seconds) {
		s += fib(22);
		s += sortMany(20000);
		s += buildString(5000);
	}
	return s;
}

// The result goes out through fs.writeSync, not console.log: node's first
// console call compiles the console machinery with stacks deeper than the
// 8 KiB copy, 10-40 ms of samples no unwinder can root.
require('fs').writeSync(1, (work(Number(process.argv[2] || 4)) > 0 ?
			    'done' : 'none') + '\n');
