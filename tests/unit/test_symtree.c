/*
 * test_symtree.c - the red-black tree shaped like perf's symbol tree: the
 * textbook shape for keys inserted in order (the one lib/rbtree.c gives),
 * equal keys kept in insertion order, and after thousands of random
 * insertions and erasures a valid red-black tree (ordered, no red node
 * with a red child, one black height) holding exactly the keys left.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "unwind/symtree.h"

#define NIL SYMTREE_NIL

/* The black height below id, or -1 when the subtree is not valid. */
static int check_node(const struct symtree *t, uint32_t id, uint32_t parent,
		      uint64_t lo, uint64_t hi)
{
	const struct symtree_node *n;
	int l, r;

	if (id == NIL)
		return 1;
	n = &t->n[id];
	if (n->parent != parent || n->key < lo || n->key > hi)
		return -1;
	if (n->red && ((n->left != NIL && t->n[n->left].red) ||
		       (n->right != NIL && t->n[n->right].red)))
		return -1;
	l = check_node(t, n->left, id, lo, n->key);
	r = check_node(t, n->right, id, n->key, hi);
	if (l < 0 || r < 0 || l != r)
		return -1;
	return l + !n->red;
}

static bool tree_valid(const struct symtree *t)
{
	if (t->root == NIL)
		return true;
	return !t->n[t->root].red &&
	       check_node(t, t->root, NIL, 0, UINT64_MAX) > 0;
}

int main(void)
{
	struct symtree t;
	uint32_t ids[7], id, k;
	uint32_t *live;
	uint64_t *keys;
	size_t nlive = 0, i, j;
	bool ok = true;

	/*
	 * 1..7 in order: 2 (1, 4 (3, 6 (5, 7))); red: 4, 5 and 7 (4 became
	 * red when 6 came, 5 and 7 when 7's rotation made 6 their parent)
	 */
	symtree_init(&t);
	for (k = 0; k < 7; k++)
		ids[k] = symtree_insert(&t, k + 1);
	CHECK(t.root == ids[1], "1..7: 2 at the root");
	CHECK(t.n[ids[1]].left == ids[0] && t.n[ids[1]].right == ids[3],
	      "1..7: 1 and 4 below 2");
	CHECK(t.n[ids[3]].left == ids[2] && t.n[ids[3]].right == ids[5],
	      "1..7: 3 and 6 below 4");
	CHECK(t.n[ids[5]].left == ids[4] && t.n[ids[5]].right == ids[6],
	      "1..7: 5 and 7 below 6");
	for (k = 0; k < 7; k++)
		ok &= t.n[ids[k]].red == (k == 3 || k == 4 || k == 6);
	CHECK(ok, "1..7: the colours");
	/* erasing 4 (two children) puts its successor 5 in its place */
	symtree_erase(&t, ids[3]);
	CHECK(t.n[ids[1]].right == ids[4] && t.n[ids[4]].left == ids[2] &&
	      t.n[ids[4]].right == ids[5], "erasing 4: 5 takes its place");
	CHECK(tree_valid(&t), "erasing 4: still a red-black tree");
	symtree_release(&t);

	/* equal keys: in insertion order */
	symtree_init(&t);
	for (k = 0; k < 5; k++)
		ids[k] = symtree_insert(&t, 100);
	CHECK_EQ_U64(symtree_number(&t), 5, "5 equal keys numbered");
	for (k = 0; k < 5; k++)
		ok &= t.n[ids[k]].val == k;
	CHECK(ok, "equal keys numbered in insertion order");
	symtree_release(&t);

	/* random insertions and erasures */
	symtree_init(&t);
	live = calloc(20000, sizeof(*live));
	keys = calloc(20000, sizeof(*keys));
	if (!live || !keys)
		return 1;
	srand(7);
	ok = true;
	for (i = 0; i < 20000; i++) {
		if (nlive && rand() % 3 == 0) {
			j = (size_t)rand() % nlive;
			symtree_erase(&t, live[j]);
			live[j] = live[--nlive];
		} else {
			id = symtree_insert(&t, (uint64_t)(rand() % 5000));
			if (id == NIL)
				return 1;
			live[nlive++] = id;
		}
		if (i % 997 == 0)
			ok &= tree_valid(&t);
	}
	CHECK(ok && tree_valid(&t),
	      "20000 random operations: valid throughout");
	CHECK_EQ_U64(symtree_number(&t), nlive,
		     "every node left is in the tree");
	for (i = 0; i < nlive; i++)
		keys[t.n[live[i]].val] = t.n[live[i]].key;
	ok = true;
	for (i = 1; i < nlive; i++)
		ok &= keys[i - 1] <= keys[i];
	CHECK(ok, "numbered in key order");
	free(live);
	free(keys);
	symtree_release(&t);
	return done_testing();
}
