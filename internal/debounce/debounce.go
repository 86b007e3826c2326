// Package debounce waits for a pause in a stream of events: the
// background jobs that follow pushes (chart pages, images) gather what a
// burst queues and start once it pauses, so their work comes after the
// burst instead of beside it.
package debounce

import (
	"context"
	"time"
)

// Pause waits d (not at all when d is not positive), so that what a burst
// queues meanwhile is handled in one go; it reports false when ctx ended
// first.
func Pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Gather receives from ch, handing each value to add, until nothing has
// arrived for quiet, or max has passed since the call, or stop closes, or
// add answers false (the batch is full).
func Gather[T any](ch <-chan T, quiet, max time.Duration, stop <-chan struct{}, add func(T) bool) {
	pause := time.NewTimer(quiet)
	defer pause.Stop()
	limit := time.NewTimer(max)
	defer limit.Stop()
	for {
		select {
		case v := <-ch:
			if !add(v) {
				return
			}
			pause.Reset(quiet)
		case <-pause.C:
			return
		case <-limit.C:
			return
		case <-stop:
			return
		}
	}
}
