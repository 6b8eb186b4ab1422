/*
 * perfdata_visit.c - a second reading of a file that visits only the
 * records it needs (see perfdata_index_records() in perfdata.h): the
 * first reader's index of the records that are not samples, and the list
 * a later reader of the same file reads alone.
 *
 * The samples a reading of those records and some samples delivers keep
 * the order a full reading gave them when that one delivered every record
 * in (time, file order) order: the ordering queue sorts what it holds by
 * both, and the rounds' flushes of a reading that holds fewer records
 * come no sooner.  So the index is good only when the first reader sorted
 * every record it delivered that way: none came out of time order, none
 * was flushed early by a full queue, none bypassed the queue.
 */
#include <byteswap.h>
#include <stdlib.h>
#include <string.h>

#include "formats/perfdata_internal.h"

#include "common/mem.h"

#define PD_INDEX_MAX (1u << 20)

void perfdata_index_records(struct perfdata_reader *r)
{
	r->indexing = true;
}

/* Gives the index up: it could not be trusted or kept. */
static void pd_index_drop(struct perfdata_reader *r)
{
	r->index_bad = true;
	free(r->index);
	r->index = NULL;
	r->nr_index = r->alloc_index = 0;
}

/* Notes q, of type, read by an indexing reader. */
void pd_index_note(struct perfdata_reader *r, const struct pd_qent *q,
		   uint32_t type)
{
	if (r->index_bad)
		return;
	if (q->compressed) {
		pd_index_drop(r);
		return;
	}
	if (type == PD_REC_SAMPLE)
		return;
	if (r->nr_index == PD_INDEX_MAX ||
	    mem_grow(&r->index, &r->alloc_index, sizeof(*r->index),
		     r->nr_index + 1) < 0) {
		pd_index_drop(r);
		return;
	}
	r->index[r->nr_index++] = q->file_off |
				  (type == PD_REC_FINISHED_ROUND ?
					   PERFDATA_VISIT_ROUND : 0);
}

bool perfdata_record_index(const struct perfdata_reader *r,
			   const uint64_t **offs, size_t *n)
{
	if (!r->indexing || r->index_bad || r->stats.out_of_order ||
	    r->stats.forced_flushes)
		return false;
	*offs = r->index;
	*n = r->nr_index;
	return true;
}

int perfdata_visit_only(struct perfdata_reader *r, const uint64_t *offs,
			size_t n)
{
	uint64_t *v = mem_array(n ? n : 1, sizeof(*v));

	if (!v)
		return -1;
	if (!r->round_blk) {
		struct pd_block *b = calloc(1, sizeof(*b) + PD_REC_HEADER_SIZE);
		/* its header in the file's byte order; misc 0 */
		uint32_t type = PD_REC_FINISHED_ROUND;
		uint16_t size = PD_REC_HEADER_SIZE;

		if (!b) {
			free(v);
			return -1;
		}
		if (r->info.swap) {
			type = bswap_32(type);
			size = bswap_16(size);
		}
		b->refs = 1;
		b->data = b->storage;
		b->len = b->cap = PD_REC_HEADER_SIZE;
		memcpy(b->data, &type, 4);
		memcpy(b->data + 6, &size, 2);
		r->round_blk = b;
	}
	memcpy(v, offs, n * sizeof(*v));
	free(r->visit);
	r->visit = v;
	r->nr_visit = n;
	r->next_visit = 0;
	r->visit_from = 0;
	return 0;
}

int pd_visit_next(struct perfdata_reader *r)
{
	struct pd_src *s = &r->src;
	uint64_t cur = s->blk ? s->blk_off + s->pos : r->in_off, v, off;

	if (r->next_visit == r->nr_visit)
		return 0;
	v = r->visit[r->next_visit++];
	off = perfdata_visit_off(v);
	if (off < cur || off < r->visit_from || off >= r->data_end)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "no record of this file's data starts here "
			       "(did the file change?)");
	if (v & PERFDATA_VISIT_ROUND) {
		r->visit_round_off = off;
		r->visit_from = off + PD_REC_HEADER_SIZE;
		return 2;
	}
	r->visit_from = off;
	if (s->blk && off - s->blk_off <= s->blk->len) {
		s->pos = (size_t)(off - s->blk_off);
		return 1;
	}
	pd_src_release(r, s);
	s->blk_off = off;
	r->in_off = off;
	return 1;
}

void pd_visit_round(struct perfdata_reader *r, struct pd_qent *q)
{
	q->blk = r->round_blk;
	q->rec = r->round_blk->data;
	q->len = PD_REC_HEADER_SIZE;
	q->file_off = r->visit_round_off;
	q->compressed = false;
}
