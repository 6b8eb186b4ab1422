// gowork.go - a Go program for restack's tests: goroutines doing
// recursive CPU work at varied depths, an allocating goroutine and one
// that creates goroutines, both pausing between rounds (they make
// runtime calls on the system stack, and start the garbage collector).
// Argument: how long to run, in milliseconds (default 1000).
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

//go:noinline
func recurse(n, depth int) int {
	if depth == 0 {
		return spin(n)
	}
	return recurse(n, depth-1) + 1
}

var sink [][]byte

//go:noinline
func allocate(n int) int {
	t := 0
	for i := 0; i < n; i++ {
		b := make([]byte, 64+i%8192)
		sink = append(sink, b)
		if len(sink) > 2000 {
			sink = nil
		}
		t += len(b)
	}
	return t
}

//go:noinline
func spawn(n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			recurse(200, i%8)
			wg.Done()
		}(i)
	}
	wg.Wait()
}

func main() {
	ms := 1000
	if len(os.Args) > 1 {
		ms, _ = strconv.Atoi(os.Args[1])
	}
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			for i := 0; time.Now().Before(end); i++ {
				recurse(20000, 3+(w*7+i)%25)
			}
			wg.Done()
		}(w)
	}
	wg.Add(2)
	go func() {
		for time.Now().Before(end) {
			allocate(300)
			time.Sleep(2 * time.Millisecond)
		}
		wg.Done()
	}()
	go func() {
		for time.Now().Before(end) {
			spawn(100)
			time.Sleep(2 * time.Millisecond)
		}
		wg.Done()
	}()
	wg.Wait()
}
