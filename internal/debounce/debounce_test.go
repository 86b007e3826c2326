package debounce_test

import (
	"context"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/debounce"
)

// TestGather: values keep coming (every 20 ms, with a quiet time far
// longer) and are all gathered; a full batch ends the wait at once; a
// stream that never pauses ends at max.
func TestGather(t *testing.T) {
	ch := make(chan int)
	go func() {
		for i := range 5 {
			ch <- i
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var got []int
	debounce.Gather(ch, 2*time.Second, time.Hour, nil, func(v int) bool {
		got = append(got, v)
		return true
	})
	if len(got) != 5 {
		t.Fatalf("gathered %v, want the 5 sent", got)
	}

	full := make(chan int, 3)
	full <- 1
	full <- 2
	full <- 3
	n := 0
	debounce.Gather(full, time.Hour, time.Hour, nil, func(int) bool { n++; return n < 2 })
	if n != 2 || len(full) != 1 {
		t.Fatalf("took %d, left %d: a full batch did not end the wait", n, len(full))
	}

	stop := make(chan struct{})
	defer close(stop)
	never := make(chan int)
	go func() {
		for {
			select {
			case never <- 0:
			case <-stop:
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		debounce.Gather(never, time.Hour, 100*time.Millisecond, nil, func(int) bool { return true })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a stream that never pauses was not cut at max")
	}
}

// TestPause: a pause lasts its duration, none lasts nothing, and an
// ended context ends it at once, reporting so.
func TestPause(t *testing.T) {
	start := time.Now()
	if !debounce.Pause(context.Background(), 30*time.Millisecond) || time.Since(start) < 30*time.Millisecond {
		t.Fatal("a pause of 30ms did not last 30ms")
	}
	if !debounce.Pause(context.Background(), -1) || !debounce.Pause(context.Background(), 0) {
		t.Fatal("no pause reported an ended context")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if debounce.Pause(ctx, time.Hour) || debounce.Pause(ctx, 0) {
		t.Fatal("a pause under an ended context did not report it")
	}
}
