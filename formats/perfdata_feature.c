/*
 * perfdata_feature.c - decode perf.data feature sections (HEADER_*), the
 * same payloads that pipe mode carries in HEADER_FEATURE records.
 *
 * Layouts follow the write_* functions of tools/perf/util/header.c.  Strings
 * are u32 len + len bytes (NUL-terminated, padded); a string list is u32 nr
 * + nr strings.  Features we do not decode are skipped by size.
 */
#include <string.h>

#include "formats/perfdata_internal.h"

#include "common/mem.h"

enum event_arch pd_arch_from_name(const char *name)
{
	if (!name)
		return EVENT_ARCH_UNKNOWN;
	if (strcmp(name, "x86_64") == 0)
		return EVENT_ARCH_X86_64;
	if (strcmp(name, "aarch64") == 0 || strcmp(name, "arm64") == 0)
		return EVENT_ARCH_AARCH64;
	if (strcmp(name, "i386") == 0 || strcmp(name, "i686") == 0)
		return EVENT_ARCH_I386;
	return EVENT_ARCH_UNKNOWN;
}

/* Reads a perf_header_string into new memory; NULL on error. */
static char *pd_feat_string(struct perfdata_reader *r, struct cur *c,
			    const char *feat)
{
	uint64_t off = cur_off(c);
	uint32_t len = cur_u32(c);
	const uint8_t *p;
	const uint8_t *nul;
	char *s;

	p = cur_bytes(c, len);
	if (!p) {
		err_set(&r->err, ERR_CORRUPT, off,
			"%s feature: string of %u bytes exceeds the section",
			feat, len);
		return NULL;
	}
	nul = memchr(p, '\0', len);
	s = malloc(nul ? (size_t)(nul - p) + 1 : (size_t)len + 1);
	if (!s) {
		err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "%s feature", feat);
		return NULL;
	}
	len = nul ? (uint32_t)(nul - p) : len;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static int pd_set_string(struct perfdata_reader *r, struct cur *c,
			 char **dst, const char *feat)
{
	char *s = pd_feat_string(r, c, feat);

	if (!s)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

int pd_build_id_add(struct perfdata_reader *r, int32_t pid, uint8_t cpumode,
		    const uint8_t *bid, uint8_t size, const char *filename,
		    bool from_mmap)
{
	struct perfdata_info *in = &r->info;
	struct perfdata_build_id *b;
	uint64_t key;
	void *v;

	if (size > 20)
		size = 20;
	/* One entry per (build-id, name), found through a hash of both. */
	key = hashmap_fnv_str(hashmap_fnv(HASHMAP_FNV_SEED, bid, size),
			      filename);
	while (hashmap_get(&r->bid_index, key, &v)) {
		b = &in->build_ids[(uintptr_t)v - 1];
		if (b->size == size && !memcmp(b->build_id, bid, size) &&
		    !strcmp(b->filename, filename))
			return 0;
		key++;  /* a collision: probe the next key */
	}
	if (mem_grow(&in->build_ids, &r->bid_alloc, sizeof(*in->build_ids),
		     in->nr_build_ids + 1) < 0 ||
	    hashmap_put(&r->bid_index, key,
			(void *)(uintptr_t)(in->nr_build_ids + 1)) < 0)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "build-ids");
	b = &in->build_ids[in->nr_build_ids];
	memset(b, 0, sizeof(*b));
	b->filename = mem_strdup(filename);
	if (!b->filename)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "build-ids");
	b->pid = pid;
	b->cpumode = cpumode;
	memcpy(b->build_id, bid, size);
	b->size = size;
	b->from_mmap = from_mmap;
	in->nr_build_ids++;
	return 0;
}

/*
 * Parses one build-id entry (feature section or HEADER_BUILD_ID record):
 * header, s32 pid, 20 id bytes, u8 size, 3 reserved, NUL-padded name.
 */
