// firefox_fold.js - folded lines from the Firefox Profiler's view of a
// profile, and from the profile's own tables, for tests/cli/firefox.sh.
//
//   node firefox_fold.js tree TOPDOWN.json PREFIX
//     TOPDOWN.json is `profiler-cli thread samples-top-down --json` of one
//     thread: prints "PREFIX;root;...;node SELF" for every call node with
//     self samples (the profiler's call tree, which merges by function).
//     Fails when the tree was cut (--max-lines) or its totals do not add
//     up.
//   node firefox_fold.js profile PROFILE[.gz]
//     reads restack's processed profile directly: prints one line per
//     sample, "pid/tid;root;...;leaf WEIGHT", frames suffixed as folded
//     --annotate does from their category (_[k] Kernel, _[j] JIT, _[s]
//     Stitched).  Fails when a "[truncated: ...]" frame is not in the
//     Truncated category (or another frame is), a frame of inline depth
//     d > 0 does not follow one of depth d - 1 at the same address, a
//     prefixOffset does not point back, or an index is out of range.
//     On stderr: threads, total weight, libs, frames per category and
//     inlined (depth > 0).
'use strict';
const fs = require('fs');
const zlib = require('zlib');

const die = (m) => { console.error(`firefox_fold: ${m}`); process.exit(1); };
const [mode, file, prefix] = process.argv.slice(2);

function tree() {
	const d = JSON.parse(fs.readFileSync(file, 'utf8'));
	const out = [];
	const walk = (n, path) => {
		if (n.childrenTruncated) die(`${path.join(';')}: children cut`);
		let sum = n.selfSamples;
		for (const c of n.children || [])
			sum += walk(c, [...path, c.name]);
		if (Math.abs(sum - n.totalSamples) > 1e-6)
			die(`${path.join(';')}: total ${n.totalSamples}, self and children ${sum}`);
		if (n.selfSamples)
			out.push(`${path.join(';')} ${n.selfSamples}`);
		return n.totalSamples;
	};
	walk(d.regularCallTree, [prefix]);
	process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
}

function profile() {
	let bytes = fs.readFileSync(file);
	if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = zlib.gunzipSync(bytes);
	const p = JSON.parse(bytes.toString('utf8'));
	const sh = p.shared, st = sh.stackTable, fr = sh.frameTable;
	const cats = p.meta.categories.map((c) => c.name);
	const truncated = cats.indexOf('Truncated');
	const names = fr.func.map((f) => sh.stringArray[sh.funcTable.name[f]]);
	const suffix = fr.category.map((c) =>
		cats[c] === 'Kernel' ? '_[k]' : cats[c] === 'JIT' ? '_[j]' :
		cats[c] === 'Stitched' ? '_[s]' : '');
	for (let i = 0; i < fr.length; i++) {
		if (names[i] === undefined) die(`frame ${i}: no function name`);
		if (names[i].startsWith('[truncated: ') !== (fr.category[i] === truncated))
			die(`frame ${i} '${names[i]}' is in category ${cats[fr.category[i]]}`);
		if (fr.lib[i] >= p.libs.length) die(`frame ${i}: lib out of range`);
	}
	const paths = [];
	for (let i = 0; i < st.length; i++) {
		const off = st.prefixOffset[i];
		if (off < 0 || off > i) die(`stack ${i}: prefixOffset ${off}`);
		if (st.frame[i] >= fr.length) die(`stack ${i}: frame out of range`);
		const f = st.frame[i];
		const d = fr.inlineDepth[f];
		if (d > 0) {
			const pf = off ? st.frame[i - off] : -1;
			if (pf < 0 || fr.inlineDepth[pf] !== d - 1 ||
			    fr.address[pf] !== fr.address[f] || fr.lib[pf] !== fr.lib[f])
				die(`stack ${i}: inlined frame ${f} not below its caller`);
		}
		const here = names[f] + suffix[f];
		paths.push(off ? `${paths[i - off]};${here}` : here);
	}
	const perCat = {};
	fr.category.forEach((c) => { perCat[cats[c]] = (perCat[cats[c]] || 0) + 1; });
	const inlined = Array.from(fr.inlineDepth).filter((d) => d > 0).length;
	const out = [];
	let total = 0;
	for (const t of p.threads) {
		const s = t.samples;
		for (let i = 0; i < s.length; i++) {
			const w = s.weight ? s.weight[i] : 1;
			const k = s.stack[i];
			if (k !== null && k >= st.length) die(`sample ${i}: stack out of range`);
			if (i && s.time[i] < s.time[i - 1]) die(`${t.tid}: time goes back`);
			out.push(`${t.pid}/${t.tid}${k === null ? '' : ';' + paths[k]} ${w}`);
			total += w;
		}
	}
	process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
	console.error(`threads ${p.threads.length} weight ${total} libs ${p.libs.length} frames ${JSON.stringify(perCat)} inlined ${inlined}`);
}

if (mode === 'tree') tree();
else if (mode === 'profile') profile();
else die('usage: firefox_fold.js tree TOPDOWN.json PREFIX | profile FILE');
