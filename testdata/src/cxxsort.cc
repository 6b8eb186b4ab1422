// cxxsort.cc - a C++ workload for tests/cli/cxxinline.sh: std::sort with
// a lambda comparator on strings, std::map, a thread, built -O2 -g (deep
// inline chains of templates whose DWARF names are not linkage names).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

static std::vector<std::string> make_words(unsigned n, unsigned seed)
{
	std::vector<std::string> w;
	w.reserve(n);
	for (unsigned i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		std::string s;
		for (unsigned k = 0; k < 4 + (seed >> 28); k++)
			s.push_back((char)('a' + ((seed >> (k * 3)) & 15)));
		w.push_back(s);
	}
	return w;
}

static unsigned long run(double secs, unsigned seed)
{
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(secs);
	unsigned long acc = 0;
	while (std::chrono::steady_clock::now() < end) {
		std::vector<std::string> w = make_words(20000, seed++);
		std::sort(w.begin(), w.end(),
			  [](const std::string &a, const std::string &b) {
				  return a.size() != b.size() ?
						 a.size() < b.size() : a < b;
			  });
		std::map<std::string, unsigned> m;
		for (const auto &s : w)
			m[s]++;
		acc += m.size() + w.front().size();
	}
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	unsigned long a = 0, b = 0;
	std::thread t([&] { b = run(secs, 7); });
	a = run(secs, 1);
	t.join();
	printf("%lu\n", a + b);
	return 0;
}
