package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
)

const prefixWebhook = "wh_"

// mutate runs fn in a transaction (see tx) and then writes the Change ctx
// carries in the same transaction: the mutating methods of the Store go
// through it.
func (db *DB) mutate(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	return db.tx(ctx, op, func(tx pgx.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	})
}

// writeChange writes the change ctx carries inside tx: its audit entries,
// and, when events is set, its events with a pending delivery to every
// active webhook that wants each. It runs inside the change's transaction,
// which may hold row locks (a repository's usage), so it sends its
// statements together: one round trip for the entries, the events and the
// reads of the active webhooks and the replications, and one more only
// when a webhook wants an event or a replication a task.
func (db *DB) writeChange(ctx context.Context, tx pgx.Tx, events bool) error {
	return db.writeChangeAfter(ctx, tx, events, nil, nil)
}

// writeChangeAfter is writeChange after lead, statements of the write
// itself (nil: none), which go in the same round trip as the change's
// entries, events and the reads of what the events go to; readLead reads
// their answers, which come first.
func (db *DB) writeChangeAfter(ctx context.Context, tx pgx.Tx, events bool, lead *pgx.Batch, readLead func(pgx.BatchResults) error) error {
	c := chartctl.ChangeFrom(ctx)
	targeted := c != nil && events && len(c.Events) > 0
	b := lead
	if b == nil {
		b = &pgx.Batch{}
	}
	if targeted {
		queueChangeTargets(b)
	}
	if c != nil {
		db.queueAudit(b, c.Audit)
		if events {
			for _, e := range c.Events {
				if err := queueEvent(b, e); err != nil {
					return err
				}
			}
		}
	}
	if b.Len() == 0 {
		return nil
	}
	res := tx.SendBatch(ctx, b)
	hooks, reps, err := readChange(res, c, targeted, events, readLead)
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	if err != nil || !targeted {
		return err
	}
	if err := db.queueDeliveries(ctx, tx, c.Events, hooks); err != nil {
		return err
	}
	return db.queueReplicationTasks(ctx, tx, c.Events, reps)
}

// readChange reads the answers of writeChangeAfter's batch, in its order:
// the lead's (readLead), the webhooks and replications when targeted, the
// audit entries' sequence numbers (which become their IDs) and the
// events'.
func readChange(res pgx.BatchResults, c *chartctl.Change, targeted, events bool, readLead func(pgx.BatchResults) error) (hooks []*chartctl.Webhook, reps []*chartctl.Replication, err error) {
	if readLead != nil {
		if err := readLead(res); err != nil {
			return nil, nil, err
		}
	}
	if targeted {
		if hooks, reps, err = readChangeTargets(res); err != nil {
			return nil, nil, err
		}
	}
	if c == nil {
		return hooks, reps, nil
	}
	for _, e := range c.Audit {
		var seq int64
		if err := res.QueryRow().Scan(&seq); err != nil {
			return nil, nil, err
		}
		e.ID = fmt.Sprintf("aud_%016x", seq)
	}
	if events {
		for range c.Events {
			if _, err := res.Exec(); err != nil {
				return nil, nil, err
			}
		}
	}
	return hooks, reps, nil
}

// queueChangeTargets adds to b the reads of what a change's events go
// to: the active webhooks and the replications (readChangeTargets).
func queueChangeTargets(b *pgx.Batch) {
	b.Queue(`SELECT ` + webhookCols + ` FROM webhooks WHERE active ORDER BY id`)
	b.Queue(`SELECT ` + replicationCols + ` FROM replications ORDER BY name`)
}

// readChangeTargets reads the answers of queueChangeTargets's statements,
// the next ones of res.
func readChangeTargets(res pgx.BatchResults) ([]*chartctl.Webhook, []*chartctl.Replication, error) {
	rows, err := res.Query()
	if err != nil {
		return nil, nil, err
	}
	hooks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Webhook, error) { return scanWebhook(r) })
	if err != nil {
		return nil, nil, err
	}
	if rows, err = res.Query(); err != nil {
		return nil, nil, err
	}
	reps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Replication, error) { return scanReplication(r) })
	if err != nil {
		return nil, nil, err
	}
	return hooks, reps, nil
}

