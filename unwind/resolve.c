/*
 * resolve.c - from events to resolved samples.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/resolve.h"

#include "common/base.h"
#include "common/mem.h"

int resolve_init(struct resolve *r, const struct resolve_opts *opts,
		 enum event_arch arch, struct err *err)
{
	struct modcache_opts mopts = { 0 };
	struct unwind_opts uopts = { 0 };

	memset(r, 0, sizeof(*r));
	if (opts)
		r->opts = *opts;
	r->arch = regs_arch_get(arch);
	mopts.buildid_dirs = r->opts.buildid_dirs;
	mopts.nr_buildid_dirs = r->opts.nr_buildid_dirs;
	mopts.use_live_vdso = r->opts.use_live_vdso;
	modcache_init(&r->mc, &mopts);
	aspace_init(&r->as, &r->mc);
	symbolizer_init(&r->sym, !r->opts.no_inline);
	uopts.max_frames = r->opts.max_frames;
	uopts.no_fp = r->opts.no_fp;
	if (unwinder_init(&r->uw, r->arch, &r->mc, &uopts) < 0)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "unwinder");
	if (r->opts.kallsyms && !r->opts.no_kernel &&
	    symbolizer_set_kallsyms(&r->sym, r->opts.kallsyms) < 0)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "kallsyms");
	return 0;
}

void resolve_release(struct resolve *r)
{
	unwinder_release(&r->uw);
	symbolizer_release(&r->sym);
	aspace_release(&r->as);
	modcache_release(&r->mc);
	free(r->frames);
	memset(r, 0, sizeof(*r));
}

static int resolve_push(struct resolve *r, uint32_t *nr, uint64_t pc,
			enum frame_origin origin, const struct sym_loc *loc)
{
	struct rframe *f;

	if (!loc)
		return -1;
	if (mem_grow(&r->frames, &r->alloc_frames, sizeof(*r->frames),
		     (size_t)*nr + 1) < 0)
		return -1;
	f = &r->frames[(*nr)++];
	f->pc = pc;
	f->origin = (uint8_t)origin;
	f->loc = loc;
	r->stats.frames[origin]++;
	return 0;
}

/*
 * Appends the recorded callchain's entries of one context (kernel or
 * user); returns the number appended or -1.
 */
static int resolve_callchain(struct resolve *r, const struct event_sample *s,
			     struct aspace_maps *maps, bool kernel,
			     uint32_t *nr)
{
	uint64_t ctx = 0, i;
	int n = 0;

	for (i = 0; i < s->callchain_nr; i++) {
		uint64_t ip = s->callchain[i], look;
		const struct sym_loc *loc;

		if (ip >= EVENT_CONTEXT_MAX) {
			ctx = ip;
			continue;
		}
		if (kernel ? ctx != EVENT_CONTEXT_KERNEL :
			     ctx != EVENT_CONTEXT_USER)
			continue;
		/* The first entry of a context is exact, the rest are
		 * return addresses. */
		look = n == 0 ? ip : ip - 1;
		if (kernel) {
			loc = symbolize_kernel(&r->sym, look);
		} else {
			const struct aspace_map *m = aspace_maps_find(maps,
								      look);
			uint64_t rel = 0;

			if (!m) {
				loc = symbolize_unmapped(&r->sym);
			} else {
				if (!module_load(&r->mc, m->mod) ||
				    !module_offset_to_vaddr(
					    m->mod, look - m->start + m->pgoff,
					    &rel))
					rel = look - m->start + m->pgoff;
				loc = symbolize_user(&r->sym, m->mod,
						     m->mod->path, rel);
			}
		}
		if (resolve_push(r, nr, ip, kernel ? FRAME_KERNEL :
						    n == 0 ? FRAME_SAMPLE :
							     FRAME_CALLCHAIN,
				 loc) < 0)
			return -1;
		n++;
	}
	return n;
}

