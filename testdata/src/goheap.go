// goheap.go - a Go program for restack's tests: allocations of known
// sizes and counts from three call paths, some kept live and some
// freed, then a garbage collection and a heap profile (four sample
// types: alloc_objects, alloc_space, inuse_objects, inuse_space), every
// allocation recorded (runtime.MemProfileRate = 1).
// Arguments: the profile's path, a scale N (default 100): keep
// allocates 2N blocks of 1 KiB and keeps them, churn 3N of 4 KiB and
// drops them, half allocates 5N of 256 bytes through two calls and
// keeps every other one; and "allocs" for the allocs profile (the same
// types, alloc_space its default_sample_type) instead of the heap one
// (no default).
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var kept [][]byte

//go:noinline
func keep(n int) {
	for i := 0; i < 2*n; i++ {
		kept = append(kept, make([]byte, 1024))
	}
}

var last []byte

//go:noinline
func churn(n int) {
	for i := 0; i < 3*n; i++ {
		last = make([]byte, 4096)
	}
	last = nil
}

//go:noinline
func halfLeaf(n int) {
	for i := 0; i < 5*n; i++ {
		b := make([]byte, 256)
		if i%2 == 0 {
			kept = append(kept, b)
		} else {
			last = b
		}
	}
	last = nil
}

//go:noinline
func half(n int) {
	halfLeaf(n)
}

func main() {
	runtime.MemProfileRate = 1
	if len(os.Args) < 2 {
		os.Stderr.WriteString("usage: goheap PROFILE [N [allocs]]\n")
		os.Exit(64)
	}
	n := 100
	if len(os.Args) > 2 {
		v, err := strconv.Atoi(os.Args[2])
		if err != nil || v < 1 {
			os.Stderr.WriteString("goheap: N is a positive number\n")
			os.Exit(64)
		}
		n = v
	}
	kept = make([][]byte, 0, 16*n)
	keep(n)
	churn(n)
	half(n)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	if len(os.Args) > 3 && os.Args[3] == "allocs" {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
	} else {
		err = pprof.WriteHeapProfile(f)
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	runtime.KeepAlive(kept)
}
