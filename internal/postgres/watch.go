package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Index freshness across replicas (CONTRACT §12). Each replica keeps its
// repositories' Helm indexes in memory. Every transaction that changes a
// chart version raises its repository's generation and sends a
// notification on indexChannel naming the version, delivered when it
// commits. WatchIndex listens on a dedicated connection and refreshes the
// version at once; and since a notification is lost when that connection
// drops (a database restart, a proxy cutting it), it also reads every
// repository's generation a few times a second and reloads a repository
// whose generation it did not hear of.

// indexChannel is the notification channel of index changes.
const indexChannel = "chartctl_index"

// listenerName is the application_name of the listening connection, so an
// operator (or a test) can tell it in pg_stat_activity.
const listenerName = "chartctl-index-listener"

// DefaultIndexPoll is how often WatchIndex compares generations: a change
// whose notification was lost shows within two polls.
const DefaultIndexPoll = 300 * time.Millisecond

// indexChange is a notification's payload.
type indexChange struct {
	// Origin is the DB (process) that made the change.
	Origin string `json:"o,omitempty"`
	// Repo is the repository name; Name and Version the chart version,
	// empty when the whole repository changed.
	Repo    string `json:"r"`
	Name    string `json:"n,omitempty"`
	Version string `json:"v,omitempty"`
	// RepoID and Gen are the repository's ID and generation after the
	// change; Gen is -1 when the repository was deleted.
	RepoID string `json:"i,omitempty"`
	Gen    int64  `json:"g"`
	// Creds says a credential was revoked (a key deleted, a user
	// disabled or deleted, a token or grant revoked): replicas drop the
	// credentials they cached. Repo is empty then.
	Creds bool `json:"c,omitempty"`
	// Joined says a replica began listening: the others stop answering
	// from their memos alone (memo.go) and acknowledge. Repo is empty
	// then; releases before it drop such a notification. Pid is the
	// joiner's listening connection (releases before the shared epoch
	// send none, and wait for no acknowledgement).
	Joined bool   `json:"j,omitempty"`
	Pid    uint32 `json:"p,omitempty"`
	// Ack acknowledges the announcement of the listening connection Ack
	// from the replica listening on From (sharedepoch.go).
	Ack  uint32 `json:"a,omitempty"`
	From uint32 `json:"f,omitempty"`
}

// CredentialsHandler is an IndexHandler that also caches credentials: it
// is told when another replica revoked one, and after the listening
// connection was lost (it may have missed such news).
type CredentialsHandler interface {
	InvalidateCredentials()
}

// credentialsChanged tells the other replicas that a credential was
// revoked, once that has committed. A failure is ignored: their caches
// expire on their own within a short time.
func (db *DB) credentialsChanged(ctx context.Context) {
	b, _ := json.Marshal(indexChange{Origin: db.origin, Creds: true})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, indexChannel, string(b))
}

// invalidateCredentials tells h, if it caches credentials, to drop them.
func (w *watcher) invalidateCredentials() {
	if ch, ok := w.h.(CredentialsHandler); ok {
		ch.InvalidateCredentials()
	}
}

// IndexHandler is told of the changes WatchIndex sees (internal/app
// implements it over the index cache).
type IndexHandler interface {
	// RefreshIndexVersion makes the in-memory index entry of one chart
	// version match the store.
	RefreshIndexVersion(ctx context.Context, repo, name, version string)
	// InvalidateIndex forgets the in-memory index of repo; the next
	// request loads it from the store.
	InvalidateIndex(repo string)
}

// changed raises the generation of repository id (named repo) in tx,
// with a new random index token (IndexGeneration), and queues the
// notification of the change of one chart version.
//
// One statement: the generation it moves to goes into the notification
// on the server, so a chart write pays one round trip for both.
func (db *DB) changed(ctx context.Context, tx pgx.Tx, id, repo, name, version string) error {
	b := &pgx.Batch{}
	if err := db.queueChanged(b, id, repo, name, version); err != nil {
		return err
	}
	res := tx.SendBatch(ctx, b)
	if err := scanChanged(res.QueryRow(), repo); err != nil {
		_ = res.Close()
		return err
	}
	return res.Close()
}

// queueChanged adds changed's statement to b; scanChanged reads its
// answer.
func (db *DB) queueChanged(b *pgx.Batch, id, repo, name, version string) error {
	note, err := json.Marshal(indexChange{Origin: db.origin, Repo: repo, Name: name, Version: version, RepoID: id})
	if err != nil {
		return err
	}
	b.Queue(`WITH moved AS (
			UPDATE repositories SET generation = generation + 1, index_token = `+newIndexToken+`
			WHERE id = $1 RETURNING generation)
		SELECT generation, pg_notify($2, jsonb_set($3::jsonb, '{g}', to_jsonb(generation))::text) FROM moved`,
		id, indexChannel, string(note))
	return nil
}

