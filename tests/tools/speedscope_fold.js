// speedscope_fold.js - reads what speedscope exported after importing a
// profile (its own re-serialisation of the model it built: one evented
// profile per imported profile) and prints the stacks as folded lines,
// "comm;root;...;leaf WEIGHT", one per stretch of weight between events.
//
//   node speedscope_fold.js EXPORT.base64
//
// The comm is the profile name ("comm pid/tid") without its last word,
// spaces as '_'.  On stderr: the number of profiles, their units and the
// total weight.  Fails when events do not nest or a total differs from
// the profile's endValue.
'use strict';
const fs = require('fs');

const file = process.argv[2];
const d = JSON.parse(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64').toString('utf8'));
const die = (m) => { console.error(`speedscope_fold: ${m}`); process.exit(1); };
const frames = d.shared.frames;
const out = [];
let total = 0;
const units = new Set();
for (const p of d.profiles) {
	if (p.type !== 'evented') die(`profile ${p.name} is ${p.type}`);
	units.add(p.unit);
	const comm = p.name.slice(0, p.name.lastIndexOf(' ')).replace(/ /g, '_');
	const stack = [];
	let at = p.startValue, sum = 0;
	for (const ev of p.events) {
		if (ev.at < at) die(`${p.name}: events go back in time`);
		if (ev.at > at && stack.length) {
			out.push(`${comm};${stack.map((i) => frames[i].name).join(';')} ${ev.at - at}`);
			sum += ev.at - at;
		}
		at = ev.at;
		if (ev.type === 'O') stack.push(ev.frame);
		else if (stack.pop() !== ev.frame) die(`${p.name}: close of a frame not open`);
	}
	if (stack.length) die(`${p.name}: frames left open`);
	if (sum !== p.endValue - p.startValue)
		die(`${p.name}: weights add up to ${sum}, endValue says ${p.endValue - p.startValue}`);
	total += sum;
}
process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
console.error(`profiles ${d.profiles.length} units ${[...units].join(',')} total ${total}`);
