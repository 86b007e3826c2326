package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Buckets of the audit log, the event outbox and webhooks.
const (
	// auditBucket: big-endian sequence → auditRecord; append-only, so key
	// order is time order.
	auditBucket = "audit"
	// eventsBucket: event ID → eventRecord.
	eventsBucket = "events"
	// webhooksBucket: webhook ID → webhookRecord.
	webhooksBucket = "webhooks"
	// deliveriesBucket: delivery ID → deliveryRecord.
	deliveriesBucket = "deliveries"
	// webhookQueueBucket: webhook ID sep big-endian sequence → delivery
	// ID, for pending deliveries only: the first key of a webhook's prefix
	// is the delivery that goes out next.
	webhookQueueBucket = "webhook_queue"
	// webhookLogBucket: webhook ID sep big-endian sequence → delivery ID,
	// every delivery, for listing.
	webhookLogBucket = "webhook_log"
)

const prefixWebhook = "wh_"

type actorRecord struct {
	UserID         string `json:"user_id,omitempty"`
	Email          string `json:"email,omitempty"`
	CredentialID   string `json:"credential_id,omitempty"`
	CredentialKind string `json:"credential_kind,omitempty"`
	// Robot and Publisher name a robot's credential (schema 8).
	Robot     string `json:"robot,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	ClientIP  string `json:"client_ip,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

type auditRecord struct {
	ID           string      `json:"id"`
	Time         time.Time   `json:"time"`
	Actor        actorRecord `json:"actor"`
	Action       string      `json:"action"`
	Target       string      `json:"target,omitempty"`
	Outcome      string      `json:"outcome"`
	Organization string      `json:"organization,omitempty"`
}

type eventRecord struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Time         time.Time       `json:"time"`
	Repository   string          `json:"repository,omitempty"`
	Organization string          `json:"organization,omitempty"`
	Source       string          `json:"source,omitempty"`
	Subject      string          `json:"subject,omitempty"`
	Data         json.RawMessage `json:"data,omitempty"`
}