static int pd_build_id_entry(struct perfdata_reader *r, struct cur *c,
			     struct event_build_id *out)
{
	uint64_t off = cur_off(c);
	struct cur e;
	uint16_t misc, size;
	int32_t pid;
	const uint8_t *bid;
	uint8_t bid_size;
	const char *name;

	(void)cur_u32(c);
	misc = cur_u16(c);
	size = cur_u16(c);
	if (c->short_read || size < 36)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "build-id entry of %u bytes is too short",
			       size);
	e = cur_sub(c, size - 8u);
	if (e.short_read)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "build-id entry of %u bytes exceeds the section",
			       size);
	pid = (int32_t)cur_u32(&e);
	bid = cur_bytes(&e, 20);
	bid_size = cur_u8(&e);
	cur_skip(&e, 3);
	if (!(misc & PD_MISC_BUILD_ID_SIZE) || bid_size == 0 || bid_size > 20)
		bid_size = 20;
	name = cur_fixed_str(&e, cur_left(&e));
	if (!bid || !name)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "build-id entry: file name is not "
			       "NUL-terminated");
	if (out) {
		out->pid = pid;
		out->cpumode = misc & PD_MISC_CPUMODE_MASK;
		memcpy(out->build_id, bid, 20);
		out->build_id_size = bid_size;
		out->filename = name;
	}
	return pd_build_id_add(r, pid, misc & PD_MISC_CPUMODE_MASK, bid,
			       bid_size, name, false);
}

int pd_build_id_record(struct perfdata_reader *r, struct cur *c,
		       struct event_build_id *out)
{
	return pd_build_id_entry(r, c, out);
}

static int pd_feat_event_desc(struct perfdata_reader *r, struct cur *c)
{
	uint64_t off = cur_off(c);
	uint32_t nr = cur_u32(c), attr_size = cur_u32(c), i, j;

	if (c->short_read)
		goto short_read;
	if (attr_size < PD_ATTR_VER0_SIZE || nr > cur_left(c) / attr_size)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "event_desc feature: %u events of %u bytes do "
			       "not fit", nr, attr_size);
	for (i = 0; i < nr; i++) {
		uint32_t nr_ids;
		char *name;
		unsigned idx = i;
		bool matched = false;

		cur_skip(c, attr_size);
		nr_ids = cur_u32(c);
		name = pd_feat_string(r, c, "event_desc");
		if (!name)
			return -1;
		if (nr_ids > cur_left(c) / 8) {
			free(name);
			return err_set(&r->err, ERR_CORRUPT, cur_off(c),
				       "event_desc feature: %u ids do not fit",
				       nr_ids);
		}
		for (j = 0; j < nr_ids; j++) {
			uint64_t id = cur_u64(c);
			unsigned a;

			if (!matched && pd_attr_by_id(r, id, &a) == 0) {
				idx = a;
				matched = true;
			}
		}
		if (idx < r->info.nr_attrs) {
			free(r->attr_names[idx]);
			r->attr_names[idx] = name;
			r->info.attrs[idx].name = name;
		} else {
			free(name);
		}
	}
	if (!c->short_read)
		return 0;
short_read:
	return err_set(&r->err, ERR_TRUNCATED, off,
		       "event_desc feature is truncated");
}

static int pd_feat_cmdline(struct perfdata_reader *r, struct cur *c)
{
	uint64_t off = cur_off(c);
	uint32_t nr = cur_u32(c), i;
	char **v;

	if (c->short_read || nr > cur_left(c) / 4)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "cmdline feature: %u strings do not fit", nr);
	v = mem_zalloc(nr + 1, sizeof(*v));
	if (!v)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "cmdline");
	for (i = 0; i < nr; i++) {
		v[i] = pd_feat_string(r, c, "cmdline");
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return -1;
		}
	}
	for (i = 0; i < r->info.nr_cmdline; i++)
		free(r->info.cmdline[i]);
	free(r->info.cmdline);
	r->info.cmdline = v;
	r->info.nr_cmdline = nr;
	return 0;
}