// queueDeliveries stores a pending delivery of each of events to each of
// hooks that wants it, in one round trip (none when no hook wants one).
func (db *DB) queueDeliveries(ctx context.Context, tx pgx.Tx, events []*chartctl.Event, hooks []*chartctl.Webhook) error {
	b := &pgx.Batch{}
	now := db.now()
	for _, e := range events {
		var ids []string
		for _, w := range hooks {
			if w.Wants(e) {
				ids = append(ids, w.ID)
			}
		}
		if len(ids) > 0 {
			b.Queue(`INSERT INTO deliveries (webhook_id, event_id, state, next_attempt_at, created_at)
				SELECT w, $2, $3, $4, $4 FROM unnest($1::text[]) WITH ORDINALITY AS t(w, n) ORDER BY n`,
				ids, e.ID, string(chartctl.DeliveryPending), now)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// queueAudit adds the inserts of entries to b; each answers its seq.
func (db *DB) queueAudit(b *pgx.Batch, entries []*chartctl.AuditEntry) {
	for _, e := range entries {
		if e.Time.IsZero() {
			e.Time = db.now()
		}
		a := e.Actor
		b.Queue(`INSERT INTO audit_log (time, actor_user_id, actor_email, actor_credential_id,
			actor_credential_kind, actor_client_ip, actor_request_id, action, target, outcome, organization,
			actor_robot, actor_publisher)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING seq`,
			e.Time.UTC(), text(a.UserID), text(a.Email), text(a.CredentialID), text(a.CredentialKind), text(a.ClientIP),
			text(a.RequestID), text(e.Action), text(e.Target), string(e.Outcome), text(e.Organization),
			text(a.Robot), text(a.Publisher))
	}
}

// queueEvent adds the insert of e to b.
func queueEvent(b *pgx.Batch, e *chartctl.Event) error {
	if e.ID == "" {
		return fmt.Errorf("event without an ID")
	}
	var data []byte
	if len(e.Data) > 0 {
		data = e.Data
	}
	b.Queue(`INSERT INTO events (id, type, time, repository, organization, source, subject, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET type = EXCLUDED.type, time = EXCLUDED.time, repository = EXCLUDED.repository,
			organization = EXCLUDED.organization, source = EXCLUDED.source, subject = EXCLUDED.subject, data = EXCLUDED.data`,
		e.ID, string(e.Type), e.Time.UTC(), text(e.Repository), text(e.Organization), text(e.Source), text(e.Subject), data)
	return nil
}

func putEvent(ctx context.Context, tx pgx.Tx, e *chartctl.Event) error {
	b := &pgx.Batch{}
	if err := queueEvent(b, e); err != nil {
		return err
	}
	return tx.SendBatch(ctx, b).Close()
}

// deliveryCols are the columns scanDelivery reads, the event's included
// (deliveries LEFT JOIN events e).
const deliveryCols = `d.seq, d.webhook_id, d.state, d.attempts, d.next_attempt_at, d.created_at, d.event_id,
	e.type, e.time, e.repository, e.organization, e.source, e.subject, e.data`

func deliveryID(seq int64) string { return fmt.Sprintf("dlv_%016x", seq) }

// parseSeq reads the sequence number out of an ID "<prefix><16 hex>"; ok
// is false for anything else.
func parseSeq(id, prefix string) (int64, bool) {
	var seq uint64
	rest, found := strings.CutPrefix(id, prefix)
	if !found || len(rest) != 16 {
		return 0, false
	}
	if _, err := fmt.Sscanf(rest, "%016x", &seq); err != nil || seq == 0 || seq > 1<<62 {
		return 0, false
	}
	return int64(seq), true
}

type attemptRecord struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	DurationNS int64     `json:"duration_ns"`
	Excerpt    string    `json:"excerpt,omitempty"`
}

func scanDelivery(row pgx.Row) (*chartctl.Delivery, error) {
	var (
		d        chartctl.Delivery
		seq      int64
		state    string
		attempts []byte
		eventID  string
		typ      *string
		at       *time.Time
		repo     *string
		org      *string
		source   *string
		subject  *string
		data     []byte
	)
	if err := row.Scan(&seq, &d.WebhookID, &state, &attempts, &d.NextAttemptAt, &d.CreatedAt, &eventID,
		&typ, &at, &repo, &org, &source, &subject, &data); err != nil {
		return nil, err
	}
	d.ID, d.Seq, d.State = deliveryID(seq), uint64(seq), chartctl.DeliveryState(state)
	d.NextAttemptAt, d.CreatedAt = utcPtr(d.NextAttemptAt), utc(d.CreatedAt)
	var recs []attemptRecord
	if err := json.Unmarshal(attempts, &recs); err != nil {
		return nil, fmt.Errorf("delivery %s: attempts: %w", d.ID, err)
	}
	for _, a := range recs {
		d.Attempts = append(d.Attempts, chartctl.Attempt{At: a.At.UTC(), StatusCode: a.StatusCode,
			Duration: time.Duration(a.DurationNS), ResponseExcerpt: a.Excerpt})
	}
	d.Event = &chartctl.Event{ID: eventID}
	if typ != nil {
		d.Event.Type, d.Event.Time = chartctl.EventType(*typ), utc(*at)
		d.Event.Repository, d.Event.Organization, d.Event.Source, d.Event.Subject = *repo, *org, *source, *subject
		if len(data) > 0 {
			d.Event.Data = data
		}
	}
	return &d, nil
}

// queueDelivery adds a pending delivery of event eventID to webhook whID,
// due at once, behind the webhook's earlier ones.
func (db *DB) queueDelivery(ctx context.Context, tx pgx.Tx, whID, eventID string) (*chartctl.Delivery, error) {
	now := db.now()
	var seq int64
	err := tx.QueryRow(ctx, `INSERT INTO deliveries (webhook_id, event_id, state, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $4) RETURNING seq`, whID, eventID, string(chartctl.DeliveryPending), now).Scan(&seq)
	if err != nil {
		return nil, err
	}
	return getDelivery(ctx, tx, seq)
}

func getDelivery(ctx context.Context, q querier, seq int64) (*chartctl.Delivery, error) {
	return scanDelivery(q.QueryRow(ctx, `SELECT `+deliveryCols+` FROM deliveries d
		LEFT JOIN events e ON e.id = d.event_id WHERE d.seq = $1`, seq))
}

// auditCols are the columns of an audit entry, as scanAudit reads them.
const auditCols = `seq, time, actor_user_id, actor_email, actor_credential_id, actor_credential_kind,
	actor_client_ip, actor_request_id, action, target, outcome, organization, actor_robot, actor_publisher`

func scanAudit(row pgx.Row) (*chartctl.AuditEntry, error) {
	var (
		e       chartctl.AuditEntry
		seq     int64
		outcome string
	)
	a := &e.Actor
	if err := row.Scan(&seq, &e.Time, &a.UserID, &a.Email, &a.CredentialID, &a.CredentialKind, &a.ClientIP, &a.RequestID,
		&e.Action, &e.Target, &outcome, &e.Organization, &a.Robot, &a.Publisher); err != nil {
		return nil, err
	}
	e.ID, e.Time, e.Outcome = fmt.Sprintf("aud_%016x", seq), utc(e.Time), chartctl.Outcome(outcome)
	return &e, nil
}

func (db *DB) appendAudit(ctx context.Context, tx pgx.Tx, entries []*chartctl.AuditEntry) error {
	b := &pgx.Batch{}
	db.queueAudit(b, entries)
	res := tx.SendBatch(ctx, b)
	for _, e := range entries {
		var seq int64
		if err := res.QueryRow().Scan(&seq); err != nil {
			_ = res.Close()
			return err
		}
		e.ID = fmt.Sprintf("aud_%016x", seq)
	}
	return res.Close()
}

// AppendAudit stores entries on their own, in one transaction.
func (db *DB) AppendAudit(ctx context.Context, entries ...*chartctl.AuditEntry) error {
	return db.tx(ctx, "append audit", func(tx pgx.Tx) error { return db.appendAudit(ctx, tx, entries) })
}

// AuditLog returns entries matching f, newest first. The cursor is the ID
// of the last entry returned; the next page starts below it.
func (db *DB) AuditLog(ctx context.Context, f chartctl.AuditFilter) ([]*chartctl.AuditEntry, string, error) {
	limit := f.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	where, args := []string{"true"}, []any{}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Cursor != "" {
		seq, ok := parseSeq(f.Cursor, "aud_")
		if !ok {
			return nil, "", chartctl.Invalid("cursor", "Invalid cursor %q: pass meta.next_cursor of the previous page.", f.Cursor)
		}
		where = append(where, "seq < "+arg(seq))
	}
	if f.Actor != "" {
		p := arg(text(f.Actor))
		where = append(where, fmt.Sprintf("(actor_user_id = %s OR lower(actor_email) = lower(%s))", p, p))
	}
	if f.Action != "" {
		res := strings.TrimSuffix(f.Action, ".")
		if strings.Contains(res, ".") {
			where = append(where, "action = "+arg(text(f.Action)))
		} else {
			where = append(where, fmt.Sprintf("(action = %s OR starts_with(action, %s))", arg(text(f.Action)), arg(text(res)+".")))
		}
	}
	if f.Target != "" {
		where = append(where, "target = "+arg(text(f.Target)))
	}
	if f.Organization != "" {
		// The partial index's predicate, repeated for generic plans
		// (referrersSQL).
		where = append(where, "organization = "+arg(text(f.Organization))+" AND organization <> ''")
	}
	if !f.Since.IsZero() {
		where = append(where, "time >= "+arg(f.Since.UTC()))
	}
	if !f.Until.IsZero() {
		where = append(where, "time < "+arg(f.Until.UTC()))
	}
	rows, err := db.pool.Query(ctx, `SELECT `+auditCols+` FROM audit_log
		WHERE `+strings.Join(where, " AND ")+` ORDER BY seq DESC LIMIT `+arg(limit+1), args...)
	if err != nil {
		return nil, "", db.wrap("read audit log", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.AuditEntry, error) { return scanAudit(r) })
	if err != nil {
		return nil, "", db.wrap("read audit log", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// PruneAudit deletes entries older than before, at most 10,000 a call
// (callers repeat while it returns that many), and returns how many.
func (db *DB) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM audit_log WHERE seq IN
		(SELECT seq FROM audit_log WHERE time < $1 ORDER BY seq LIMIT 10000)`, before.UTC())
	if err != nil {
		return 0, db.wrap("prune audit log", err)
	}
	return int(tag.RowsAffected()), nil
}

const webhookCols = `id, repository, COALESCE(repository_id, ''), organization, url, events, active, secret, created_by, created_at, disabled_reason`

func scanWebhook(row pgx.Row) (*chartctl.Webhook, error) {
	var w chartctl.Webhook
	if err := row.Scan(&w.ID, &w.Repository, &w.RepositoryID, &w.Organization, &w.URL, &w.Events, &w.Active, &w.Secret,
		&w.CreatedBy, &w.CreatedAt, &w.DisabledReason); err != nil {
		return nil, err
	}
	w.CreatedAt = utc(w.CreatedAt)
	if w.Events == nil {
		w.Events = []string{}
	}
	return &w, nil
}

func webhookNotFound(id string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Webhook %q not found.", id)
}

func getWebhook(ctx context.Context, q querier, id string, lock string) (*chartctl.Webhook, error) {
	if !storable(id) {
		return nil, webhookNotFound(id)
	}
	w, err := scanWebhook(q.QueryRow(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE id = $1 `+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, webhookNotFound(id)
	}
	return w, err
}

// CreateWebhook stores w, filling ID and CreatedAt when empty, and binds
// a repository webhook to its repository's ID (deleting the repository
// deletes the webhook).
func (db *DB) CreateWebhook(ctx context.Context, w *chartctl.Webhook) error {
	if err := db.fill(&w.ID, prefixWebhook, &w.CreatedAt); err != nil {
		return err
	}
	w.CreatedAt = w.CreatedAt.UTC().Truncate(time.Microsecond)
	err := db.mutate(ctx, "create webhook", func(tx pgx.Tx) error {
		var repoID *string
		if w.Repository != "" {
			// The row lock keeps the repository from going before the
			// webhook is stored; one deleted and re-created since the
			// caller was authorized against it does not receive it.
			id, err := lockRepo(ctx, tx, w.Repository, false)
			if err != nil {
				return err
			}
			if w.RepositoryID != "" && w.RepositoryID != id {
				return repoNotFound(w.Repository)
			}
			repoID = &id
		}
		_, err := tx.Exec(ctx, `INSERT INTO webhooks (id, repository, repository_id, organization, url, events, active, secret, created_by,
			created_at, disabled_reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			w.ID, text(w.Repository), repoID, text(w.Organization), text(w.URL), nonNil(texts(w.Events)), w.Active, nonNilBytes(w.Secret),
			text(w.CreatedBy), w.CreatedAt, text(w.DisabledReason))
		if err == nil && repoID != nil {
			w.RepositoryID = *repoID
		}
		return err
	})
	if isUnique(err, "webhooks_pkey") {
		return chartctl.Errorf(chartctl.ECONFLICT, "Webhook %q already exists.", w.ID)
	}
	return err
}

// Webhook returns one webhook.
func (db *DB) Webhook(ctx context.Context, id string) (*chartctl.Webhook, error) {
	w, err := getWebhook(ctx, db.pool, id, "")
	return w, db.wrap("get webhook", err)
}

// Webhooks returns the webhooks of a repository, an organization or the
// server-wide ones, oldest first.
func (db *DB) Webhooks(ctx context.Context, repo, org string) ([]*chartctl.Webhook, error) {
	if !storable(repo, org) {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE repository = $1 AND organization = $2
		ORDER BY id`, repo, org)
	if err != nil {
		return nil, db.wrap("list webhooks", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Webhook, error) { return scanWebhook(r) })
	return nilIfEmpty(out), db.wrap("list webhooks", err)
}

// UpdateWebhook applies upd.
func (db *DB) UpdateWebhook(ctx context.Context, id string, upd chartctl.WebhookUpdate) (*chartctl.Webhook, error) {
	var out *chartctl.Webhook
	err := db.mutate(ctx, "update webhook", func(tx pgx.Tx) error {
		w, err := getWebhook(ctx, tx, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		if upd.URL != nil {
			w.URL = text(*upd.URL)
		}
		if upd.Events != nil {
			w.Events = texts(upd.Events)
		}
		if upd.Secret != nil {
			w.Secret = upd.Secret
		}
		if upd.Active != nil {
			w.Active = *upd.Active
			if w.Active {
				w.DisabledReason = ""
			}
		}
		if upd.DisabledReason != nil {
			w.DisabledReason = text(*upd.DisabledReason)
		}
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET url = $2, events = $3, active = $4, secret = $5, disabled_reason = $6
			WHERE id = $1`, id, w.URL, nonNil(w.Events), w.Active, nonNilBytes(w.Secret), w.DisabledReason); err != nil {
			return err
		}
		out = w
		return nil
	})
	return out, err
}

// DeleteWebhook deletes a webhook and its deliveries.
func (db *DB) DeleteWebhook(ctx context.Context, id string) error {
	return db.mutate(ctx, "delete webhook", func(tx pgx.Tx) error {
		if !storable(id) {
			return webhookNotFound(id)
		}
		tag, err := tx.Exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return webhookNotFound(id)
		}
		return nil
	})
}

// ClaimDeliveries returns the due deliveries at the head of each active
// webhook's queue, postponed by lease. The claim locks the webhooks' rows
// (FOR NO KEY UPDATE SKIP LOCKED, which does not hold back the inserts of
// new deliveries): of replicas claiming at once, each webhook's queue goes
// to one, and once that claim commits its deliveries are no longer due, so
// the next claim stops at them — a webhook's deliveries are never sent out
// of order or twice at once.
//
// The locks are taken in a statement of their own: under READ COMMITTED a
// statement reads the snapshot of its start, so a claim that locked a
// webhook just after another claim committed would, in one statement,
// still see that claim's deliveries as due and send them a second time.
// The statement after the locks sees every claim that held them.
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, perWebhook, limit int) ([]*chartctl.Delivery, error) {
	if limit <= 0 || perWebhook <= 0 {
		return nil, nil
	}
	now = now.UTC()
	var out []*chartctl.Delivery
	err := db.tx(ctx, "claim deliveries", func(tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT id FROM webhooks WHERE active ORDER BY id FOR NO KEY UPDATE SKIP LOCKED`)
		if err != nil {
			return err
		}
		hooks, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(hooks) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `WITH heads AS (
				SELECT h.seq, h.webhook_id,
					bool_and(h.next_attempt_at IS NULL OR h.next_attempt_at <= $1)
						OVER (PARTITION BY h.webhook_id ORDER BY h.seq) AS due,
					row_number() OVER (PARTITION BY h.webhook_id ORDER BY h.seq) AS n
				FROM unnest($5::text[]) w(id) CROSS JOIN LATERAL (SELECT seq, webhook_id, next_attempt_at FROM deliveries
					WHERE webhook_id = w.id AND state = 'pending' ORDER BY seq LIMIT $4) h
			), picked AS (
				-- Round robin over the webhooks (every head before any
				-- second), so the limit cuts each queue after a prefix.
				SELECT seq FROM heads WHERE due ORDER BY n, webhook_id LIMIT $3
			)
			UPDATE deliveries d SET next_attempt_at = $2 FROM picked WHERE d.seq = picked.seq RETURNING d.seq`,
			now, now.Add(lease).Truncate(time.Microsecond), limit, perWebhook, hooks)
		if err != nil {
			return err
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(seqs) == 0 {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT `+deliveryCols+` FROM deliveries d
			LEFT JOIN events e ON e.id = d.event_id WHERE d.seq = ANY($1) ORDER BY d.webhook_id, d.seq`, seqs)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Delivery, error) { return scanDelivery(r) })
		return err
	})
	return out, err
}

func deliveryNotFound(id string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Delivery %q not found.", id)
}

// RecordAttempts records a dispatcher's round in one transaction; a
// non-empty Disable deactivates the delivery's webhook in it too.
func (db *DB) RecordAttempts(ctx context.Context, results []chartctl.AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	return db.tx(ctx, "record delivery attempts", func(tx pgx.Tx) error {
		for _, r := range results {
			seq, ok := parseSeq(r.DeliveryID, "dlv_")
			if !ok {
				continue
			}
			if r.Unsent {
				if _, err := tx.Exec(ctx, `UPDATE deliveries SET next_attempt_at = $2 WHERE seq = $1 AND state = 'pending'`, seq, utcPtr(r.Next)); err != nil {
					return err
				}
				continue
			}
			a := r.Attempt
			rec, err := json.Marshal([]attemptRecord{{At: a.At.UTC(), StatusCode: a.StatusCode, DurationNS: int64(a.Duration),
				Excerpt: text(a.ResponseExcerpt)}})
			if err != nil {
				return err
			}
			next := r.Next
			if r.State != chartctl.DeliveryPending {
				next = nil
			}
			var whID string
			err = tx.QueryRow(ctx, `UPDATE deliveries SET attempts = attempts || $2::jsonb, state = $3, next_attempt_at = $4
				WHERE seq = $1 RETURNING webhook_id`, seq, string(rec), string(r.State), utcPtr(next)).Scan(&whID)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // deleted with its webhook meanwhile
			} else if err != nil {
				return err
			}
			if r.Disable != "" {
				if _, err := tx.Exec(ctx, `UPDATE webhooks SET active = false, disabled_reason = $2 WHERE id = $1`, whID, text(r.Disable)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Deliveries returns a webhook's deliveries, newest first.
func (db *DB) Deliveries(ctx context.Context, webhookID string, limit int) ([]*chartctl.Delivery, error) {
	var out []*chartctl.Delivery
	err := db.readTx(ctx, "list deliveries", func(tx pgx.Tx) error {
		if _, err := getWebhook(ctx, tx, webhookID, ""); err != nil {
			return err
		}
		lim := "ALL"
		if limit > 0 {
			lim = fmt.Sprint(limit)
		}
		rows, err := tx.Query(ctx, `SELECT `+deliveryCols+` FROM deliveries d LEFT JOIN events e ON e.id = d.event_id
			WHERE d.webhook_id = $1 ORDER BY d.seq DESC LIMIT `+lim, webhookID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*chartctl.Delivery, error) { return scanDelivery(r) })
		return err
	})
	return nilIfEmpty(out), err
}

// Redeliver queues a delivery's event again.
func (db *DB) Redeliver(ctx context.Context, webhookID, id string) (*chartctl.Delivery, error) {
	var out *chartctl.Delivery
	err := db.tx(ctx, "redeliver", func(tx pgx.Tx) error {
		if _, err := getWebhook(ctx, tx, webhookID, "FOR KEY SHARE"); err != nil {
			return err
		}
		seq, ok := parseSeq(id, "dlv_")
		if !ok {
			return deliveryNotFound(id)
		}
		var eventID string
		err := tx.QueryRow(ctx, `SELECT event_id FROM deliveries WHERE seq = $1 AND webhook_id = $2`, seq, webhookID).Scan(&eventID)
		if errors.Is(err, pgx.ErrNoRows) {
			return deliveryNotFound(id)
		} else if err != nil {
			return err
		}
		if out, err = db.queueDelivery(ctx, tx, webhookID, eventID); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, false)
	})
	return out, err
}

// EnqueueEvent stores e and queues it to one webhook.
func (db *DB) EnqueueEvent(ctx context.Context, webhookID string, e *chartctl.Event) (*chartctl.Delivery, error) {
	var out *chartctl.Delivery
	err := db.tx(ctx, "enqueue event", func(tx pgx.Tx) error {
		if _, err := getWebhook(ctx, tx, webhookID, "FOR KEY SHARE"); err != nil {
			return err
		}
		if err := putEvent(ctx, tx, e); err != nil {
			return err
		}
		var err error
		if out, err = db.queueDelivery(ctx, tx, webhookID, e.ID); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, false)
	})
	return out, err
}

// changing runs fn against the pool when ctx carries no Change; else in a
// transaction that writes the Change once fn has succeeded, so a single
// statement stays a single round trip when there is nothing to record.
// fn's errors come back as they are (callers map constraint violations,
// then wrap).
func (db *DB) changing(ctx context.Context, fn func(q querier) error) error {
	if chartctl.ChangeFrom(ctx) == nil {
		return fn(db.pool)
	}
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	})
}

// changedWithChange records a committed change of one chart version for
// the other replicas (changed) and writes the Change ctx carries, the
// record in the round trip that reads what its events go to.
func (db *DB) changedWithChange(ctx context.Context, tx pgx.Tx, id, repo, name, version string) error {
	b := &pgx.Batch{}
	if err := db.queueChanged(b, id, repo, name, version); err != nil {
		return err
	}
	return db.writeChangeAfter(ctx, tx, true, b, func(res pgx.BatchResults) error { return scanChanged(res.QueryRow(), repo) })
}