// scanChanged reads the answer of queueChanged's statement: ENOTFOUND
// when repository repo is gone.
func scanChanged(row pgx.Row, repo string) error {
	var gen int64
	err := row.Scan(&gen, nil)
	if errors.Is(err, pgx.ErrNoRows) {
		return repoNotFound(repo)
	}
	return err
}

// notify queues c on indexChannel; PostgreSQL delivers it when tx commits.
func (db *DB) notify(ctx context.Context, tx pgx.Tx, c indexChange) error {
	c.Origin = db.origin
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, indexChannel, string(b))
	return err
}

// repoGen is a repository's identity and generation as last known.
type repoGen struct {
	id  string
	gen int64
}

// WatchIndex keeps h's indexes current with the changes every replica
// commits, until ctx is done: a notified change refreshes its version at
// once (changes this process made are already applied and only recorded),
// and a repository whose generation moved without a notification heard is
// invalidated, within two polls. The listening connection is re-dialled
// after any failure, with a backoff up to a second; the polls go through
// the pool. poll <= 0 means DefaultIndexPoll.
//
// It returns once it listens and has read the current generations (start
// it before serving: the indexes loaded afterwards include them); the
// returned channel is closed when it has stopped.
func (db *DB) WatchIndex(ctx context.Context, h IndexHandler, poll time.Duration) <-chan struct{} {
	if poll <= 0 {
		poll = DefaultIndexPoll
	}
	w := &watcher{db: db, h: h, known: map[string]repoGen{}, pending: map[string]repoGen{}, notes: make(chan indexChange, 256),
		acks: acks{confirmed: make(chan struct{})}}
	// Listen first, then read the generations: no change falls between.
	// (If the database cannot be reached now, the listener keeps trying
	// and the polls catch up.)
	conn, _ := w.dial(ctx)
	w.poll(ctx, true)
	others := len(w.acks.others)
	done := make(chan struct{})
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		w.listen(ctx, conn)
	}()
	db.watchers.Add(1)
	go func() {
		defer close(done)
		defer func() { <-listening }()
		defer db.watchers.Add(-1)
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case c := <-w.notes:
				// Another replica is there: the memos are not used alone
				// until a poll finds this one alone again (memo.go). This
				// replica's own changes moved the epoch as they were made.
				if c.Origin != db.origin {
					db.setAlone(false)
					if c.Joined {
						w.acknowledge(ctx, c)
					}
				}
				if c.Ack != 0 {
					if c.Origin != db.origin {
						w.heard(c)
					}
					continue
				}
				w.apply(ctx, c)
			case <-t.C:
				// The answers kept before the poll are dropped: another
				// replica, now gone, may have written since they were
				// found, or a writer that does not listen.
				db.moved()
				w.poll(ctx, false)
			}
		}
	}()
	if others > 0 {
		// Other replicas listen: serve once they have acknowledged this
		// one (they no longer answer alone), or after two polls (a
		// release that does not acknowledge; the memos stay off).
		select {
		case <-w.acks.confirmed:
		case <-time.After(2 * poll):
		case <-ctx.Done():
		}
	}
	return done
}

type watcher struct {
	db *DB
	h  IndexHandler
	// known is each repository's generation the index includes; pending
	// a generation one poll saw differ from known, invalidated if the
	// next poll still sees it (its notification is not just late).
	known, pending map[string]repoGen
	notes          chan indexChange
	// listener is the backend pid of the listening connection, 0 while
	// there is none.
	listener atomic.Uint32
	// acks are the acknowledgements of this replica's announcement
	// (sharedepoch.go); only the loop touches them.
	acks acks
}

// apply handles one notification.
func (w *watcher) apply(ctx context.Context, c indexChange) {
	if c.Joined {
		return // only the memos care (the loop above)
	}
	if c.Creds {
		if c.Origin != w.db.origin {
			w.invalidateCredentials()
		}
		return
	}
	if c.Gen < 0 {
		delete(w.known, c.Repo)
		delete(w.pending, c.Repo)
		if c.Origin != w.db.origin {
			w.h.InvalidateIndex(c.Repo)
		}
		return
	}
	k, ok := w.known[c.Repo]
	if ok && k.id == c.RepoID && k.gen >= c.Gen {
		return // already seen (a poll got there first)
	}
	if c.Origin != w.db.origin {
		if c.Name == "" {
			w.h.InvalidateIndex(c.Repo)
		} else {
			w.h.RefreshIndexVersion(ctx, c.Repo, c.Name, c.Version)
		}
	}
	if ok && k.id == c.RepoID && c.Gen > k.gen+1 {
		// Changes between the known generation and this one went
		// unheard: reload.
		w.h.InvalidateIndex(c.Repo)
	}
	w.known[c.Repo] = repoGen{id: c.RepoID, gen: c.Gen}
	delete(w.pending, c.Repo)
}

