/*
 * symtree.c - a red-black tree that takes the shape perf's symbol tree
 * takes (see symtree.h).
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/symtree.h"

#include "common/mem.h"

#define NIL SYMTREE_NIL

void symtree_init(struct symtree *t)
{
	memset(t, 0, sizeof(*t));
	t->root = NIL;
}

void symtree_release(struct symtree *t)
{
	free(t->n);
	symtree_init(t);
}

static inline struct symtree_node *st_node(struct symtree *t, uint32_t id)
{
	return &t->n[id];
}

static inline int st_is_red(struct symtree *t, uint32_t id)
{
	return id != NIL && t->n[id].red;
}

/* Puts node to where old was below old's parent (or at the root). */
static void st_replace_child(struct symtree *t, uint32_t old, uint32_t node,
			     uint32_t parent)
{
	if (parent == NIL)
		t->root = node;
	else if (t->n[parent].left == old)
		t->n[parent].left = node;
	else
		t->n[parent].right = node;
	if (node != NIL)
		t->n[node].parent = parent;
}

/* x's right child takes x's place; x becomes its left child. */
static void st_rotate_left(struct symtree *t, uint32_t x)
{
	uint32_t y = t->n[x].right, b = t->n[y].left;

	t->n[x].right = b;
	if (b != NIL)
		t->n[b].parent = x;
	st_replace_child(t, x, y, t->n[x].parent);
	t->n[y].left = x;
	t->n[x].parent = y;
}

/* x's left child takes x's place; x becomes its right child. */
static void st_rotate_right(struct symtree *t, uint32_t x)
{
	uint32_t y = t->n[x].left, b = t->n[y].right;

	t->n[x].left = b;
	if (b != NIL)
		t->n[b].parent = x;
	st_replace_child(t, x, y, t->n[x].parent);
	t->n[y].right = x;
	t->n[x].parent = y;
}

uint32_t symtree_insert(struct symtree *t, uint64_t key)
{
	uint32_t id, p = NIL, cur = t->root, z;
	struct symtree_node *n;

	if (t->nr == NIL || mem_grow(&t->n, &t->alloc, sizeof(*t->n),
				    (size_t)t->nr + 1) < 0)
		return NIL;
	id = t->nr++;
	while (cur != NIL) {
		p = cur;
		cur = key < t->n[cur].key ? t->n[cur].left : t->n[cur].right;
	}
	n = st_node(t, id);
	n->key = key;
	n->left = n->right = NIL;
	n->parent = p;
	n->val = 0;
	n->red = 1;
	if (p == NIL)
		t->root = id;
	else if (key < t->n[p].key)
		t->n[p].left = id;
	else
		t->n[p].right = id;

	/* rebalance: z is red; its parent may be too */
	z = id;
	while ((p = t->n[z].parent) != NIL && t->n[p].red) {
		uint32_t g = t->n[p].parent, u;

		if (p == t->n[g].left) {
			u = t->n[g].right;
			if (st_is_red(t, u)) {
				t->n[p].red = 0;
				t->n[u].red = 0;
				t->n[g].red = 1;
				z = g;
				continue;
			}
			if (z == t->n[p].right) {
				st_rotate_left(t, p);
				z = p;
				p = t->n[z].parent;
			}
			t->n[p].red = 0;
			t->n[g].red = 1;
			st_rotate_right(t, g);
		} else {
			u = t->n[g].left;
			if (st_is_red(t, u)) {
				t->n[p].red = 0;
				t->n[u].red = 0;
				t->n[g].red = 1;
				z = g;
				continue;
			}
			if (z == t->n[p].left) {
				st_rotate_right(t, p);
				z = p;
				p = t->n[z].parent;
			}
			t->n[p].red = 0;
			t->n[g].red = 1;
			st_rotate_left(t, g);
		}
	}
	t->n[t->root].red = 0;
	return id;
}

/*
 * Restores the black heights after a black node left: x (possibly none)
 * has one black too few on its side of parent.
 */
