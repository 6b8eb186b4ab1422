/*
 * profin.c - profile inputs for the commands (see profin.h).
 */
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/profin.h"

int profin_option(struct profin_opts *o, bool from, const char *arg,
		  const char *cmd, const char *const *usage)
{
	if (!from) {
		o->sample_type = arg;
		return 0;
	}
	if (strcmp(arg, "capture") && profile_kind_named(arg) == PROFILE_NONE) {
		cmd_usage_error(usage, "%s: --from is folded, pprof, chrome or "
				"capture, not '%s'", cmd, arg);
		return -1;
	}
	o->from = arg;
	return 0;
}

enum profile_kind profin_kind(const struct profin_opts *o, const char *path)
{
	if (o->from)
		return profile_kind_named(o->from);
	return profile_sniff(path);
}

int profin_read(const struct profin_opts *o, enum profile_kind kind,
		const char *path, bool quiet, run_sample_fn fn, void *ctx)
{
	struct profile_opts po = { .kind = kind,
				   .sample_type = o->sample_type,
				   .all_types = o->all_types };
	const struct profile_info *info;
	const struct rsample *s;
	struct profile *p;
	struct err err;
	int rc;

	p = profile_open(path, &po, &err);
	if (!p) {
		cmd_report_err(path, &err);
		return -1;
	}
	if (o->on_info && o->on_info(ctx, path, profile_info(p)) < 0) {
		profile_close(p);
		return -1;
	}
	while ((rc = profile_next(p, &s)) > 0) {
		if (fn(ctx, s) < 0) {
			cmd_error("%s: out of memory", path);
			rc = -1;
			break;
		}
	}
	if (rc < 0 && profile_err(p)->code != ERR_OK)
		cmd_report_err(path, profile_err(p));
	info = profile_info(p);
	if (rc == 0 && !quiet && info->scale > 1)
		cmd_error("note: %s: decimal weights multiplied by %llu",
			  path, (unsigned long long)info->scale);
	if (rc == 0 && !quiet && info->skipped)
		cmd_error("note: %s: %llu samples of negative weight left out",
			  path, (unsigned long long)info->skipped);
	profile_close(p);
	return rc < 0 ? -1 : 0;
}

int profin_load(const struct profin_opts *o, const struct run_opts *ro,
		const char *path, run_sample_fn fn, void *ctx,
		const struct run_sinks *sinks)
{
	enum profile_kind kind = profin_kind(o, path);
	struct run_opts r = *ro;
	struct run run;
	int rc;

	if (kind != PROFILE_NONE)
		return profin_read(o, kind, path, ro->quiet, fn, ctx);
	r.sinks = sinks;
	rc = run_capture(&run, &r, path, 0, fn, ctx);
	run_free(&run);
	return rc;
}
