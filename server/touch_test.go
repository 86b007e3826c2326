package server

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// slowTouchStore holds TouchRobots until release closes; every other
// method is unused by the batcher.
type slowTouchStore struct {
	chartctl.Store
	entered, release chan struct{}
	written          chan map[string]time.Time
}

func (s *slowTouchStore) TouchRobots(_ context.Context, used map[string]time.Time) error {
	close(s.entered)
	<-s.release
	s.written <- used
	return nil
}

// A flush that finds nothing pending waits for a flush already writing:
// the dashboard flushes then reads a robot's last use, and the ticker's
// flush may have taken that use a moment before (CI saw "Never" after a
// pull).
func TestFlushWaitsForTheFlushInProgress(t *testing.T) {
	st := &slowTouchStore{entered: make(chan struct{}), release: make(chan struct{}), written: make(chan map[string]time.Time, 1)}
	b := newTouchBatcher(st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.recordRobot("robot_1", time.Now())
	go b.flush()
	<-st.entered

	second := make(chan struct{})
	go func() { b.flush(); close(second) }()
	select {
	case <-second:
		t.Fatal("the second flush returned while the first was still writing")
	case <-time.After(200 * time.Millisecond):
	}
	close(st.release)
	<-second
	select {
	case used := <-st.written:
		if _, ok := used["robot_1"]; !ok {
			t.Fatalf("written %v, want robot_1", used)
		}
	default:
		t.Fatal("the first flush's write was not done when the second returned")
	}
}
