// pprof_fold.js - decodes a .pb.gz profile with the npm package
// pprof-format (an independent profile.proto decoder) and prints its
// stacks as folded lines, "thread;root;...;leaf VALUE", one per sample
// (unsorted, not merged), for comparison with restack's folded output.
//
//   NODE_PATH=DIR/node_modules node pprof_fold.js FILE.pb.gz VALUE-INDEX
//
// It also checks the profile's consistency and fails (exit 1) with a
// message when an id or string index points nowhere, a location lies
// outside its mapping, or a sample has the wrong number of values.
// Frame names get stackcollapse-perf.pl's tidying, reimplemented here:
// text from '(' dropped (except "(anonymous namespace)" and Go methods),
// quotes removed, ';' -> ':'; a location without lines is named
// "[kernel]" for the kernel, "[module basename]" or "[unknown]".
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

const [file, which] = process.argv.slice(2);
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
const strs = p.stringTable.strings;
const die = (m) => { console.error(`pprof_fold: ${file}: ${m}`); process.exit(1); };
const str = (i) => {
	i = Number(i);
	if (!(i >= 0 && i < strs.length)) die(`string index ${i} out of range`);
	return strs[i];
};
if (strs[0] !== '') die('string_table[0] is not ""');

const byId = (arr, what) => {
	const m = new Map();
	for (const x of arr) {
		const id = Number(x.id);
		if (id === 0 || m.has(id)) die(`${what} id ${id} is 0 or repeated`);
		m.set(id, x);
	}
	return m;
};
const maps = byId(p.mapping, 'mapping');
const funcs = byId(p.function, 'function');
const locs = byId(p.location, 'location');

function tidy(name) {
	let end = name.length;
	if (!/\.\(.*\)\./.test(name)) {
		for (let i = name.indexOf('('); i >= 0; i = name.indexOf('(', i + 1)) {
			if (!name.startsWith('(anonymous namespace)', i)) { end = i; break; }
		}
	}
	return name.slice(0, end).replace(/["']/g, '').replace(/;/g, ':');
}

// Names of a location, outermost (caller) first.
const locNames = new Map();
for (const [id, l] of locs) {
	const m = Number(l.mappingId) ? maps.get(Number(l.mappingId)) : null;
	if (Number(l.mappingId) && !m) die(`location ${id}: no mapping ${l.mappingId}`);
	if (m && (BigInt(l.address) < BigInt(m.memoryStart) ||
		  BigInt(l.address) >= BigInt(m.memoryLimit)))
		die(`location ${id}: address outside mapping ${m.id}`);
	let names;
	if (l.line.length === 0) {
		if (!m) names = ['[unknown]'];
		else {
			const f = str(m.filename);
			names = [f === '[kernel.kallsyms]' ? '[kernel]' :
				 '[' + tidy(f.slice(f.lastIndexOf('/') + 1)) + ']'];
		}
	} else {
		names = l.line.map((ln) => {
			const f = funcs.get(Number(ln.functionId));
			if (!f) die(`location ${id}: no function ${ln.functionId}`);
			return tidy(str(f.name));
		}).reverse();
	}
	locNames.set(id, names.join(';'));
}

const nvals = p.sampleType.length;
const out = [];
for (const s of p.sample) {
	if (s.value.length !== nvals) die(`sample with ${s.value.length} values for ${nvals} types`);
	let thread = null;
	for (const lb of s.label) if (str(lb.key) === 'thread') thread = str(lb.str);
	if (thread === null) die('sample without a thread label');
	const frames = s.locationId.map((id) => {
		const n = locNames.get(Number(id));
		if (n === undefined) die(`sample refers to location ${id}`);
		return n;
	}).reverse();
	out.push(`${thread.replace(/ /g, '_')};${frames.join(';')} ${s.value[Number(which)]}`);
}
process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
console.error(`types ${p.sampleType.map((t) => str(t.type) + '/' + str(t.unit)).join(',')} ` +
	`default ${str(p.defaultSampleType)} samples ${p.sample.length} ` +
	`locations ${locs.size} functions ${funcs.size} mappings ${maps.size}`);
