/*
 * symtree.h - the shape of perf's red-black tree of a DSO's symbols.
 *
 * perf 6.1 keeps a DSO's symbols in a red-black tree keyed by start address
 * (symbols__insert(): an equal start goes to the right) and names an
 * address by walking the tree from its root (symbols__find()): the first
 * symbol on the way that holds the address wins.  Where symbols overlap,
 * which one that is depends on the tree's shape: on x86-64 binaries the
 * zero-size "_init" is extended up to the next symbol by the fixup pass,
 * over the .plt whose "name@plt" entries perf synthesizes after it, and
 * perf names a PLT entry "_init" when the "_init" node lies on the way to
 * the entry's node.  symtree builds the same shape: the same insertions
 * and erasures in the same order, with the red-black rebalancing of
 * lib/rbtree.c (the textbook insertion and deletion: a node with two
 * children is replaced by its successor).
 *
 * Nodes are numbered in insertion order and never move; a node's val is
 * free for its user.
 */
#ifndef RESTACK_UNWIND_SYMTREE_H
#define RESTACK_UNWIND_SYMTREE_H

#include <stddef.h>
#include <stdint.h>

#define SYMTREE_NIL UINT32_MAX

struct symtree_node {
	uint64_t key;
	uint32_t left, right, parent;   /* SYMTREE_NIL: none */
	uint32_t val;
	uint8_t red;
};

struct symtree {
	struct symtree_node *n;   /* owned; nr used of alloc */
	uint32_t nr;
	size_t alloc;
	uint32_t root;            /* SYMTREE_NIL when empty */
};

void symtree_init(struct symtree *t);
void symtree_release(struct symtree *t);

/*
 * Inserts key after the nodes with an equal key; returns its node number,
 * or SYMTREE_NIL when out of memory.
 */
uint32_t symtree_insert(struct symtree *t, uint64_t key);

/* Takes node id (in the tree) out of the tree. */
void symtree_erase(struct symtree *t, uint32_t id);

/*
 * Sets the val of the nodes in the tree to 0, 1, ... in key order (equal
 * keys in insertion order); returns how many there are.
 */
uint32_t symtree_number(struct symtree *t);

#endif