static void st_erase_fixup(struct symtree *t, uint32_t x, uint32_t parent)
{
	while (parent != NIL && !st_is_red(t, x)) {
		uint32_t w;

		if (x == t->n[parent].left) {
			w = t->n[parent].right;
			if (st_is_red(t, w)) {
				t->n[w].red = 0;
				t->n[parent].red = 1;
				st_rotate_left(t, parent);
				w = t->n[parent].right;
			}
			if (!st_is_red(t, t->n[w].left) &&
			    !st_is_red(t, t->n[w].right)) {
				t->n[w].red = 1;
				x = parent;
				parent = t->n[x].parent;
				continue;
			}
			if (!st_is_red(t, t->n[w].right)) {
				t->n[t->n[w].left].red = 0;
				t->n[w].red = 1;
				st_rotate_right(t, w);
				w = t->n[parent].right;
			}
			t->n[w].red = t->n[parent].red;
			t->n[parent].red = 0;
			t->n[t->n[w].right].red = 0;
			st_rotate_left(t, parent);
		} else {
			w = t->n[parent].left;
			if (st_is_red(t, w)) {
				t->n[w].red = 0;
				t->n[parent].red = 1;
				st_rotate_right(t, parent);
				w = t->n[parent].left;
			}
			if (!st_is_red(t, t->n[w].left) &&
			    !st_is_red(t, t->n[w].right)) {
				t->n[w].red = 1;
				x = parent;
				parent = t->n[x].parent;
				continue;
			}
			if (!st_is_red(t, t->n[w].left)) {
				t->n[t->n[w].right].red = 0;
				t->n[w].red = 1;
				st_rotate_left(t, w);
				w = t->n[parent].left;
			}
			t->n[w].red = t->n[parent].red;
			t->n[parent].red = 0;
			t->n[t->n[w].left].red = 0;
			st_rotate_right(t, parent);
		}
		x = t->root;
		break;
	}
	if (x != NIL)
		t->n[x].red = 0;
}

void symtree_erase(struct symtree *t, uint32_t z)
{
	uint32_t x, xparent, y;
	int removed_red;

	if (t->n[z].left == NIL || t->n[z].right == NIL) {
		/* z leaves; its only child (if any) takes its place */
		x = t->n[z].left != NIL ? t->n[z].left : t->n[z].right;
		xparent = t->n[z].parent;
		removed_red = t->n[z].red;
		st_replace_child(t, z, x, xparent);
	} else {
		/* z's successor y takes z's place and colour */
		y = t->n[z].right;
		while (t->n[y].left != NIL)
			y = t->n[y].left;
		removed_red = t->n[y].red;
		x = t->n[y].right;
		if (t->n[y].parent == z) {
			xparent = y;
		} else {
			xparent = t->n[y].parent;
			st_replace_child(t, y, x, xparent);
			t->n[y].right = t->n[z].right;
			t->n[t->n[y].right].parent = y;
		}
		st_replace_child(t, z, y, t->n[z].parent);
		t->n[y].left = t->n[z].left;
		t->n[t->n[y].left].parent = y;
		t->n[y].red = t->n[z].red;
	}
	t->n[z].left = t->n[z].right = t->n[z].parent = NIL;
	if (!removed_red)
		st_erase_fixup(t, x, xparent);
}

uint32_t symtree_number(struct symtree *t)
{
	uint32_t cur = t->root, k = 0;

	if (cur == NIL)
		return 0;
	while (t->n[cur].left != NIL)
		cur = t->n[cur].left;
	while (cur != NIL) {
		t->n[cur].val = k++;
		if (t->n[cur].right != NIL) {
			cur = t->n[cur].right;
			while (t->n[cur].left != NIL)
				cur = t->n[cur].left;
		} else {
			uint32_t c = cur;

			cur = t->n[cur].parent;
			while (cur != NIL && t->n[cur].right == c) {
				c = cur;
				cur = t->n[cur].parent;
			}
		}
	}
	return k;
}