static int pd_feat_tracing_data(struct perfdata_reader *r, struct cur *c)
{
	size_t n = cur_left(c);
	uint8_t *copy = malloc(n ? n : 1);

	if (!copy)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "tracing data");
	memcpy(copy, c->p, n);
	pd_tracepoint_reset(r);
	free(r->tracing_data);
	r->tracing_data = copy;
	r->info.tracing_data = copy;
	r->info.tracing_data_size = n;
	cur_skip(c, n);
	return 0;
}

/*
 * Decodes feature id from c (exactly its payload).  Returns 0, or -1 with
 * r->err set when the payload is inconsistent.
 */
int pd_feature_parse(struct perfdata_reader *r, unsigned id, struct cur *c)
{
	struct perfdata_info *in = &r->info;
	uint64_t off = cur_off(c);

	switch (id) {
	case PD_FEAT_TRACING_DATA:
		return pd_feat_tracing_data(r, c);
	case PD_FEAT_BUILD_ID:
		while (cur_left(c) > 0)
			if (pd_build_id_entry(r, c, NULL) < 0)
				return -1;
		return 0;
	case PD_FEAT_HOSTNAME:
		return pd_set_string(r, c, &in->hostname, "hostname");
	case PD_FEAT_OSRELEASE:
		return pd_set_string(r, c, &in->osrelease, "osrelease");
	case PD_FEAT_VERSION:
		return pd_set_string(r, c, &in->version, "version");
	case PD_FEAT_ARCH:
		if (pd_set_string(r, c, &in->arch, "arch") < 0)
			return -1;
		in->arch_id = pd_arch_from_name(in->arch);
		return 0;
	case PD_FEAT_CPUDESC:
		return pd_set_string(r, c, &in->cpudesc, "cpudesc");
	case PD_FEAT_CPUID:
		return pd_set_string(r, c, &in->cpuid, "cpuid");
	case PD_FEAT_NRCPUS:
		in->nr_cpus_avail = cur_u32(c);
		in->nr_cpus_online = cur_u32(c);
		in->has_nrcpus = !c->short_read;
		break;
	case PD_FEAT_TOTAL_MEM:
		in->total_mem_kb = cur_u64(c);
		break;
	case PD_FEAT_CMDLINE:
		return pd_feat_cmdline(r, c);
	case PD_FEAT_EVENT_DESC:
		return pd_feat_event_desc(r, c);
	case PD_FEAT_SAMPLE_TIME:
		in->first_sample_time = cur_u64(c);
		in->last_sample_time = cur_u64(c);
		in->has_sample_time = !c->short_read;
		break;
	case PD_FEAT_CLOCKID:
		in->clockid_res_ns = cur_u64(c);
		in->has_clockid_res = !c->short_read;
		break;
	case PD_FEAT_COMPRESSED:
		in->comp_version = cur_u32(c);
		in->comp_type = cur_u32(c);
		in->comp_level = cur_u32(c);
		in->comp_ratio = cur_u32(c);
		in->comp_mmap_len = cur_u32(c);
		in->has_compressed = !c->short_read;
		break;
	default:
		/* Known or not, other features are skipped by size. */
		return 0;
	}
	if (c->short_read)
		return err_set(&r->err, ERR_TRUNCATED, off,
			       "%s feature is truncated",
			       perfdata_feature_name(id) ?
				       perfdata_feature_name(id) : "a");
	return 0;
}

void pd_info_release(struct perfdata_info *in)
{
	unsigned i;

	free(in->hostname);
	free(in->osrelease);
	free(in->version);
	free(in->arch);
	free(in->cpudesc);
	free(in->cpuid);
	for (i = 0; i < in->nr_cmdline; i++)
		free(in->cmdline[i]);
	free(in->cmdline);
	for (i = 0; i < in->nr_build_ids; i++)
		free(in->build_ids[i].filename);
	free(in->build_ids);
	free(in->attrs);
	free(in->feats);
	memset(in, 0, sizeof(*in));
}