// poll reads every repository's generation and invalidates the indexes
// that missed a change; first only records them.
func (w *watcher) poll(ctx context.Context, first bool) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w.countReplicas(qctx)
	rows, err := w.db.pool.Query(qctx, `SELECT name, id, generation FROM repositories`)
	if err != nil {
		return // the database is away; the next poll tries again
	}
	seen := map[string]repoGen{}
	var name string
	var g repoGen
	if _, err := pgx.ForEachRow(rows, []any{&name, &g.id, &g.gen}, func() error {
		seen[name] = g
		return nil
	}); err != nil {
		return
	}
	if first {
		w.known = seen
		return
	}
	for repo, g := range seen {
		k, ok := w.known[repo]
		if ok && k == g {
			delete(w.pending, repo)
			continue
		}
		if !ok && g.gen == 0 {
			// A new, empty repository: nothing to reload.
			w.known[repo] = g
			continue
		}
		if p, ok := w.pending[repo]; ok && p == g {
			w.h.InvalidateIndex(repo)
			w.known[repo] = g
			delete(w.pending, repo)
			continue
		}
		w.pending[repo] = g
	}
	for repo := range w.known {
		if _, ok := seen[repo]; !ok {
			// Deleted without a notification heard.
			w.h.InvalidateIndex(repo)
			delete(w.known, repo)
			delete(w.pending, repo)
		}
	}
}

// countReplicas lets the memos be used alone (memo.go) only while this
// replica listens and no other replica's listening connection is on the
// database, and with others only while each has acknowledged this
// replica (sharedepoch.go).
func (w *watcher) countReplicas(ctx context.Context) {
	pid := w.listener.Load()
	var others []uint32
	rows, err := w.db.pool.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1 AND pid <> $2`, listenerName, int64(pid))
	if err == nil {
		var o int64
		_, err = pgx.ForEachRow(rows, []any{&o}, func() error {
			others = append(others, uint32(o))
			return nil
		})
	}
	w.db.setAlone(err == nil && pid != 0 && len(others) == 0)
	if err != nil {
		w.db.shared.ok.Store(false)
		return
	}
	w.polled(ctx, others)
}

// listen forwards the notifications of conn (nil: none yet) and of the
// connections it re-dials after any failure, until ctx is done.
func (w *watcher) listen(ctx context.Context, conn *pgx.Conn) {
	backoff := 50 * time.Millisecond
	lost := false
	for ctx.Err() == nil {
		if conn == nil {
			var err error
			if conn, err = w.dial(ctx); err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, time.Second)
				lost = true
				continue
			}
		}
		if lost {
			// Listening again: revocations sent meanwhile went unheard.
			// (Index changes are caught by the generation check.)
			select {
			case w.notes <- indexChange{Creds: true}:
			case <-ctx.Done():
				return
			}
		}
		backoff = 50 * time.Millisecond
		w.forward(ctx, conn)
		w.listener.Store(0)
		w.db.setAlone(false)
		w.db.shared.ok.Store(false)
		_ = conn.Close(context.WithoutCancel(ctx))
		conn, lost = nil, true
	}
}

// dial opens the listening connection and LISTENs.
func (w *watcher) dial(ctx context.Context) (*pgx.Conn, error) {
	cfg := w.db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerName
	dctx, cancel := context.WithTimeout(ctx, defaultConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(dctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(dctx, `LISTEN `+indexChannel); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	// Tell the other replicas, which stop answering from their memos
	// alone, and acknowledge (sharedepoch.go).
	b, _ := json.Marshal(indexChange{Origin: w.db.origin, Joined: true, Pid: conn.PgConn().PID()})
	if _, err := conn.Exec(dctx, `SELECT pg_notify($1, $2)`, indexChannel, string(b)); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	w.listener.Store(conn.PgConn().PID())
	return conn, nil
}

// forward passes conn's notifications on until it fails.
func (w *watcher) forward(ctx context.Context, conn *pgx.Conn) {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		var c indexChange
		if json.Unmarshal([]byte(n.Payload), &c) != nil || (c.Repo == "" && !c.Creds && !c.Joined && c.Ack == 0) {
			continue
		}
		select {
		case w.notes <- c:
		case <-ctx.Done():
			return
		}
	}
}
