/*
 * pbufdec.c - protocol-buffers wire-format decoding (see pbufdec.h).
 */
#include "formats/pbufdec.h"

/* A varint at *p (before end): 0, or -1 when it runs out or is long. */
static int pbufdec_varint(const uint8_t **p, const uint8_t *end,
			  uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift;

	for (shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (*p >= end)
			return -1;
		b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

int pbufdec_next(struct pbufdec *d, struct pbuf_field *f, struct err *err)
{
	uint64_t key, n;

	if (d->p >= d->end)
		return 0;
	f->off = (uint64_t)(d->p - d->base);
	f->data = NULL;
	f->len = 0;
	f->v = 0;
	if (pbufdec_varint(&d->p, d->end, &key) < 0)
		return err_set(err, ERR_CORRUPT, f->off,
			       "protobuf field key runs past its message");
	if (key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return err_set(err, ERR_CORRUPT, f->off,
			       "protobuf field number %llu",
			       (unsigned long long)(key >> 3));
	f->num = (uint32_t)(key >> 3);
	f->wire = (uint8_t)(key & 7);
	switch (f->wire) {
	case 0:
		if (pbufdec_varint(&d->p, d->end, &f->v) < 0)
			return err_set(err, ERR_CORRUPT, f->off,
				       "protobuf varint runs past its message");
		return 1;
	case 1:
	case 5:
		n = f->wire == 1 ? 8 : 4;
		if ((uint64_t)(d->end - d->p) < n)
			return err_set(err, ERR_CORRUPT, f->off,
				       "protobuf fixed field runs past its "
				       "message");
		for (key = 0; key < n; key++)
			f->v |= (uint64_t)d->p[key] << (8 * key);
		d->p += n;
		return 1;
	case 2:
		if (pbufdec_varint(&d->p, d->end, &n) < 0 ||
		    n > (uint64_t)(d->end - d->p))
			return err_set(err, ERR_CORRUPT, f->off,
				       "protobuf field %u runs past its message",
				       f->num);
		f->data = d->p;
		f->len = (size_t)n;
		d->p += n;
		return 1;
	default:
		return err_set(err, ERR_UNSUPPORTED, f->off,
			       "protobuf wire type %u", f->wire);
	}
}

int pbufdec_packed(const struct pbufdec *d, const struct pbuf_field *f,
		   size_t *pos, uint64_t *v, struct err *err)
{
	const uint8_t *p;

	if (f->wire == 0) {
		if (*pos)
			return 0;
		*pos = 1;
		*v = f->v;
		return 1;
	}
	if (f->wire != 2)
		return err_set(err, ERR_CORRUPT, f->off,
			       "protobuf field %u: wire type %u for a varint",
			       f->num, f->wire);
	if (*pos >= f->len)
		return 0;
	p = f->data + *pos;
	if (pbufdec_varint(&p, f->data + f->len, v) < 0)
		return err_set(err, ERR_CORRUPT,
			       (uint64_t)(f->data + *pos - d->base),
			       "packed varint runs past its field");
	*pos = (size_t)(p - f->data);
	return 1;
}
