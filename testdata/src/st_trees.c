/*
 * st_trees.c - stitching ground truth (tests/cli/stitch_truth.sh): walks
 * of random-shaped trees.  Every node goes through one dispatch function,
 * visit(), which calls the function of the node's kind; the four kinds
 * have frames of different sizes, so the stack's shape follows the tree.
 * Trees are 20 to 160 levels deep (a spine with small side branches),
 * rebuilt at random between walks; leaves spin.
 *
 *   st_trees [CPU_SECONDS]     (default 1.5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum kind { LEAF, UNARY, PAIR, WIDE };

struct node {
	enum kind kind;
	int value;
	struct node *kid[3];
};

static volatile unsigned sink;
static unsigned seed = 777;

static unsigned st_rand(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

static struct node *build(int depth)
{
	struct node *n = calloc(1, sizeof(*n));
	int i;

	if (!n)
		exit(1);
	n->value = (int)st_rand(1000);
	if (depth <= 0) {
		n->kind = LEAF;
		return n;
	}
	n->kind = (enum kind)(1 + st_rand(3));
	n->kid[0] = build(depth - 1);
	for (i = 1; i < (n->kind == PAIR ? 2 : n->kind == WIDE ? 3 : 1); i++)
		n->kid[i] = build(st_rand(4) ? 0 : (int)st_rand(3));
	return n;
}

static void drop(struct node *n)
{
	int i;

	if (!n)
		return;
	for (i = 0; i < 3; i++)
		drop(n->kid[i]);
	free(n);
}

static unsigned visit(struct node *n);

__attribute__((noinline)) static unsigned do_leaf(struct node *n)
{
	unsigned x = (unsigned)n->value, i;

	for (i = 0; i < 3000; i++)
		x = x * 1664525u + 1013904223u;
	return x;
}

__attribute__((noinline)) static unsigned do_unary(struct node *n)
{
	volatile char pad[24];

	pad[n->value % 24] = 1;
	return visit(n->kid[0]) + pad[n->value % 24];
}

__attribute__((noinline)) static unsigned do_pair(struct node *n)
{
	volatile char pad[136];
	unsigned r;

	pad[n->value % 136] = 2;
	r = visit(n->kid[1]);
	return r + visit(n->kid[0]) + pad[n->value % 136];
}

__attribute__((noinline)) static unsigned do_wide(struct node *n)
{
	volatile char pad[344];
	unsigned r;

	pad[n->value % 344] = 3;
	r = visit(n->kid[2]) + visit(n->kid[1]);
	return r + visit(n->kid[0]) + pad[n->value % 344];
}

__attribute__((noinline)) static unsigned visit(struct node *n)
{
	unsigned r;

	switch (n->kind) {
	case LEAF:
		r = do_leaf(n);
		break;
	case UNARY:
		r = do_unary(n);
		break;
	case PAIR:
		r = do_pair(n);
		break;
	default:
		r = do_wide(n);
		break;
	}
	return r ^ (unsigned)n->value;	/* no tail call */
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
	struct node *trees[4];
	int i;

	for (i = 0; i < 4; i++)
		trees[i] = build(20 + (int)st_rand(140));
	while (clock() < end) {
		for (i = 0; i < 20; i++)
			sink += visit(trees[st_rand(4)]);
		i = (int)st_rand(4);
		drop(trees[i]);
		trees[i] = build(20 + (int)st_rand(140));
	}
	for (i = 0; i < 4; i++)
		drop(trees[i]);
	printf("%u\n", sink);
	return 0;
}
