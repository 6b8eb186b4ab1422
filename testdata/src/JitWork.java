// JitWork.java - a Java workload for tests/cli/java.sh: recursive work in
// a few methods that the JIT compiles (C2), run for the milliseconds given.
public class JitWork {
	static long fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static long walk(long x, int depth) {
		if (depth == 0)
			return fib(16) ^ x;
		return walk(x * 31 + depth, depth - 1) + (x & 7);
	}

	static long hash(String s, int rounds) {
		long h = 0;
		for (int r = 0; r < rounds; r++)
			for (int i = 0; i < s.length(); i++)
				h = h * 131 + s.charAt(i) + r;
		return h;
	}

	static long step(long acc, int i) {
		if ((i & 3) == 0)
			return acc + hash("restack" + i, 50);
		return acc + walk(acc, 10);
	}

	static long run(long millis) {
		long end = System.nanoTime() + millis * 1000000L;
		long acc = 0;
		int i = 0;

		while (System.nanoTime() < end)
			acc = step(acc, i++);
		return acc;
	}

	public static void main(String[] args) {
		long acc = run(Long.parseLong(args[0]));
		System.out.println(acc == 42 ? "unlikely" : "done");
	}
}