/* Functions that are the outermost frame of a thread. */
static bool resolve_is_root(const struct sym_loc *loc)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "start_thread", "clone",
		"clone3", "__clone", "__clone3", "thread_start",
	};
	const char *name = loc && loc->nr ? loc->e[loc->nr - 1].name : NULL;
	size_t i;

	if (!name)
		return false;
	for (i = 0; i < ARRAY_SIZE(roots); i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

static int resolve_sample(struct resolve *r, const struct event *ev,
			  struct rsample *out)
{
	const struct event_sample *s = &ev->sample;
	struct aspace_thread *t;
	struct aspace_maps *maps;
	struct unwind_result ur;
	uint32_t nr = 0, i;
	int n;

	t = aspace_thread(&r->as, ev->pid, ev->tid);
	maps = aspace_proc_maps(&r->as, ev->pid);
	if (!t || !maps)
		return -1;
	memset(out, 0, sizeof(*out));
	out->pid = ev->pid;
	out->tid = ev->tid;
	out->comm = t->comm;
	out->time = ev->time;
	out->cpu = ev->cpu;
	out->period = s->period;
	out->attr = ev->attr ? ev->attr->index : 0;
	out->event = ev->attr && ev->attr->name ? ev->attr->name : "?";

	/* Kernel part: the recorded callchain, or the sampled ip. */
	if (!r->opts.no_kernel) {
		n = resolve_callchain(r, s, maps, true, &nr);
		if (n < 0)
			return -1;
		if (n == 0 && s->cpumode == EVENT_MODE_KERNEL &&
		    s->callchain_nr == 0 &&
		    resolve_push(r, &nr, s->ip, FRAME_KERNEL,
				 symbolize_kernel(&r->sym, s->ip)) < 0)
			return -1;
	}
	out->nr_kernel = nr;

	/* User part: unwind the stack copy, else the recorded chain. */
	if (s->regs_user_abi && s->regs_user_nr) {
		unwind_sample(&r->uw, maps, s, &ur);
		out->end = ur.end;
		if (s->stack_size && s->stack_dyn_size == s->stack_size)
			r->stats.truncated++;
		for (i = 0; i < ur.nr; i++) {
			const struct unwind_frame *f = &ur.frames[i];
			const struct sym_loc *loc;

			if (f->map_path)
				loc = symbolize_user(&r->sym, f->mod,
						     f->map_path, f->rel);
			else
				loc = symbolize_unmapped(&r->sym);
			if (f->mod && i == 0)
				f->mod->samples++;
			if (resolve_push(r, &nr, f->pc, f->origin, loc) < 0)
				return -1;
		}
		/* A walk that stops in a thread's first function is done. */
		if (out->end != END_ROOT && ur.nr &&
		    resolve_is_root(r->frames[nr - 1].loc))
			out->end = END_ROOT;
	} else {
		n = resolve_callchain(r, s, maps, false, &nr);
		if (n < 0)
			return -1;
		if (n > 0) {
			out->end = END_CALLCHAIN;
		} else if (s->cpumode == EVENT_MODE_USER) {
			const struct aspace_map *m = aspace_maps_find(maps,
								      s->ip);
			const struct sym_loc *loc;
			uint64_t rel = 0;

			if (m && module_load(&r->mc, m->mod) &&
			    module_offset_to_vaddr(m->mod,
						   s->ip - m->start + m->pgoff,
						   &rel))
				loc = symbolize_user(&r->sym, m->mod,
						     m->mod->path, rel);
			else if (m)
				loc = symbolize_user(&r->sym, m->mod,
						     m->mod->path,
						     s->ip - m->start +
							     m->pgoff);
			else
				loc = symbolize_unmapped(&r->sym);
			if (resolve_push(r, &nr, s->ip, FRAME_SAMPLE, loc) < 0)
				return -1;
			out->end = END_NO_USER;
		} else {
			out->end = END_NO_USER;
		}
	}
	if (nr == out->nr_kernel)
		r->stats.kernel_only++;
	out->nr_frames = nr;
	out->frames = r->frames;
	r->stats.samples++;
	r->stats.end[out->end]++;
	return 1;
}

int resolve_event(struct resolve *r, const struct event *ev,
		  struct rsample *out)
{
	if (ev->type == EVENT_SAMPLE)
		return resolve_sample(r, ev, out);
	if (ev->type == EVENT_BUILD_ID)
		return modcache_note_build_id(&r->mc, ev->build_id.filename,
					      ev->build_id.build_id,
					      ev->build_id.build_id_size);
	return aspace_event(&r->as, ev) < 0 ? -1 : 0;
}
