package bolt

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Replication buckets (schema 15), created at open.
const (
	// replicationsBucket: replication name → replicationRecord.
	replicationsBucket = "replications"
	// replicationTasksBucket: replication ID sep big-endian sequence →
	// replicationTaskRecord; the first key of a replication's prefix that
	// is not given up is the task that runs next.
	replicationTasksBucket = "replication_tasks"
)

var replicationBuckets = []string{replicationsBucket, replicationTasksBucket}

const prefixReplication = "rpl_"

type replicationRecord struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Source        string     `json:"source"`
	SourceID      string     `json:"source_id"`
	Target        string     `json:"target"`
	Username      string     `json:"username,omitempty"`
	Password      []byte     `json:"password,omitempty"`
	FilterName    string     `json:"filter_name,omitempty"`
	FilterVersion string     `json:"filter_version,omitempty"`
	On            []string   `json:"on"`
	CreatedBy     string     `json:"created_by,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	LastSuccessAt *time.Time `json:"last_success_at,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
}

type replicationTaskRecord struct {
	ID            string    `json:"id"`
	ReplicationID string    `json:"replication_id"`
	Seq           uint64    `json:"seq"`
	Op            string    `json:"op"`
	Chart         string    `json:"chart"`
	Version       string    `json:"version"`
	EventID       string    `json:"event_id,omitempty"`
	Attempts      int       `json:"attempts,omitempty"`
	LastError     string    `json:"last_error,omitempty"`
	Failed        bool      `json:"failed,omitempty"`
	NextAttemptAt time.Time `json:"next_attempt_at"`
	CreatedAt     time.Time `json:"created_at"`
}

func (r *replicationRecord) domain() *chartctl.Replication {
	out := &chartctl.Replication{ID: r.ID, Name: r.Name, Source: r.Source, SourceID: r.SourceID, Target: r.Target,
		Username: r.Username, Password: append([]byte(nil), r.Password...),
		Filter:    chartctl.ReplicationFilter{Name: r.FilterName, Version: r.FilterVersion},
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, LastError: r.LastError}
	if len(out.Password) == 0 {
		out.Password = nil
	}
	for _, o := range r.On {
		out.On = append(out.On, chartctl.ReplicationOp(o))
	}
	if r.LastSuccessAt != nil {
		t := *r.LastSuccessAt
		out.LastSuccessAt = &t
	}
	return out
}

func (t *replicationTaskRecord) domain() *chartctl.ReplicationTask {
	return &chartctl.ReplicationTask{ID: t.ID, ReplicationID: t.ReplicationID, Seq: t.Seq, Op: chartctl.ReplicationOp(t.Op),
		Chart: t.Chart, Version: t.Version, EventID: t.EventID, Attempts: t.Attempts, LastError: t.LastError, Failed: t.Failed,
		NextAttemptAt: t.NextAttemptAt, CreatedAt: t.CreatedAt}
}

func replicationNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Replication %q not found.", name)
}

func getReplication(tx *bbolt.Tx, name string) (*replicationRecord, error) {
	v := bucket(tx, replicationsBucket).Get([]byte(name))
	if v == nil {
		return nil, replicationNotFound(name)
	}
	return decode[replicationRecord](v)
}

func putReplication(tx *bbolt.Tx, r *replicationRecord) error {
	v, err := encode(r)
	if err != nil {
		return err
	}
	return bucket(tx, replicationsBucket).Put([]byte(r.Name), v)
}

func putReplicationTask(tx *bbolt.Tx, t *replicationTaskRecord) error {
	v, err := encode(t)
	if err != nil {
		return err
	}
	return bucket(tx, replicationTasksBucket).Put(seqKey(t.ReplicationID, t.Seq), v)
}

// queueReplicationTask appends t to its replication's queue, due at
// now.
func (db *DB) queueReplicationTask(tx *bbolt.Tx, t *chartctl.ReplicationTask) error {
	seq, err := bucket(tx, replicationTasksBucket).NextSequence()
	if err != nil {
		return err
	}
	now := db.now()
	t.Seq, t.ID, t.NextAttemptAt, t.CreatedAt = seq, fmt.Sprintf("rpt_%016x", seq), now, now
	return putReplicationTask(tx, &replicationTaskRecord{ID: t.ID, ReplicationID: t.ReplicationID, Seq: seq, Op: string(t.Op),
		Chart: t.Chart, Version: t.Version, EventID: t.EventID, NextAttemptAt: now, CreatedAt: now})
}

