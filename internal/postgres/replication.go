package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

const prefixReplication = "rpl_"

const replicationCols = `id, name, source, source_id, target, username, password, filter_name, filter_version, ops,
	created_by, created_at, last_success_at, last_error`

func scanReplication(row pgx.Row) (*chartctl.Replication, error) {
	var (
		r   chartctl.Replication
		ops []string
	)
	if err := row.Scan(&r.ID, &r.Name, &r.Source, &r.SourceID, &r.Target, &r.Username, &r.Password, &r.Filter.Name, &r.Filter.Version,
		&ops, &r.CreatedBy, &r.CreatedAt, &r.LastSuccessAt, &r.LastError); err != nil {
		return nil, err
	}
	if len(r.Password) == 0 {
		r.Password = nil
	}
	for _, o := range ops {
		r.On = append(r.On, chartctl.ReplicationOp(o))
	}
	r.CreatedAt = r.CreatedAt.UTC()
	if r.LastSuccessAt != nil {
		t := r.LastSuccessAt.UTC()
		r.LastSuccessAt = &t
	}
	return &r, nil
}

const replicationTaskCols = `seq, replication_id, op, chart, version, event_id, attempts, last_error, failed, next_attempt_at, created_at`

func scanReplicationTask(row pgx.Row) (*chartctl.ReplicationTask, error) {
	var (
		t   chartctl.ReplicationTask
		seq int64
		op  string
	)
	if err := row.Scan(&seq, &t.ReplicationID, &op, &t.Chart, &t.Version, &t.EventID, &t.Attempts, &t.LastError, &t.Failed,
		&t.NextAttemptAt, &t.CreatedAt); err != nil {
		return nil, err
	}
	t.Seq, t.ID, t.Op = uint64(seq), fmt.Sprintf("rpt_%016x", seq), chartctl.ReplicationOp(op)
	t.NextAttemptAt, t.CreatedAt = t.NextAttemptAt.UTC(), t.CreatedAt.UTC()
	return &t, nil
}

func replicationNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Replication %q not found.", name)
}

