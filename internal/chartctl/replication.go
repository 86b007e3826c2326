package chartctl

import (
	"context"
	"path"
	"strings"
	"time"
)

// ReplicationOp is what one replication task does at the target.
type ReplicationOp string

// Replication operations, and the values of Replication.On.
const (
	// ReplicationPush copies a chart version (archive, provenance file,
	// OCI referrers) to the target.
	ReplicationPush ReplicationOp = "push"
	// ReplicationDelete deletes a chart version at the target.
	ReplicationDelete ReplicationOp = "delete"
)

// eventChartReleased is the event of a held version's release (CONTRACT
// §18 decision 3): replication copies a version on chart.pushed, and a
// held one when it is released (never while it is held).
const eventChartReleased EventType = "chart.released"

// ReplicationFilter narrows the versions a replication copies; empty
// fields match everything.
type ReplicationFilter struct {
	// Name is a glob (path.Match) over chart names.
	Name string
	// Version is a SemVer range ("^1.2", ">=2.0.0 <3"); the application
	// layer checks it, stores keep it as text.
	Version string
}

// Replication keeps a target registry in step with a source repository
// (CONTRACT §18 "Federation"): every chart version pushed to Source (and,
// with ReplicationDelete in On, every deletion) is queued as a task the
// moment its event is written, in the same transaction, so nothing is
// lost while the target is down.
type Replication struct {
	ID   string
	Name string
	// Source names the repository replicated; SourceID binds the
	// replication to it (decision 2): DeleteRepository deletes it.
	Source   string
	SourceID string
	// Target is oci://HOST/PATH or a chartctl https://HOST/helm/REPO.
	Target string
	// Username and Password (sealed by the application layer; stores keep
	// opaque bytes) are the target's credential.
	Username string
	Password []byte
	Filter   ReplicationFilter
	// On lists the ReplicationOp values replicated as they happen.
	On        []ReplicationOp
	CreatedBy string
	CreatedAt time.Time
	// LastSuccessAt is when a task last completed; LastError the error of
	// the last failed attempt, cleared by the next success.
	LastSuccessAt *time.Time
	LastError     string
}

// Replicates reports whether r replicates op as it happens.
func (r *Replication) Replicates(op ReplicationOp) bool {
	for _, o := range r.On {
		if o == op {
			return true
		}
	}
	return false
}

// MatchesName reports whether chart passes the filter's name glob.
func (r *Replication) MatchesName(chart string) bool {
	if r.Filter.Name == "" {
		return true
	}
	ok, err := path.Match(r.Filter.Name, chart)
	return err == nil && ok
}

// Task returns the task event e asks of r, if any: a push for
// chart.pushed and chart.released, a delete for chart.deleted, of a
// chart of r's source repository whose name passes the filter, when r
// replicates that operation. (The version range is checked when the
// task runs.)
func (r *Replication) Task(e *Event) (*ReplicationTask, bool) {
	if e.Repository != r.Source {
		return nil, false
	}
	var op ReplicationOp
	switch e.Type {
	case EventChartPushed, eventChartReleased:
		op = ReplicationPush
	case EventChartDeleted:
		op = ReplicationDelete
	default:
		return nil, false
	}
	chart, version, ok := strings.Cut(e.Subject, "/")
	if !ok || !r.Replicates(op) || !r.MatchesName(chart) {
		return nil, false
	}
	return &ReplicationTask{ReplicationID: r.ID, Op: op, Chart: chart, Version: version, EventID: e.ID}, true
}

// ReplicationTask is one chart version to push to, or delete at, a
// replication's target. A replication's tasks run in Seq order: a
// pending one holds back the later ones (a delete never overtakes the
// push it undoes).
type ReplicationTask struct {
	ID            string
	ReplicationID string
	Seq           uint64
	Op            ReplicationOp
	Chart         string
	Version       string
	// EventID is the event that queued the task ("" for a run).
	EventID string
	// Attempts counts the failed attempts so far; LastError is the last
	// one's error.
	Attempts  int
	LastError string
	// Failed: the task was given up (it no longer holds back the queue).
	Failed bool
	// NextAttemptAt is when the task is due.
	NextAttemptAt time.Time
	CreatedAt     time.Time
}

// ReplicationResult is how an attempt at a task ended, for
// RecordReplicationResults.
type ReplicationResult struct {
	ReplicationID string
	TaskID        string
	// At is when the attempt ended.
	At time.Time
	// Error is "" on success: the task is removed. Otherwise the attempt
	// is counted and the task is due again at Next, or given up (Failed).
	Error  string
	Next   time.Time
	Failed bool
}

// ReplicationStatus is how a replication stands: tasks waiting (or being
// retried), tasks given up, its last success and last error.
type ReplicationStatus struct {
	Pending       int
	Failed        int
	LastSuccessAt *time.Time
	LastError     string
}

// ReplicationStore keeps replications and their task queues. Mutating
// methods write the Change their context carries. Every other mutating
// Store method that writes events also queues, in the same transaction,
// the task each replication's Task asks for each event.
type ReplicationStore interface {
	// CreateReplication stores r, filling ID, CreatedAt and SourceID.
	// Returns ENOTFOUND when no repository is named r.Source (or it has
	// another ID than r.SourceID, when set), ECONFLICT when a replication
	// is named r.Name.
	CreateReplication(ctx context.Context, r *Replication) error
	// Replication returns one replication. Returns ENOTFOUND.
	Replication(ctx context.Context, name string) (*Replication, error)
	// Replications returns every replication, by name.
	Replications(ctx context.Context) ([]*Replication, error)
	// DeleteReplication deletes a replication and its tasks. Returns
	// ENOTFOUND.
	DeleteReplication(ctx context.Context, name string) error
	// EnqueueReplicationTasks queues tasks (a run copying what the source
	// holds) behind the replication's pending ones, due at once, filling
	// their IDs. Returns ENOTFOUND.
	EnqueueReplicationTasks(ctx context.Context, name string, tasks []*ReplicationTask) error
	// ClaimReplicationTasks returns, for at most limit replications, the
	// task at the head of its queue (its oldest task not given up) when
	// it is due at now, postponing it by lease so that no other caller
	// claims it meanwhile. Engines shared by replicas make this exclusive.
	ClaimReplicationTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*ReplicationTask, error)
	// RenewReplicationTasks postpones the next attempt of claimed tasks
	// (by ReplicationID and Seq) to until, so that no other caller claims
	// them while they run; tasks given up or gone meanwhile are skipped.
	RenewReplicationTasks(ctx context.Context, tasks []*ReplicationTask, until time.Time) error
	// RecordReplicationResults records attempts: a success removes its
	// task and sets the replication's LastSuccessAt (clearing LastError);
	// a failure counts the attempt, sets the task's and the replication's
	// LastError and its next attempt, or gives the task up. Results of
	// tasks that no longer exist are skipped.
	RecordReplicationResults(ctx context.Context, results []ReplicationResult) error
	// ReplicationStatus counts a replication's pending and failed tasks.
	// Returns ENOTFOUND.
	ReplicationStatus(ctx context.Context, name string) (ReplicationStatus, error)
}