// queueReplicationTasks queues, for each event, the task every
// replication asks for it (writeChange calls it with the change's
// events).
func (db *DB) queueReplicationTasks(tx *bbolt.Tx, events []*chartctl.Event) error {
	var reps []*chartctl.Replication
	if err := bucket(tx, replicationsBucket).ForEach(func(_, v []byte) error {
		r, err := decode[replicationRecord](v)
		if err == nil {
			reps = append(reps, r.domain())
		}
		return err
	}); err != nil {
		return err
	}
	for _, e := range events {
		for _, r := range reps {
			if t, ok := r.Task(e); ok {
				if err := db.queueReplicationTask(tx, t); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// deleteReplicationTasks deletes every task of replication id.
func deleteReplicationTasks(tx *bbolt.Tx, id string) error {
	b := bucket(tx, replicationTasksBucket)
	var keys [][]byte
	if err := scanPrefix(b, prefix(id), func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// deleteRepoReplications deletes the replications whose source is repo
// (CONTRACT §18 decision 2), with their tasks.
func deleteRepoReplications(tx *bbolt.Tx, repoID string) error {
	b := bucket(tx, replicationsBucket)
	var gone []*replicationRecord
	if err := b.ForEach(func(_, v []byte) error {
		r, err := decode[replicationRecord](v)
		if err == nil && r.SourceID == repoID {
			gone = append(gone, r)
		}
		return err
	}); err != nil {
		return err
	}
	for _, r := range gone {
		if err := deleteReplicationTasks(tx, r.ID); err != nil {
			return err
		}
		if err := b.Delete([]byte(r.Name)); err != nil {
			return err
		}
	}
	return nil
}

// CreateReplication stores r, bound to its source repository.
func (db *DB) CreateReplication(ctx context.Context, r *chartctl.Replication) error {
	return wrap("create replication", db.update(ctx, func(tx *bbolt.Tx) error {
		if bucket(tx, replicationsBucket).Get([]byte(r.Name)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "Replication %q already exists.", r.Name)
		}
		repo, err := getRepo(tx, r.Source)
		if err != nil {
			return err
		}
		if r.SourceID != "" && r.SourceID != repo.ID {
			return repoNotFound(r.Source)
		}
		if r.ID == "" {
			id, err := db.newID(prefixReplication)
			if err != nil {
				return err
			}
			r.ID = id
		}
		if r.CreatedAt.IsZero() {
			r.CreatedAt = db.now()
		}
		// Kept to the microsecond, as every engine keeps times.
		r.CreatedAt = r.CreatedAt.UTC().Truncate(time.Microsecond)
		r.SourceID = repo.ID
		return putReplication(tx, replicationToRecord(r))
	}))
}

func replicationToRecord(r *chartctl.Replication) *replicationRecord {
	rec := &replicationRecord{ID: r.ID, Name: r.Name, Source: r.Source, SourceID: r.SourceID, Target: r.Target,
		Username: r.Username, Password: r.Password, FilterName: r.Filter.Name, FilterVersion: r.Filter.Version,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(), LastError: r.LastError, On: []string{}}
	for _, o := range r.On {
		rec.On = append(rec.On, string(o))
	}
	if r.LastSuccessAt != nil {
		t := r.LastSuccessAt.UTC()
		rec.LastSuccessAt = &t
	}
	return rec
}

// Replication returns one replication.
func (db *DB) Replication(ctx context.Context, name string) (*chartctl.Replication, error) {
	var out *chartctl.Replication
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := getReplication(tx, name)
		if err == nil {
			out = r.domain()
		}
		return err
	})
	return out, wrap("get replication", err)
}

// Replications returns every replication, by name.
func (db *DB) Replications(ctx context.Context) ([]*chartctl.Replication, error) {
	out := []*chartctl.Replication{}
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, replicationsBucket).ForEach(func(_, v []byte) error {
			r, err := decode[replicationRecord](v)
			if err == nil {
				out = append(out, r.domain())
			}
			return err
		})
	})
	return out, wrap("list replications", err)
}

// DeleteReplication deletes a replication and its tasks.
func (db *DB) DeleteReplication(ctx context.Context, name string) error {
	return wrap("delete replication", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getReplication(tx, name)
		if err != nil {
			return err
		}
		if err := deleteReplicationTasks(tx, r.ID); err != nil {
			return err
		}
		return bucket(tx, replicationsBucket).Delete([]byte(name))
	}))
}

// EnqueueReplicationTasks queues tasks behind the replication's pending
// ones.
func (db *DB) EnqueueReplicationTasks(ctx context.Context, name string, tasks []*chartctl.ReplicationTask) error {
	return wrap("queue replication tasks", db.update(ctx, func(tx *bbolt.Tx) error {
		r, err := getReplication(tx, name)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			t.ReplicationID = r.ID
			if err := db.queueReplicationTask(tx, t); err != nil {
				return err
			}
		}
		return nil
	}))
}

// ClaimReplicationTasks claims the due head task of each replication's
// queue.
func (db *DB) ClaimReplicationTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*chartctl.ReplicationTask, error) {
	// The replicator asks after every change, and a bbolt commit syncs
	// twice even when it writes nothing: look first, commit only to claim.
	var due bool
	if err := db.db.View(func(tx *bbolt.Tx) error {
		found, err := dueReplicationTasks(tx, now, limit)
		due = len(found) > 0
		return err
	}); err != nil || !due {
		return nil, wrap("claim replication tasks", err)
	}
	var out []*chartctl.ReplicationTask
	err := db.db.Update(func(tx *bbolt.Tx) error {
		found, err := dueReplicationTasks(tx, now, limit)
		if err != nil {
			return err
		}
		for _, t := range found {
			t.NextAttemptAt = now.Add(lease).UTC()
			if err := putReplicationTask(tx, t); err != nil {
				return err
			}
			out = append(out, t.domain())
		}
		return nil
	})
	return out, wrap("claim replication tasks", err)
}