// queueReplicationTasks queues, in tx, the task every replication asks
// for each of events, of reps, the replications (writeChange calls it).
func (db *DB) queueReplicationTasks(ctx context.Context, tx pgx.Tx, events []*chartctl.Event, reps []*chartctl.Replication) error {
	for _, e := range events {
		for _, r := range reps {
			if t, ok := r.Task(e); ok {
				if err := db.insertReplicationTask(ctx, tx, t); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (db *DB) insertReplicationTask(ctx context.Context, tx pgx.Tx, t *chartctl.ReplicationTask) error {
	now := db.now()
	var seq int64
	if err := tx.QueryRow(ctx, `INSERT INTO replication_tasks (replication_id, op, chart, version, event_id, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING seq`, t.ReplicationID, string(t.Op), text(t.Chart), text(t.Version), text(t.EventID), now).Scan(&seq); err != nil {
		return err
	}
	t.Seq, t.ID, t.NextAttemptAt, t.CreatedAt = uint64(seq), fmt.Sprintf("rpt_%016x", seq), now, now
	return nil
}

// CreateReplication stores r, bound to its source repository.
func (db *DB) CreateReplication(ctx context.Context, r *chartctl.Replication) error {
	if err := db.fill(&r.ID, prefixReplication, &r.CreatedAt); err != nil {
		return err
	}
	r.CreatedAt = r.CreatedAt.UTC().Truncate(time.Microsecond)
	err := db.mutate(ctx, "create replication", func(tx pgx.Tx) error {
		id, err := lockRepo(ctx, tx, r.Source, false)
		if err != nil {
			return err
		}
		if r.SourceID != "" && r.SourceID != id {
			return repoNotFound(r.Source)
		}
		ops := []string{}
		for _, o := range r.On {
			ops = append(ops, string(o))
		}
		_, err = tx.Exec(ctx, `INSERT INTO replications (id, name, source, source_id, target, username, password, filter_name,
			filter_version, ops, created_by, created_at, last_success_at, last_error)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			r.ID, text(r.Name), text(r.Source), id, text(r.Target), text(r.Username), nonNilBytes(r.Password), text(r.Filter.Name),
			text(r.Filter.Version), ops, text(r.CreatedBy), r.CreatedAt, r.LastSuccessAt, text(r.LastError))
		if err == nil {
			r.SourceID = id
		}
		return err
	})
	if isUnique(err, "replications_name_key") || isUnique(err, "replications_pkey") {
		return chartctl.Errorf(chartctl.ECONFLICT, "Replication %q already exists.", r.Name)
	}
	return err
}

// Replication returns one replication.
func (db *DB) Replication(ctx context.Context, name string) (*chartctl.Replication, error) {
	r, err := scanReplication(db.pool.QueryRow(ctx, `SELECT `+replicationCols+` FROM replications WHERE name = $1`, text(name)))
	if err == pgx.ErrNoRows {
		return nil, replicationNotFound(name)
	}
	return r, db.wrap("get replication", err)
}

// Replications returns every replication, by name.
func (db *DB) Replications(ctx context.Context) ([]*chartctl.Replication, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+replicationCols+` FROM replications ORDER BY name`)
	if err != nil {
		return nil, db.wrap("list replications", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Replication, error) { return scanReplication(r) })
	if out == nil {
		out = []*chartctl.Replication{}
	}
	return out, db.wrap("list replications", err)
}

// DeleteReplication deletes a replication and (by cascade) its tasks.
func (db *DB) DeleteReplication(ctx context.Context, name string) error {
	return db.mutate(ctx, "delete replication", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM replications WHERE name = $1`, text(name))
		if err == nil && tag.RowsAffected() == 0 {
			return replicationNotFound(name)
		}
		return err
	})
}

// EnqueueReplicationTasks queues tasks behind the replication's pending
// ones.
func (db *DB) EnqueueReplicationTasks(ctx context.Context, name string, tasks []*chartctl.ReplicationTask) error {
	return db.mutate(ctx, "queue replication tasks", func(tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `SELECT id FROM replications WHERE name = $1 FOR NO KEY UPDATE`, text(name)).Scan(&id)
		if err == pgx.ErrNoRows {
			return replicationNotFound(name)
		}
		if err != nil {
			return err
		}
		for _, t := range tasks {
			t.ReplicationID = id
			if err := db.insertReplicationTask(ctx, tx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClaimReplicationTasks claims the due head task of each replication's
// queue. The replication rows are locked (SKIP LOCKED), so two replicas
// claiming at once each take other replications' heads.
func (db *DB) ClaimReplicationTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*chartctl.ReplicationTask, error) {
	if limit <= 0 {
		return nil, nil
	}
	now = now.UTC()
	var out []*chartctl.ReplicationTask
	err := db.tx(ctx, "claim replication tasks", func(tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT id FROM replications ORDER BY id FOR NO KEY UPDATE SKIP LOCKED`)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `WITH heads AS (
				SELECT h.seq FROM unnest($1::text[]) r(id) CROSS JOIN LATERAL (SELECT seq, next_attempt_at FROM replication_tasks
					WHERE replication_id = r.id AND NOT failed ORDER BY seq LIMIT 1) h
				WHERE h.next_attempt_at <= $2 ORDER BY h.seq LIMIT $4
			)
			UPDATE replication_tasks t SET next_attempt_at = $3 FROM heads WHERE t.seq = heads.seq
			RETURNING t.seq, t.replication_id, t.op, t.chart, t.version, t.event_id, t.attempts, t.last_error,
				t.failed, t.next_attempt_at, t.created_at`,
			ids, now, now.Add(lease).Truncate(time.Microsecond), limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.ReplicationTask, error) { return scanReplicationTask(r) })
		return err
	})
	return out, err
}

// RenewReplicationTasks postpones the next attempt of the claimed tasks
// to until, skipping those given up or gone.
func (db *DB) RenewReplicationTasks(ctx context.Context, tasks []*chartctl.ReplicationTask, until time.Time) error {
	if len(tasks) == 0 {
		return nil
	}
	seqs := make([]int64, len(tasks))
	for i, t := range tasks {
		seqs[i] = int64(t.Seq)
	}
	return db.mutate(ctx, "renew replication tasks", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE replication_tasks SET next_attempt_at = $2 WHERE seq = ANY($1) AND NOT failed`,
			seqs, until.UTC().Truncate(time.Microsecond))
		return err
	})
}

// RecordReplicationResults records attempts at tasks.
func (db *DB) RecordReplicationResults(ctx context.Context, results []chartctl.ReplicationResult) error {
	if len(results) == 0 {
		return nil
	}
	return db.mutate(ctx, "record replication results", func(tx pgx.Tx) error {
		for _, res := range results {
			seq, ok := parseSeq(res.TaskID, "rpt_")
			if !ok {
				continue
			}
			at := res.At.UTC().Truncate(time.Microsecond)
			if res.Error == "" {
				tag, err := tx.Exec(ctx, `DELETE FROM replication_tasks WHERE seq = $1 AND replication_id = $2`, seq, res.ReplicationID)
				if err != nil {
					return err
				}
				if tag.RowsAffected() > 0 {
					if _, err := tx.Exec(ctx, `UPDATE replications SET last_success_at = $2, last_error = '' WHERE id = $1`, res.ReplicationID, at); err != nil {
						return err
					}
				}
				continue
			}
			tag, err := tx.Exec(ctx, `UPDATE replication_tasks SET attempts = attempts + 1, last_error = $3, failed = $4, next_attempt_at = $5
				WHERE seq = $1 AND replication_id = $2`, seq, res.ReplicationID, text(res.Error), res.Failed, res.Next.UTC().Truncate(time.Microsecond))
			if err != nil {
				return err
			}
			if tag.RowsAffected() > 0 {
				if _, err := tx.Exec(ctx, `UPDATE replications SET last_error = $2 WHERE id = $1`, res.ReplicationID, text(res.Error)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// ReplicationStatus counts a replication's pending and failed tasks.
func (db *DB) ReplicationStatus(ctx context.Context, name string) (chartctl.ReplicationStatus, error) {
	var st chartctl.ReplicationStatus
	err := db.readTx(ctx, "replication status", func(tx pgx.Tx) error {
		st = chartctl.ReplicationStatus{}
		var id string
		err := tx.QueryRow(ctx, `SELECT id, last_success_at, last_error FROM replications WHERE name = $1`, text(name)).Scan(&id, &st.LastSuccessAt, &st.LastError)
		if err == pgx.ErrNoRows {
			return replicationNotFound(name)
		}
		if err != nil {
			return err
		}
		if st.LastSuccessAt != nil {
			t := st.LastSuccessAt.UTC()
			st.LastSuccessAt = &t
		}
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT failed), count(*) FILTER (WHERE failed) FROM replication_tasks
			WHERE replication_id = $1`, id).Scan(&st.Pending, &st.Failed)
	})
	return st, err
}