type webhookRecord struct {
	ID         string `json:"id"`
	Repository string `json:"repository,omitempty"`
	// RepositoryID binds a repository webhook to its repository (schema
	// 6); DeleteRepository deletes the webhooks bound to the repository.
	RepositoryID   string    `json:"repository_id,omitempty"`
	Organization   string    `json:"organization,omitempty"`
	URL            string    `json:"url"`
	Events         []string  `json:"events"`
	Active         bool      `json:"active"`
	Secret         []byte    `json:"secret"`
	CreatedBy      string    `json:"created_by,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
}

type attemptRecord struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	DurationNS int64     `json:"duration_ns"`
	Excerpt    string    `json:"excerpt,omitempty"`
}

type deliveryRecord struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhook_id"`
	Seq           uint64          `json:"seq"`
	EventID       string          `json:"event_id"`
	State         string          `json:"state"`
	Attempts      []attemptRecord `json:"attempts,omitempty"`
	NextAttemptAt *time.Time      `json:"next_attempt_at,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
}

func u64(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func seqKey(id string, seq uint64) []byte {
	return append(prefix(id), u64(seq)...)
}

// writeChange writes the change ctx carries inside tx: its audit entries,
// and, when events is set, its events with a queued delivery to every
// webhook that wants each.
func (db *DB) writeChange(ctx context.Context, tx *bbolt.Tx, events bool) error {
	c := chartctl.ChangeFrom(ctx)
	if c == nil {
		return nil
	}
	if err := db.appendAudit(tx, c.Audit); err != nil {
		return err
	}
	if !events || len(c.Events) == 0 {
		return nil
	}
	var hooks []*webhookRecord
	if err := bucket(tx, webhooksBucket).ForEach(func(k, v []byte) error {
		w, err := decode[webhookRecord](v)
		if err == nil {
			hooks = append(hooks, w)
		}
		return err
	}); err != nil {
		return err
	}
	if err := db.queueReplicationTasks(tx, c.Events); err != nil {
		return err
	}
	for _, e := range c.Events {
		if err := putEvent(tx, e); err != nil {
			return err
		}
		for _, w := range hooks {
			if !w.domain().Wants(e) {
				continue
			}
			if _, err := db.queueDelivery(tx, w.ID, e.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func putEvent(tx *bbolt.Tx, e *chartctl.Event) error {
	if e.ID == "" {
		return fmt.Errorf("event without an ID")
	}
	val, err := encode(&eventRecord{ID: e.ID, Type: string(e.Type), Time: e.Time.UTC(), Repository: e.Repository,
		Organization: e.Organization, Source: e.Source, Subject: e.Subject, Data: e.Data})
	if err != nil {
		return err
	}
	return bucket(tx, eventsBucket).Put([]byte(e.ID), val)
}

// queueDelivery adds a pending delivery of event eventID to webhook
// whID, due at once, behind the webhook's earlier ones.
func (db *DB) queueDelivery(tx *bbolt.Tx, whID, eventID string) (*deliveryRecord, error) {
	b := bucket(tx, deliveriesBucket)
	seq, err := b.NextSequence()
	if err != nil {
		return nil, err
	}
	now := db.now()
	d := &deliveryRecord{ID: fmt.Sprintf("dlv_%016x", seq), WebhookID: whID, Seq: seq, EventID: eventID,
		State: string(chartctl.DeliveryPending), NextAttemptAt: &now, CreatedAt: now}
	if err := putDelivery(tx, d); err != nil {
		return nil, err
	}
	if err := bucket(tx, webhookQueueBucket).Put(seqKey(whID, seq), []byte(d.ID)); err != nil {
		return nil, err
	}
	return d, bucket(tx, webhookLogBucket).Put(seqKey(whID, seq), []byte(d.ID))
}

func putDelivery(tx *bbolt.Tx, d *deliveryRecord) error {
	val, err := encode(d)
	if err != nil {
		return err
	}
	return bucket(tx, deliveriesBucket).Put([]byte(d.ID), val)
}

func (db *DB) appendAudit(tx *bbolt.Tx, entries []*chartctl.AuditEntry) error {
	b := bucket(tx, auditBucket)
	for _, e := range entries {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		if e.Time.IsZero() {
			e.Time = db.now()
		}
		e.ID = fmt.Sprintf("aud_%016x", seq)
		a := e.Actor
		val, err := encode(&auditRecord{ID: e.ID, Time: e.Time.UTC(), Action: e.Action, Target: e.Target, Outcome: string(e.Outcome),
			Organization: e.Organization, Actor: actorRecord{UserID: a.UserID, Email: a.Email, CredentialID: a.CredentialID,
				CredentialKind: a.CredentialKind, Robot: a.Robot, Publisher: a.Publisher, ClientIP: a.ClientIP, RequestID: a.RequestID}})
		if err != nil {
			return err
		}
		if err := b.Put(u64(seq), val); err != nil {
			return err
		}
	}
	return nil
}

// AppendAudit stores entries on their own.
func (db *DB) AppendAudit(ctx context.Context, entries ...*chartctl.AuditEntry) error {
	return wrap("append audit", db.db.Update(func(tx *bbolt.Tx) error { return db.appendAudit(tx, entries) }))
}

func (r *auditRecord) domain() *chartctl.AuditEntry {
	a := r.Actor
	return &chartctl.AuditEntry{ID: r.ID, Time: r.Time, Action: r.Action, Target: r.Target, Outcome: chartctl.Outcome(r.Outcome),
		Organization: r.Organization, Actor: chartctl.Actor{UserID: a.UserID, Email: a.Email, CredentialID: a.CredentialID,
			CredentialKind: a.CredentialKind, Robot: a.Robot, Publisher: a.Publisher, ClientIP: a.ClientIP, RequestID: a.RequestID}}
}

func auditMatches(r *auditRecord, f chartctl.AuditFilter) bool {
	if f.Actor != "" && r.Actor.UserID != f.Actor && !strings.EqualFold(r.Actor.Email, f.Actor) {
		return false
	}
	if f.Action != "" && r.Action != f.Action {
		res := strings.TrimSuffix(f.Action, ".")
		if strings.Contains(res, ".") || !strings.HasPrefix(r.Action, res+".") {
			return false
		}
	}
	if f.Target != "" && r.Target != f.Target {
		return false
	}
	if f.Organization != "" && r.Organization != f.Organization {
		return false
	}
	if !f.Since.IsZero() && r.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !r.Time.Before(f.Until) {
		return false
	}
	return true
}

// AuditLog returns entries matching f, newest first. The cursor is the ID
// of the last entry returned; the next page starts below it.
func (db *DB) AuditLog(ctx context.Context, f chartctl.AuditFilter) ([]*chartctl.AuditEntry, string, error) {
	limit := f.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	var start []byte
	if f.Cursor != "" {
		var seq uint64
		if _, err := fmt.Sscanf(f.Cursor, "aud_%016x", &seq); err != nil || seq == 0 {
			return nil, "", chartctl.Invalid("cursor", "Invalid cursor %q: pass meta.next_cursor of the previous page.", f.Cursor)
		}
		start = u64(seq)
	}
	var (
		out  []*chartctl.AuditEntry
		next string
	)
	err := db.db.View(func(tx *bbolt.Tx) error {
		c := bucket(tx, auditBucket).Cursor()
		var k, v []byte
		if start == nil {
			k, v = c.Last()
		} else {
			c.Seek(start)
			k, v = c.Prev()
		}
		for ; k != nil; k, v = c.Prev() {
			r, err := decode[auditRecord](v)
			if err != nil {
				return err
			}
			if !f.Since.IsZero() && r.Time.Before(f.Since) {
				// Entries are in time order: nothing older can match.
				break
			}
			if !auditMatches(r, f) {
				continue
			}
			if len(out) == limit {
				next = out[len(out)-1].ID
				break
			}
			out = append(out, r.domain())
		}
		return nil
	})
	return out, next, wrap("read audit log", err)
}

// PruneAudit deletes entries older than before.
func (db *DB) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := db.db.Update(func(tx *bbolt.Tx) error {
		c := bucket(tx, auditBucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.First() {
			r, err := decode[auditRecord](v)
			if err != nil {
				return err
			}
			if !r.Time.Before(before) || n >= 10000 {
				return nil
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, wrap("prune audit log", err)
}

func (r *webhookRecord) domain() *chartctl.Webhook {
	return &chartctl.Webhook{ID: r.ID, Repository: r.Repository, RepositoryID: r.RepositoryID, Organization: r.Organization, URL: r.URL,
		Events: append([]string(nil), r.Events...), Active: r.Active, Secret: append([]byte(nil), r.Secret...),
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, DisabledReason: r.DisabledReason}
}

func webhookNotFound(id string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Webhook %q not found.", id)
}

func getWebhook(tx *bbolt.Tx, id string) (*webhookRecord, error) {
	v := bucket(tx, webhooksBucket).Get([]byte(id))
	if v == nil {
		return nil, webhookNotFound(id)
	}
	return decode[webhookRecord](v)
}

func putWebhook(tx *bbolt.Tx, w *webhookRecord) error {
	val, err := encode(w)
	if err != nil {
		return err
	}
	return bucket(tx, webhooksBucket).Put([]byte(w.ID), val)
}

// CreateWebhook stores w, filling ID and CreatedAt when empty, and binds
// a repository webhook to its repository's ID.
func (db *DB) CreateWebhook(ctx context.Context, w *chartctl.Webhook) error {
	if w.ID == "" {
		id, err := db.newID(prefixWebhook)
		if err != nil {
			return err
		}
		w.ID = id
	}
	if w.CreatedAt.IsZero() {
		w.CreatedAt = db.now()
	}
	rec := &webhookRecord{ID: w.ID, Repository: w.Repository, Organization: w.Organization, URL: w.URL, Events: w.Events,
		Active: w.Active, Secret: w.Secret, CreatedBy: w.CreatedBy, CreatedAt: w.CreatedAt.UTC(), DisabledReason: w.DisabledReason}
	return wrap("create webhook", db.db.Update(func(tx *bbolt.Tx) error {
		if bucket(tx, webhooksBucket).Get([]byte(w.ID)) != nil {
			return chartctl.Errorf(chartctl.ECONFLICT, "Webhook %q already exists.", w.ID)
		}
		if w.Repository != "" {
			// Checked in the transaction that stores the webhook: a
			// repository deleted and re-created since the caller was
			// authorized against it does not receive the webhook.
			repo, err := getRepo(tx, w.Repository)
			if err != nil {
				return err
			}
			if w.RepositoryID != "" && w.RepositoryID != repo.ID {
				return repoNotFound(w.Repository)
			}
			w.RepositoryID = repo.ID
			rec.RepositoryID = repo.ID
		}
		if err := putWebhook(tx, rec); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	}))
}

// Webhook returns one webhook.
func (db *DB) Webhook(ctx context.Context, id string) (*chartctl.Webhook, error) {
	var w *chartctl.Webhook
	err := db.db.View(func(tx *bbolt.Tx) error {
		r, err := getWebhook(tx, id)
		if err == nil {
			w = r.domain()
		}
		return err
	})
	return w, wrap("get webhook", err)
}

// Webhooks returns the webhooks of a repository, an organization or the
// server-wide ones, oldest first.
func (db *DB) Webhooks(ctx context.Context, repo, org string) ([]*chartctl.Webhook, error) {
	var out []*chartctl.Webhook
	err := db.db.View(func(tx *bbolt.Tx) error {
		return bucket(tx, webhooksBucket).ForEach(func(k, v []byte) error {
			r, err := decode[webhookRecord](v)
			if err != nil {
				return err
			}
			if r.Repository == repo && r.Organization == org {
				out = append(out, r.domain())
			}
			return nil
		})
	})
	return out, wrap("list webhooks", err)
}

// UpdateWebhook applies upd.
func (db *DB) UpdateWebhook(ctx context.Context, id string, upd chartctl.WebhookUpdate) (*chartctl.Webhook, error) {
	var w *chartctl.Webhook
	err := db.db.Update(func(tx *bbolt.Tx) error {
		r, err := getWebhook(tx, id)
		if err != nil {
			return err
		}
		if upd.URL != nil {
			r.URL = *upd.URL
		}
		if upd.Events != nil {
			r.Events = upd.Events
		}
		if upd.Secret != nil {
			r.Secret = upd.Secret
		}
		if upd.Active != nil {
			r.Active = *upd.Active
			if r.Active {
				r.DisabledReason = ""
			}
		}
		if upd.DisabledReason != nil {
			r.DisabledReason = *upd.DisabledReason
		}
		if err := putWebhook(tx, r); err != nil {
			return err
		}
		w = r.domain()
		return db.writeChange(ctx, tx, true)
	})
	return w, wrap("update webhook", err)
}

// DeleteWebhook deletes a webhook and its deliveries.
func (db *DB) DeleteWebhook(ctx context.Context, id string) error {
	return wrap("delete webhook", db.db.Update(func(tx *bbolt.Tx) error {
		if _, err := getWebhook(tx, id); err != nil {
			return err
		}
		if err := deleteWebhook(tx, id); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	}))
}

// deleteWebhook deletes webhook id, its queue and its deliveries.
func deleteWebhook(tx *bbolt.Tx, id string) error {
	if err := bucket(tx, webhooksBucket).Delete([]byte(id)); err != nil {
		return err
	}
	if err := deletePrefix(bucket(tx, webhookQueueBucket), prefix(id), nil); err != nil {
		return err
	}
	dels := bucket(tx, deliveriesBucket)
	return deletePrefix(bucket(tx, webhookLogBucket), prefix(id), func(v []byte) error { return dels.Delete(v) })
}

// deleteRepoWebhooks deletes the webhooks bound to repository repo (by
// its ID; by its name for a record not bound yet) with their deliveries.
func deleteRepoWebhooks(tx *bbolt.Tx, repo *repoRecord) error {
	ids, err := keysMatching(bucket(tx, webhooksBucket), func(_ []byte, w webhookRecord) bool {
		return w.Repository != "" && (w.RepositoryID == repo.ID || (w.RepositoryID == "" && w.Repository == repo.Name))
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := deleteWebhook(tx, string(id)); err != nil {
			return err
		}
	}
	return nil
}

func deletePrefix(b *bbolt.Bucket, pfx []byte, each func(v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(pfx); k != nil && bytes.HasPrefix(k, pfx); k, v = c.Seek(pfx) {
		if each != nil {
			if err := each(append([]byte(nil), v...)); err != nil {
				return err
			}
		}
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

func getDelivery(tx *bbolt.Tx, id string) (*deliveryRecord, error) {
	v := bucket(tx, deliveriesBucket).Get([]byte(id))
	if v == nil {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "Delivery %q not found.", id)
	}
	return decode[deliveryRecord](v)
}

func (d *deliveryRecord) domain(tx *bbolt.Tx) (*chartctl.Delivery, error) {
	out := &chartctl.Delivery{ID: d.ID, WebhookID: d.WebhookID, Seq: d.Seq, State: chartctl.DeliveryState(d.State),
		NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, chartctl.Attempt{At: a.At, StatusCode: a.StatusCode, Duration: time.Duration(a.DurationNS), ResponseExcerpt: a.Excerpt})
	}
	v := bucket(tx, eventsBucket).Get([]byte(d.EventID))
	if v == nil {
		out.Event = &chartctl.Event{ID: d.EventID}
		return out, nil
	}
	e, err := decode[eventRecord](v)
	if err != nil {
		return nil, err
	}
	out.Event = &chartctl.Event{ID: e.ID, Type: chartctl.EventType(e.Type), Time: e.Time, Repository: e.Repository,
		Organization: e.Organization, Source: e.Source, Subject: e.Subject, Data: e.Data}
	return out, nil
}

// ClaimDeliveries returns the due deliveries at the head of each active
// webhook's queue. A bolt file is open in one process only (bbolt locks
// it), so the claims' leases are kept in that process's memory rather
// than written: a claim costs no commit and no file sync, and after a
// crash the pending deliveries are due again at once (at least once, as
// the webhook-id lets receivers deduplicate).
func (db *DB) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, perWebhook, limit int) ([]*chartctl.Delivery, error) {
	db.deliveryClaimMu.Lock()
	defer db.deliveryClaimMu.Unlock()
	if db.deliveryClaims == nil {
		db.deliveryClaims = map[string]time.Time{}
	}
	for id, until := range db.deliveryClaims {
		if !until.After(now) {
			delete(db.deliveryClaims, id)
		}
	}
	// Each webhook's due prefix (delivery IDs), then round robin over
	// them (every head before any second), so the limit cuts each queue
	// after a prefix and no webhook starves the others.
	var out []*chartctl.Delivery
	err := db.db.View(func(tx *bbolt.Tx) error {
		var due [][]string
		q := bucket(tx, webhookQueueBucket)
		err := bucket(tx, webhooksBucket).ForEach(func(k, v []byte) error {
			w, err := decode[webhookRecord](v)
			if err != nil || !w.Active {
				return err
			}
			pfx := prefix(w.ID)
			c := q.Cursor()
			var ids []string
			for qk, id := c.Seek(pfx); qk != nil && bytes.HasPrefix(qk, pfx) && len(ids) < perWebhook; qk, id = c.Next() {
				if _, claimed := db.deliveryClaims[string(id)]; claimed {
					return nil
				}
				d, err := getDelivery(tx, string(id))
				if err != nil {
					return err
				}
				if d.NextAttemptAt != nil && d.NextAttemptAt.After(now) {
					break
				}
				ids = append(ids, string(id))
			}
			if len(ids) > 0 {
				due = append(due, ids)
			}
			return nil
		})
		if err != nil {
			return err
		}
		picked := map[string]bool{}
		for n := 0; len(picked) < limit; n++ {
			more := false
			for _, ids := range due {
				if n < len(ids) && len(picked) < limit {
					picked[ids[n]], more = true, true
				}
			}
			if !more {
				break
			}
		}
		for _, ids := range due {
			for _, id := range ids {
				if !picked[id] {
					break
				}
				d, err := getDelivery(tx, id)
				if err != nil {
					return err
				}
				dd, err := d.domain(tx)
				if err != nil {
					return err
				}
				out = append(out, dd)
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("claim deliveries", err)
	}
	for _, d := range out {
		db.deliveryClaims[d.ID] = now.Add(lease)
	}
	return out, nil
}

// RecordAttempts records a dispatcher's round in one transaction.
func (db *DB) RecordAttempts(ctx context.Context, results []chartctl.AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	err := db.db.Update(func(tx *bbolt.Tx) error {
		for _, r := range results {
			if err := recordAttempt(tx, r); err != nil && chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrap("record delivery attempts", err)
	}
	// The attempts are recorded: the claims end (a pending delivery waits
	// for its next attempt time now).
	db.deliveryClaimMu.Lock()
	for _, r := range results {
		delete(db.deliveryClaims, r.DeliveryID)
	}
	db.deliveryClaimMu.Unlock()
	return nil
}

// recordAttempt appends an attempt and moves the delivery on.
func recordAttempt(tx *bbolt.Tx, r chartctl.AttemptResult) error {
	d, err := getDelivery(tx, r.DeliveryID)
	if err != nil {
		return err
	}
	if r.Unsent {
		if d.State != string(chartctl.DeliveryPending) {
			return nil
		}
		d.NextAttemptAt = r.Next
		return putDelivery(tx, d)
	}
	a := r.Attempt
	d.Attempts = append(d.Attempts, attemptRecord{At: a.At.UTC(), StatusCode: a.StatusCode, DurationNS: int64(a.Duration), Excerpt: a.ResponseExcerpt})
	d.State = string(r.State)
	d.NextAttemptAt = nil
	if r.State == chartctl.DeliveryPending {
		d.NextAttemptAt = r.Next
	} else if err := bucket(tx, webhookQueueBucket).Delete(seqKey(d.WebhookID, d.Seq)); err != nil {
		return err
	}
	if err := putDelivery(tx, d); err != nil {
		return err
	}
	if r.Disable == "" {
		return nil
	}
	w, err := getWebhook(tx, d.WebhookID)
	if err != nil {
		return err
	}
	w.Active, w.DisabledReason = false, r.Disable
	return putWebhook(tx, w)
}

// Deliveries returns a webhook's deliveries, newest first.
func (db *DB) Deliveries(ctx context.Context, webhookID string, limit int) ([]*chartctl.Delivery, error) {
	var out []*chartctl.Delivery
	err := db.db.View(func(tx *bbolt.Tx) error {
		if _, err := getWebhook(tx, webhookID); err != nil {
			return err
		}
		pfx := prefix(webhookID)
		c := bucket(tx, webhookLogBucket).Cursor()
		k, v := c.Seek(append(append([]byte(nil), pfx...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, pfx) && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			d, err := getDelivery(tx, string(v))
			if err != nil {
				return err
			}
			dd, err := d.domain(tx)
			if err != nil {
				return err
			}
			out = append(out, dd)
		}
		return nil
	})
	return out, wrap("list deliveries", err)
}

// Redeliver queues a delivery's event again.
func (db *DB) Redeliver(ctx context.Context, webhookID, deliveryID string) (*chartctl.Delivery, error) {
	var out *chartctl.Delivery
	err := db.db.Update(func(tx *bbolt.Tx) error {
		if _, err := getWebhook(tx, webhookID); err != nil {
			return err
		}
		d, err := getDelivery(tx, deliveryID)
		if err != nil {
			return err
		}
		if d.WebhookID != webhookID {
			return chartctl.Errorf(chartctl.ENOTFOUND, "Delivery %q not found.", deliveryID)
		}
		nd, err := db.queueDelivery(tx, webhookID, d.EventID)
		if err != nil {
			return err
		}
		if out, err = nd.domain(tx); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, false)
	})
	return out, wrap("redeliver", err)
}

// EnqueueEvent stores e and queues it to one webhook.
func (db *DB) EnqueueEvent(ctx context.Context, webhookID string, e *chartctl.Event) (*chartctl.Delivery, error) {
	var out *chartctl.Delivery
	err := db.db.Update(func(tx *bbolt.Tx) error {
		if _, err := getWebhook(tx, webhookID); err != nil {
			return err
		}
		if err := putEvent(tx, e); err != nil {
			return err
		}
		nd, err := db.queueDelivery(tx, webhookID, e.ID)
		if err != nil {
			return err
		}
		if out, err = nd.domain(tx); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, false)
	})
	return out, wrap("enqueue event", err)
}

// update runs fn in a read-write transaction and then writes the Change
// ctx carries in the same transaction: the mutating methods of the Store
// go through it.
func (db *DB) update(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	return db.db.Update(func(tx *bbolt.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return db.writeChange(ctx, tx, true)
	})
}
