package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The memos with other replicas (memo.go). A replica alone on the
// database keys its memos' answers by its own write epoch. With other
// replicas it keys them by the shared write epoch, the sequence
// chartctl_write_epoch, which every write of every replica moves after
// it commits and before it is answered (DB.wrote). A memo's answer is
// given back only while a read of the sequence begun after the request
// arrived finds the value read before the answer was found: a client that
// heard a write acknowledged by one replica (a tag moved, a blob deleted)
// finds it at its next request to any other. The reads of the sequence are
// shared by the requests waiting together (sharedSeq): one statement
// answers many manifest and blob GETs.
//
// That holds only while no replica writes without moving the sequence: a
// replica alone on the database does not move it, and releases before
// this one never do. So a replica uses its memos with others only once
// every other listening replica has acknowledged its announcement
// (indexChange.Joined with its listening connection's pid): a replica
// acknowledges after it has stopped being alone, so that every write it
// made alone has committed and every later one moves the sequence. The
// listening connections are counted by pid at each poll; a replica whose
// listening connection is new (a new replica, or one whose connection
// dropped) must acknowledge before the memos are used again, and a
// release that does not acknowledge keeps them off. The memos' epoch also
// holds the replica's own epoch, which moves at every poll, so an answer
// kept under a write that never moved the sequence (its replica died
// between the commit and the move) lives at most a poll.

// sharedBit marks the epochs of answers kept with other replicas, so that
// they never match one kept alone.
const sharedBit = 1 << 63

// sharedEpoch is a DB's part of the shared write epoch.
type sharedEpoch struct {
	// ok is set while every other listening replica has acknowledged
	// this one's announcement.
	ok atomic.Bool

	// The shared reads of the sequence: next is the read the requests
	// arriving now wait for, sent once the read in flight (reading) is
	// answered.
	mu      sync.Mutex
	next    *seqRead
	reading bool
}

// seqRead is one read of the sequence, shared by the requests that
// arrived before it was sent.
type seqRead struct {
	done chan struct{}
	v    uint64
	err  error
}

// wrote moves the write epoch after a write, committed or not, before its
// caller hears of it: this replica's own epoch, and the shared one unless
// the replica is alone (a failure to move it is not the write's: the
// other replicas' answers then live at most a poll, as above).
func (db *DB) wrote(ctx context.Context) {
	db.epoch.Add(1)
	if _, alone := db.aloneGeneration(); alone {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = db.pool.Exec(ctx, `SELECT nextval('chartctl_write_epoch')`)
}

// moved moves this replica's own epoch only: its answers from before are
// not used again.
func (db *DB) moved() { db.epoch.Add(1) }

// sharedMemoEpoch returns the epoch to read a memo at with other
// replicas: the sequence as read after the call, and this replica's own
// epoch, read before it.
func (db *DB) sharedMemoEpoch(ctx context.Context) (uint64, bool) {
	if !db.shared.ok.Load() {
		return 0, false
	}
	own := db.epoch.Load()
	seq, err := db.sharedSeq(ctx)
	if err != nil {
		return 0, false
	}
	return sharedBit | (own&(1<<31-1))<<32 | seq&(1<<32-1), true
}

// sharedSeq returns the sequence's value as read by a statement sent
// after the call: the call joins the read not yet sent, which goes once
// the read in flight is answered.
func (db *DB) sharedSeq(ctx context.Context) (uint64, error) {
	s := &db.shared
	s.mu.Lock()
	r := s.next
	if r == nil {
		r = &seqRead{done: make(chan struct{})}
		s.next = r
		if !s.reading {
			s.reading = true
			go db.readSeqs()
		}
	}
	s.mu.Unlock()
	select {
	case <-r.done:
		return r.v, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// readSeqs sends the waiting reads one after the other until none waits.
func (db *DB) readSeqs() {
	s := &db.shared
	for {
		s.mu.Lock()
		r := s.next
		s.next = nil
		if r == nil {
			s.reading = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var v int64
		r.err = db.pool.QueryRow(ctx, `SELECT last_value FROM chartctl_write_epoch`).Scan(&v)
		r.v = uint64(v)
		cancel()
		close(r.done)
	}
}

// acks is a watcher's record of who acknowledged its announcement.
type acks struct {
	// round is the pid of the listening connection announced; from the
	// pids of the replicas' listening connections that acknowledged it.
	round uint32
	from  map[uint32]bool
	// others are the other replicas' listening pids at the last poll.
	others []uint32
	// confirmed is closed once the memos may first be used with others
	// (WatchIndex waits for it, briefly, before it returns).
	confirmed     chan struct{}
	confirmedOnce sync.Once
}

// heard records the acknowledgement c.
func (w *watcher) heard(c indexChange) {
	if c.Ack != w.listener.Load() || c.Ack == 0 {
		return // for an announcement of an earlier connection
	}
	w.newRound(c.Ack)
	w.acks.from[c.From] = true
	w.confirm()
}

// newRound starts recording the acknowledgements of the announcement of
// the listening connection pid, unless they are already.
func (w *watcher) newRound(pid uint32) {
	if w.acks.round != pid {
		w.acks.round, w.acks.from = pid, map[uint32]bool{}
	}
}

// confirm turns the memos with other replicas on when every other
// listening replica has acknowledged this one's announcement, and off
// otherwise. It reports whether some have not.
func (w *watcher) confirm() (missing bool) {
	pid := w.listener.Load()
	ok := pid != 0 && pid == w.acks.round && len(w.acks.others) > 0
	if ok {
		for _, o := range w.acks.others {
			if !w.acks.from[o] {
				ok = false
				break
			}
		}
	}
	if ok && !w.db.shared.ok.Load() {
		// Answers kept in an earlier confirmed spell are not used again.
		w.db.moved()
		w.db.shared.ok.Store(true)
		if w.listener.Load() != pid {
			// The connection dropped meanwhile (listen turned them off).
			w.db.shared.ok.Store(false)
			return false
		}
		w.acks.confirmedOnce.Do(func() { close(w.acks.confirmed) })
	} else if !ok {
		w.db.shared.ok.Store(false)
	}
	return !ok && pid != 0 && len(w.acks.others) > 0
}

// polled records the other replicas' listening pids a poll counted, and
// announces this replica again while some of them have not acknowledged
// (they began to listen after its announcement, or it was lost).
func (w *watcher) polled(ctx context.Context, others []uint32) {
	slices.Sort(others)
	w.acks.others = others
	// A connection's first announcement is dial's, just sent.
	pid := w.listener.Load()
	fresh := pid != w.acks.round
	if pid != 0 {
		w.newRound(pid)
	}
	if w.confirm() && !fresh {
		w.announce(ctx, pid)
	}
}

// announce tells the other replicas that this one listens on the
// connection pid: each stops answering alone, and acknowledges.
func (w *watcher) announce(ctx context.Context, pid uint32) {
	b, _ := json.Marshal(indexChange{Origin: w.db.origin, Joined: true, Pid: pid})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, _ = w.db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, indexChannel, string(b))
}

// acknowledge answers another replica's announcement c. It is called
// after this replica stopped being alone: every write it made alone has
// committed (its move of the epoch came after the commit and found it
// alone), and every later one moves the shared epoch.
func (w *watcher) acknowledge(ctx context.Context, c indexChange) {
	if c.Pid == 0 {
		return // a release that does not wait for acknowledgements
	}
	b, _ := json.Marshal(indexChange{Origin: w.db.origin, Ack: c.Pid, From: w.listener.Load()})
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = w.db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, indexChannel, string(b))
	}()
}