// RenewReplicationTasks postpones the next attempt of the claimed tasks
// to until, skipping those given up or gone.
func (db *DB) RenewReplicationTasks(ctx context.Context, tasks []*chartctl.ReplicationTask, until time.Time) error {
	if len(tasks) == 0 {
		return nil
	}
	return wrap("renew replication tasks", db.update(ctx, func(tx *bbolt.Tx) error {
		b := bucket(tx, replicationTasksBucket)
		for _, task := range tasks {
			v := b.Get(seqKey(task.ReplicationID, task.Seq))
			if v == nil {
				continue
			}
			t, err := decode[replicationTaskRecord](v)
			if err != nil {
				return err
			}
			if t.Failed {
				continue
			}
			t.NextAttemptAt = until.UTC()
			if err := putReplicationTask(tx, t); err != nil {
				return err
			}
		}
		return nil
	}))
}

// dueReplicationTasks returns, for up to limit replications in ID order,
// the first task of each whose next attempt is due by now (a replication's
// tasks run in order, so only its first unfailed task counts).
func dueReplicationTasks(tx *bbolt.Tx, now time.Time, limit int) ([]*replicationTaskRecord, error) {
	var ids []string
	if err := bucket(tx, replicationsBucket).ForEach(func(_, v []byte) error {
		r, err := decode[replicationRecord](v)
		if err == nil {
			ids = append(ids, r.ID)
		}
		return err
	}); err != nil {
		return nil, err
	}
	sort.Strings(ids)
	b := bucket(tx, replicationTasksBucket)
	var due []*replicationTaskRecord
	for _, id := range ids {
		if len(due) >= limit {
			break
		}
		c := b.Cursor()
		pfx := prefix(id)
		for k, v := c.Seek(pfx); k != nil && bytes.HasPrefix(k, pfx); k, v = c.Next() {
			t, err := decode[replicationTaskRecord](v)
			if err != nil {
				return nil, err
			}
			if t.Failed {
				continue
			}
			if !t.NextAttemptAt.After(now) {
				due = append(due, t)
			}
			break
		}
	}
	return due, nil
}

// RecordReplicationResults records attempts at tasks.
func (db *DB) RecordReplicationResults(ctx context.Context, results []chartctl.ReplicationResult) error {
	return wrap("record replication results", db.update(ctx, func(tx *bbolt.Tx) error {
		b := bucket(tx, replicationTasksBucket)
		byID := map[string]*replicationRecord{}
		if err := bucket(tx, replicationsBucket).ForEach(func(_, v []byte) error {
			r, err := decode[replicationRecord](v)
			if err == nil {
				byID[r.ID] = r
			}
			return err
		}); err != nil {
			return err
		}
		changed := map[string]bool{}
		for _, res := range results {
			rep := byID[res.ReplicationID]
			var seq uint64
			if rep == nil || !strings.HasPrefix(res.TaskID, "rpt_") {
				continue
			}
			if _, err := fmt.Sscanf(res.TaskID, "rpt_%016x", &seq); err != nil {
				continue
			}
			k := seqKey(rep.ID, seq)
			v := b.Get(k)
			if v == nil {
				continue
			}
			at := res.At.UTC().Truncate(time.Microsecond)
			if res.Error == "" {
				if err := b.Delete(k); err != nil {
					return err
				}
				rep.LastSuccessAt, rep.LastError = &at, ""
			} else {
				t, err := decode[replicationTaskRecord](v)
				if err != nil {
					return err
				}
				t.Attempts++
				t.LastError, t.Failed, t.NextAttemptAt = res.Error, res.Failed, res.Next.UTC()
				if err := putReplicationTask(tx, t); err != nil {
					return err
				}
				rep.LastError = res.Error
			}
			changed[rep.ID] = true
		}
		for id := range changed {
			if err := putReplication(tx, byID[id]); err != nil {
				return err
			}
		}
		return nil
	}))
}

// ReplicationStatus counts a replication's pending and failed tasks.
func (db *DB) ReplicationStatus(ctx context.Context, name string) (chartctl.ReplicationStatus, error) {
	var st chartctl.ReplicationStatus
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := getReplication(tx, name)
		if err != nil {
			return err
		}
		st.LastError = r.LastError
		if r.LastSuccessAt != nil {
			t := *r.LastSuccessAt
			st.LastSuccessAt = &t
		}
		return scanPrefix(bucket(tx, replicationTasksBucket), prefix(r.ID), func(_, v []byte) error {
			t, err := decode[replicationTaskRecord](v)
			if err != nil {
				return err
			}
			if t.Failed {
				st.Failed++
			} else {
				st.Pending++
			}
			return nil
		})
	})
	return st, wrap("replication status", err)
}
