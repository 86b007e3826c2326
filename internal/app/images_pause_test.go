package app

import (
	"testing"
	"time"
)

// TestImagesAwaitPause: the images job waits while pushes keep waking
// it (here every 50 ms, with a quiet time far longer), returns once they
// pause, and returns at its bound when they never do.
func TestImagesAwaitPause(t *testing.T) {
	j := &imagesJob{quiet: time.Second, max: time.Hour}
	j.init()
	stream := 400 * time.Millisecond
	go func() {
		for end := time.Now().Add(stream); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			j.signal()
		}
	}()
	start := time.Now()
	j.awaitPause(make(chan struct{}))
	if took := time.Since(start); took < stream {
		t.Fatalf("returned %v after the first push, while pushes went on for %v", took, stream)
	}

	// Pushes that never pause: the bound ends the wait.
	j = &imagesJob{quiet: time.Hour, max: 100 * time.Millisecond}
	j.init()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				j.signal()
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		j.awaitPause(make(chan struct{}))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("awaitPause did not return at its bound")
	}
}
