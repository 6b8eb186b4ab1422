// StJvmRec.java - stitching ground truth (tests/cli/stitch_truth.sh): the
// shape of st_jsrec.js in Java: one recursive method entered from
// three methods, each recursing to a random depth around 40, 150 or 300
// and spinning at the bottom, for about SECONDS seconds of the main
// thread's CPU time (first argument, default 1.5).  Run with
// -XX:+PreserveFramePointer (the JIT code has no CFI: its frames are
// walked by frame pointer) and -XX:+DumpPerfMapAtExit (their names).
public class StJvmRec {
	static long seed = 31337;
	static int rand(int n) {
		seed = (seed * 1103515245L + 12345L) % 2147483648L;
		return (int)(seed % n);
	}
	static long spin(long n) {
		long x = n;
		for (int i = 0; i < 20000; i++)
			x = (x * 1664525L + 1013904223L) % 4294967296L;
		return x;
	}
	static long rec(int depth, int target) {
		long r = depth >= target ? spin(depth) : rec(depth + 1, target);
		return r + depth;
	}
	static long entryShallow() { return rec(1, 30 + rand(20)) + 1; }
	static long entryMiddle(int a, int b, int c) { return rec(1, 140 + rand(20)) + 2; }
	static long entryDeep(int a, int b, int c, int d, int e) { return rec(1, 290 + rand(20)) + 3; }
	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 1.5;
		java.lang.management.ThreadMXBean tb = java.lang.management.ManagementFactory.getThreadMXBean();
		long sink = 0;
		for (;;) {
			if (tb.getCurrentThreadCpuTime() / 1e9 >= secs)
				break;
			for (int i = 0; i < 30; i++) {
				switch (rand(3)) {
				case 0: sink += entryShallow(); break;
				case 1: sink += entryMiddle(1, 2, 3); break;
				default: sink += entryDeep(1, 2, 3, 4, 5); break;
				}
			}
		}
		System.out.println(sink);
	}
}
