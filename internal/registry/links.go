package registry

import (
	"context"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// linkLinger bounds how long a finished upload's blob link waits for the
// uploads still under way to finish too and share its commit.
const linkLinger = 2 * time.Millisecond

// linker commits the blob links of uploads that finish together in one
// store write. A client pushing an artifact uploads its blobs at the same
// time (Helm: the config and the chart archive); on the bolt store each
// link was its own commit, two disk syncs, taken one after the other. An
// upload's link waits only while another upload is between its start
// and its link, and at most linkLinger: an upload alone commits at once.
type linker struct {
	mu sync.Mutex
	// storing counts the uploads between begin and their link or end.
	storing int
	// round is the links waiting for their commit, nil when none.
	round *linkRound
}

// linkRound is the links of one commit.
type linkRound struct {
	oci   chartctl.OCIStore
	links []chartctl.OCIBlobLink
	timer *time.Timer
	done  chan struct{}
	err   error
}

// begin counts an upload under way; its end (link or abandon) must
// follow.
func (l *linker) begin() {
	l.mu.Lock()
	l.storing++
	l.mu.Unlock()
}

// abandon ends an upload that links nothing (it failed), committing the
// waiting links when it was the last one they waited for.
func (l *linker) abandon() {
	l.mu.Lock()
	l.storing--
	r := l.takeIfLast()
	l.mu.Unlock()
	l.commit(r)
}

// link ends an upload by linking digest (of size bytes) to name in oci,
// durably, with the links of the uploads finishing at the same time.
func (l *linker) link(oci chartctl.OCIStore, name, digest string, size int64) error {
	l.mu.Lock()
	l.storing--
	if l.round == nil {
		r := &linkRound{oci: oci, done: make(chan struct{})}
		r.timer = time.AfterFunc(linkLinger, func() {
			l.mu.Lock()
			var due *linkRound
			if l.round == r {
				due, l.round = r, nil
			}
			l.mu.Unlock()
			l.commit(due)
		})
		l.round = r
	}
	r := l.round
	r.links = append(r.links, chartctl.OCIBlobLink{Name: name, Digest: digest, Size: size})
	due := l.takeIfLast()
	l.mu.Unlock()
	l.commit(due)
	<-r.done
	return r.err
}

// takeIfLast takes the waiting round when no upload is under way any
// more. l.mu is held.
func (l *linker) takeIfLast() *linkRound {
	if l.storing > 0 || l.round == nil {
		return nil
	}
	r := l.round
	l.round = nil
	r.timer.Stop()
	return r
}

// commit writes r's links (nil: nothing) and wakes their uploads. The
// links belong to several requests: the write is not cancelled with any
// one of them.
func (l *linker) commit(r *linkRound) {
	if r == nil {
		return
	}
	r.err = r.oci.LinkBlobs(context.Background(), r.links)
	close(r.done)
}
