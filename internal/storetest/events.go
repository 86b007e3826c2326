package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// runEvents runs the parts of issue #18 and #17 every engine implements:
// changes written with their mutation, the audit log, webhooks and their
// delivery queues, quotas, download counters, retention policies and
// UpdateRepository.
func runEvents(t *testing.T, open Open) {
	t.Run("ChangeCommitsWithMutation", func(t *testing.T) { testChangeCommits(t, open) })
	t.Run("ChangeOnEveryMutation", func(t *testing.T) { testChangeEverywhere(t, open) })
	t.Run("AuditLog", func(t *testing.T) { testAuditLog(t, open) })
	t.Run("Webhooks", func(t *testing.T) { testWebhooks(t, open) })
	t.Run("BoundToRepository", func(t *testing.T) { testBoundToRepository(t, open) })
	t.Run("Deliveries", func(t *testing.T) { testDeliveries(t, open) })
	t.Run("ClaimConcurrency", func(t *testing.T) { testClaimConcurrency(t, open) })
	t.Run("ClaimBatches", func(t *testing.T) { testClaimBatches(t, open) })
	t.Run("Quotas", func(t *testing.T) { testQuotas(t, open) })
	t.Run("QuotaConcurrency", func(t *testing.T) { testQuotaConcurrency(t, open) })
	t.Run("OCIQuotas", func(t *testing.T) { testOCIQuotas(t, open) })
	t.Run("Downloads", func(t *testing.T) { testDownloads(t, open) })
	t.Run("Retention", func(t *testing.T) { testRetention(t, open) })
	t.Run("UpdateRepository", func(t *testing.T) { testUpdateRepository(t, open) })
}

// withChange returns a context carrying one audit entry (action) and, when
// ev is set, one event of type ev in repository repo.
func withChange(action, target string, ev chartctl.EventType, eventID, repo string) context.Context {
	c := &chartctl.Change{Audit: []*chartctl.AuditEntry{{Action: action, Target: target, Outcome: chartctl.OutcomeSuccess,
		Actor: chartctl.Actor{UserID: "usr_1", Email: "Ann@Example.com", ClientIP: "192.0.2.1", RequestID: "req-1"}}}}
	if ev != "" {
		c.Events = []*chartctl.Event{{ID: eventID, Type: ev, Time: base, Repository: repo, Source: "/v1/repositories/" + repo,
			Subject: target, Data: []byte(`{"name":"` + repo + `"}`)}}
	}
	return chartctl.WithChange(ctx, c)
}

func mustWebhook(tb testing.TB, s Store, w *chartctl.Webhook) *chartctl.Webhook {
	tb.Helper()
	must(tb, s.CreateWebhook(ctx, w))
	return w
}

func deliveries(tb testing.TB, s Store, id string) []*chartctl.Delivery {
	tb.Helper()
	ds, err := s.Deliveries(ctx, id, 0)
	must(tb, err)
	return ds
}

func eventIDs(ds []*chartctl.Delivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Event.ID)
	}
	return out
}

func auditActions(tb testing.TB, s Store) []string {
	tb.Helper()
	entries, _, err := s.AuditLog(ctx, chartctl.AuditFilter{Limit: 100})
	must(tb, err)
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

func testChangeCommits(t *testing.T, open Open) {
	s := open(t)
	all := mustWebhook(t, s, &chartctl.Webhook{URL: "https://a.example.com", Events: []string{"*"}, Active: true, Secret: []byte("sealed")})
	mustRepo(t, s, "other", "")
	other := mustWebhook(t, s, &chartctl.Webhook{Repository: "other", URL: "https://c.example.com", Events: []string{"*"}, Active: true})
	off := mustWebhook(t, s, &chartctl.Webhook{URL: "https://d.example.com", Events: []string{"*"}, Active: false})

	must(t, s.CreateRepository(withChange("repository.create", "apps", chartctl.EventRepositoryCreated, "evt_1", "apps"),
		&chartctl.Repository{Name: "apps"}))
	// A repository webhook needs its repository.
	apps := mustWebhook(t, s, &chartctl.Webhook{Repository: "apps", URL: "https://b.example.com",
		Events: []string{string(chartctl.EventChartPushed)}, Active: true})
	// A failed call writes neither its entry nor its event.
	err := s.CreateRepository(withChange("repository.create", "apps", chartctl.EventRepositoryCreated, "evt_2", "apps"),
		&chartctl.Repository{Name: "apps"})
	wantCode(t, err, chartctl.ECONFLICT)

	cv := chart("apps", "web", "1.0.0")
	stored, created, _, err := s.PutChartVersion(withChange("chart.push", "apps/web/1.0.0", chartctl.EventChartPushed, "evt_3", "apps"), cv, chartctl.PutVersionOptions{})
	must(t, err)
	if !created || stored == nil {
		t.Fatalf("first push: created = %v", created)
	}
	// The same version again changes nothing: its audit entry is kept,
	// its event is not.
	_, created, _, err = s.PutChartVersion(withChange("chart.push", "apps/web/1.0.0", chartctl.EventChartPushed, "evt_4", "apps"), chart("apps", "web", "1.0.0"), chartctl.PutVersionOptions{})
	must(t, err)
	if created {
		t.Fatal("identical push: created = true")
	}
	wantStrings(t, "audit actions", auditActions(t, s), []string{"chart.push", "chart.push", "repository.create"})
	wantStrings(t, "server-wide webhook", eventIDs(deliveries(t, s, all.ID)), []string{"evt_3", "evt_1"})
	wantStrings(t, "repository webhook", eventIDs(deliveries(t, s, apps.ID)), []string{"evt_3"})
	wantStrings(t, "other repository's webhook", eventIDs(deliveries(t, s, other.ID)), []string{})
	wantStrings(t, "inactive webhook", eventIDs(deliveries(t, s, off.ID)), []string{})

	d := deliveries(t, s, all.ID)[0]
	if d.State != chartctl.DeliveryPending || d.WebhookID != all.ID || d.NextAttemptAt == nil || len(d.Attempts) != 0 {
		t.Fatalf("new delivery %+v", d)
	}
	e := d.Event
	if e.Type != chartctl.EventChartPushed || e.Repository != "apps" || e.Subject != "apps/web/1.0.0" ||
		e.Source != "/v1/repositories/apps" || !sameTime(e.Time, base) || !sameJSON(e.Data, []byte(`{"name":"apps"}`)) {
		t.Fatalf("stored event %+v", e)
	}
	entries, _, err := s.AuditLog(ctx, chartctl.AuditFilter{})
	must(t, err)
	a := entries[0]
	if a.ID == "" || a.Time.IsZero() || a.Actor.Email != "Ann@Example.com" || a.Actor.ClientIP != "192.0.2.1" ||
		a.Actor.RequestID != "req-1" || a.Outcome != chartctl.OutcomeSuccess || a.Target != "apps/web/1.0.0" {
		t.Fatalf("audit entry %+v", a)
	}
}

// testChangeEverywhere: every mutating method writes the Change of its
// context.
func testChangeEverywhere(t *testing.T, open Open) {
	s := open(t)
	n := 0
	c := func() context.Context {
		n++
		return withChange(fmt.Sprintf("act.%02d", n), "", "", "", "")
	}
	u := &chartctl.User{Email: "a@example.com"}
	must(t, s.CreateUser(c(), u))
	admin := mustUser(t, s, "admin@example.com")
	_, err := s.UpdateUser(ctx, admin.ID, chartctl.UserUpdate{Admin: ptr(true)})
	must(t, err)
	_, err = s.UpdateUser(c(), u.ID, chartctl.UserUpdate{Admin: ptr(true)})
	must(t, err)
	k := &chartctl.APIKey{UserID: u.ID, Name: "ci", Hash: []byte("hash-1"), Scopes: chartctl.Scopes{chartctl.ScopeKeysWrite}}
	must(t, s.CreateAPIKey(c(), k))
	must(t, s.DeleteAPIKey(c(), u.ID, k.ID))
	must(t, s.CreateOrganization(c(), &chartctl.Organization{Name: "acme"}))
	must(t, s.CreateRepository(c(), &chartctl.Repository{Name: "acme-apps", Organization: "acme"}))
	_, err = s.UpdateRepository(c(), "acme-apps", chartctl.RepositoryUpdate{Description: ptr("Apps"), Visibility: nil})
	must(t, err)
	_, _, _, err = s.PutChartVersion(c(), chart("acme-apps", "web", "1.0.0"), chartctl.PutVersionOptions{})
	must(t, err)
	_, _, err = s.DeleteChartVersion(c(), "acme-apps", "web", "1.0.0")
	must(t, err)
	must(t, s.CreateTeam(c(), &chartctl.Team{Name: "devs", Organization: "acme"}))
	must(t, s.AddMember(c(), &chartctl.Member{Team: "devs", Email: "b@example.com"}))
	_, err = s.UpdateMemberRole(c(), "devs", "b@example.com", chartctl.RoleMaintainer)
	must(t, err)
	must(t, s.RemoveMember(c(), "devs", "b@example.com"))
	w := &chartctl.Webhook{URL: "https://x.example.com", Events: []string{"*"}, Active: true}
	must(t, s.CreateWebhook(c(), w))
	_, err = s.UpdateWebhook(c(), w.ID, chartctl.WebhookUpdate{URL: ptr("https://y.example.com")})
	must(t, err)
	must(t, s.DeleteWebhook(c(), w.ID))
	must(t, s.SetQuota(c(), chartctl.QuotaRepository, "acme-apps", chartctl.Quota{MaxVersions: ptr(int64(5))}))
	must(t, s.SetRetentionPolicy(c(), "acme-apps", &chartctl.RetentionPolicy{KeepLatest: ptr(3)}))
	// The registry's writes of artifacts that are not charts.
	layer := Digest("image layer")
	must(t, s.LinkBlob(ctx, "acme-apps/img", layer, 5))
	m := manifest("acme-apps/img", layer)
	must(t, s.PutManifest(c(), m, "v1"))
	must(t, s.DeleteTag(c(), "acme-apps/img", "v1"))
	_, err = s.DeleteManifest(c(), "acme-apps/img", m.Digest)
	must(t, err)
	must(t, s.UnlinkBlob(c(), "acme-apps/img", layer))
	_, err = s.DeleteRepository(c(), "acme-apps")
	must(t, err)
	must(t, s.DeleteUser(c(), u.ID))
	// Calls that fail write nothing.
	wantCode(t, s.DeleteAPIKey(c(), u.ID, "key_missing"), chartctl.ENOTFOUND)
	wantCode(t, s.RemoveMember(c(), "devs", "nobody@example.com"), chartctl.ENOTFOUND)
	_, err = s.UpdateRepository(c(), "missing", chartctl.RepositoryUpdate{Description: ptr("x"), Visibility: nil})
	wantCode(t, err, chartctl.ENOTFOUND)
	wantCode(t, s.DeleteTag(c(), "acme-apps/img", "v1"), chartctl.ENOTFOUND)
	wantCode(t, s.UnlinkBlob(c(), "acme-apps/img", layer), chartctl.ENOTFOUND)
	var ue *chartctl.UnknownReferenceError
	if err := s.PutManifest(c(), manifest("acme-apps/img", layer), "v2"); !errors.As(err, &ue) {
		t.Fatalf("manifest of an unlinked blob: %v", err)
	}

	var want []string
	for i := 24; i >= 1; i-- {
		want = append(want, fmt.Sprintf("act.%02d", i))
	}
	wantStrings(t, "audit actions", auditActions(t, s), want)
}

func ptr[T any](v T) *T { return &v }

func testAuditLog(t *testing.T, open Open) {
	s := open(t)
	add := func(day int, action, target, org, user, email string) {
		must(t, s.AppendAudit(ctx, &chartctl.AuditEntry{Time: base.AddDate(0, 0, day), Action: action, Target: target,
			Organization: org, Outcome: chartctl.OutcomeSuccess, Actor: chartctl.Actor{UserID: user, Email: email}}))
	}
	add(0, "chart.push", "apps/web/1.0.0", "acme", "usr_a", "Ann@Example.com")
	add(1, "chart.delete", "apps/web/1.0.0", "acme", "usr_b", "bob@example.com")
	add(2, "session.signin", "ann@example.com", "", "usr_a", "ann@example.com")
	add(3, "chartfoo.push", "x", "", "usr_c", "c@example.com")
	add(4, "chart.push", "apps/web/2.0.0", "", "usr_b", "bob@example.com")

	list := func(f chartctl.AuditFilter) []string {
		t.Helper()
		entries, _, err := s.AuditLog(ctx, f)
		must(t, err)
		out := []string{}
		for _, e := range entries {
			out = append(out, e.Action+" "+e.Target)
		}
		return out
	}
	wantStrings(t, "all", list(chartctl.AuditFilter{}), []string{"chart.push apps/web/2.0.0", "chartfoo.push x",
		"session.signin ann@example.com", "chart.delete apps/web/1.0.0", "chart.push apps/web/1.0.0"})
	wantStrings(t, "resource", list(chartctl.AuditFilter{Action: "chart"}), []string{"chart.push apps/web/2.0.0",
		"chart.delete apps/web/1.0.0", "chart.push apps/web/1.0.0"})
	wantStrings(t, "resource.", list(chartctl.AuditFilter{Action: "chart."}), []string{"chart.push apps/web/2.0.0",
		"chart.delete apps/web/1.0.0", "chart.push apps/web/1.0.0"})
	wantStrings(t, "exact action", list(chartctl.AuditFilter{Action: "chart.push"}), []string{"chart.push apps/web/2.0.0",
		"chart.push apps/web/1.0.0"})
	wantStrings(t, "actor by email", list(chartctl.AuditFilter{Actor: "ANN@example.com"}), []string{
		"session.signin ann@example.com", "chart.push apps/web/1.0.0"})
	wantStrings(t, "actor by id", list(chartctl.AuditFilter{Actor: "usr_b"}), []string{"chart.push apps/web/2.0.0",
		"chart.delete apps/web/1.0.0"})
	wantStrings(t, "target", list(chartctl.AuditFilter{Target: "apps/web/1.0.0"}), []string{"chart.delete apps/web/1.0.0",
		"chart.push apps/web/1.0.0"})
	wantStrings(t, "organization", list(chartctl.AuditFilter{Organization: "acme"}), []string{"chart.delete apps/web/1.0.0",
		"chart.push apps/web/1.0.0"})
	wantStrings(t, "since/until", list(chartctl.AuditFilter{Since: base.AddDate(0, 0, 1), Until: base.AddDate(0, 0, 3)}),
		[]string{"session.signin ann@example.com", "chart.delete apps/web/1.0.0"})

	// Pages of two, then one; the cursor of the last page is "".
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("cursor never ends")
		}
		entries, next, err := s.AuditLog(ctx, chartctl.AuditFilter{Limit: 2, Cursor: cursor})
		must(t, err)
		for _, e := range entries {
			got = append(got, e.Action+" "+e.Target)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	wantStrings(t, "paged", got, list(chartctl.AuditFilter{}))
	_, _, err := s.AuditLog(ctx, chartctl.AuditFilter{Cursor: "garbage"})
	wantCode(t, err, chartctl.EINVALID)

	// IDs sort as entries were appended.
	entries, _, err := s.AuditLog(ctx, chartctl.AuditFilter{})
	must(t, err)
	for i := 1; i < len(entries); i++ {
		if entries[i-1].ID <= entries[i].ID {
			t.Fatalf("IDs not descending: %s then %s", entries[i-1].ID, entries[i].ID)
		}
	}

	n, err := s.PruneAudit(ctx, base.AddDate(0, 0, 2))
	must(t, err)
	if n != 2 {
		t.Fatalf("pruned %d, want 2", n)
	}
	wantStrings(t, "after prune", list(chartctl.AuditFilter{}), []string{"chart.push apps/web/2.0.0", "chartfoo.push x",
		"session.signin ann@example.com"})
}

func testWebhooks(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	a := mustWebhook(t, s, &chartctl.Webhook{Repository: "apps", URL: "https://a.example.com", Events: []string{"chart.pushed"},
		Active: true, Secret: []byte{1, 2, 3}, CreatedBy: "usr_1", CreatedAt: base})
	b := mustWebhook(t, s, &chartctl.Webhook{Repository: "apps", URL: "https://b.example.com", Events: []string{"*"},
		Active: true, CreatedAt: base.Add(time.Second)})
	srv := mustWebhook(t, s, &chartctl.Webhook{URL: "https://s.example.com", Events: []string{"*"}, Active: true})
	if a.ID == "" || a.ID == b.ID {
		t.Fatalf("IDs %q %q", a.ID, b.ID)
	}
	got, err := s.Webhook(ctx, a.ID)
	must(t, err)
	if got.URL != a.URL || got.Repository != "apps" || !slices.Equal(got.Events, a.Events) || !got.Active ||
		string(got.Secret) != string([]byte{1, 2, 3}) || got.CreatedBy != "usr_1" || !sameTime(got.CreatedAt, base) {
		t.Fatalf("Webhook = %+v", got)
	}
	_, err = s.Webhook(ctx, "wh_missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	ids := func(ws []*chartctl.Webhook) []string {
		out := []string{}
		for _, w := range ws {
			out = append(out, w.ID)
		}
		return out
	}
	list, err := s.Webhooks(ctx, "apps", "")
	must(t, err)
	wantStrings(t, "repository webhooks", ids(list), []string{a.ID, b.ID})
	list, err = s.Webhooks(ctx, "", "")
	must(t, err)
	wantStrings(t, "server-wide webhooks", ids(list), []string{srv.ID})

	up, err := s.UpdateWebhook(ctx, a.ID, chartctl.WebhookUpdate{Active: ptr(false), DisabledReason: ptr("too many failures")})
	must(t, err)
	if up.Active || up.DisabledReason != "too many failures" {
		t.Fatalf("disabled: %+v", up)
	}
	up, err = s.UpdateWebhook(ctx, a.ID, chartctl.WebhookUpdate{Active: ptr(true), URL: ptr("https://a2.example.com"),
		Events: []string{"chart.deleted"}, Secret: []byte{9}})
	must(t, err)
	if !up.Active || up.DisabledReason != "" || up.URL != "https://a2.example.com" || !slices.Equal(up.Events, []string{"chart.deleted"}) ||
		string(up.Secret) != string([]byte{9}) {
		t.Fatalf("enabled again: %+v", up)
	}
	_, err = s.UpdateWebhook(ctx, "wh_missing", chartctl.WebhookUpdate{URL: ptr("https://x")})
	wantCode(t, err, chartctl.ENOTFOUND)

	must(t, s.CreateRepository(withChange("repository.update", "apps", chartctl.EventRepositoryUpdated, "evt_1", "apps"),
		&chartctl.Repository{Name: "apps2"}))
	if len(deliveries(t, s, b.ID)) != 1 {
		t.Fatal("no delivery queued")
	}
	must(t, s.DeleteWebhook(ctx, b.ID))
	wantCode(t, s.DeleteWebhook(ctx, b.ID), chartctl.ENOTFOUND)
	_, err = s.Deliveries(ctx, b.ID, 0)
	wantCode(t, err, chartctl.ENOTFOUND)
}

func testDeliveries(t *testing.T, open Open) {
	s := open(t)
	w1 := mustWebhook(t, s, &chartctl.Webhook{URL: "https://a.example.com", Events: []string{"*"}, Active: true})
	w2 := mustWebhook(t, s, &chartctl.Webhook{URL: "https://b.example.com", Events: []string{"*"}, Active: true})
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("r%d", i)
		must(t, s.CreateRepository(withChange("repository.create", name, chartctl.EventRepositoryCreated, "evt_"+name, name),
			&chartctl.Repository{Name: name}))
	}
	now := time.Now().UTC().Add(time.Hour)
	claim := func(at time.Time) []string {
		t.Helper()
		ds, err := s.ClaimDeliveries(ctx, at, time.Minute, 1, 10)
		must(t, err)
		out := []string{}
		for _, d := range ds {
			if d.Event == nil || d.Event.Type != chartctl.EventRepositoryCreated {
				t.Fatalf("claimed delivery without its event: %+v", d)
			}
			out = append(out, d.WebhookID+" "+d.Event.ID)
		}
		slices.Sort(out)
		return out
	}
	want := []string{w1.ID + " evt_r1", w2.ID + " evt_r1"}
	slices.Sort(want)
	// One delivery per webhook, the oldest; leased, so not claimed twice.
	wantStrings(t, "first claim", claim(now), want)
	wantStrings(t, "claim within the lease", claim(now.Add(30*time.Second)), []string{})

	// w1's first delivery succeeds: its second is next. w2's fails and is
	// retried later: its later deliveries wait behind it.
	d1 := deliveries(t, s, w1.ID)
	wantStrings(t, "w1 deliveries, newest first", eventIDs(d1), []string{"evt_r3", "evt_r2", "evt_r1"})
	// Both attempts of the round in one call, as the dispatcher records
	// them; a delivery that no longer exists is skipped.
	d2 := deliveries(t, s, w2.ID)
	retry := now.Add(10 * time.Minute)
	must(t, s.RecordAttempts(ctx, []chartctl.AttemptResult{
		{DeliveryID: d1[2].ID, Attempt: chartctl.Attempt{At: now, StatusCode: 200, Duration: 20 * time.Millisecond, ResponseExcerpt: "ok"},
			State: chartctl.DeliveryDelivered},
		{DeliveryID: "dlv_missing", Attempt: chartctl.Attempt{At: now}, State: chartctl.DeliveryDelivered},
		{DeliveryID: d2[2].ID, Attempt: chartctl.Attempt{At: now, StatusCode: 500, ResponseExcerpt: "boom"},
			State: chartctl.DeliveryPending, Next: &retry},
	}))
	wantStrings(t, "after the first attempts", claim(now.Add(2*time.Minute)), []string{w1.ID + " evt_r2"})
	// At the retry, w1's second delivery is due again too: its lease ran
	// out without an attempt recorded.
	want = []string{w1.ID + " evt_r2", w2.ID + " evt_r1"}
	slices.Sort(want)
	wantStrings(t, "w2's retry is due", claim(retry), want)

	got := deliveries(t, s, w1.ID)[2]
	if got.State != chartctl.DeliveryDelivered || got.NextAttemptAt != nil || len(got.Attempts) != 1 ||
		got.Attempts[0].StatusCode != 200 || got.Attempts[0].Duration != 20*time.Millisecond ||
		got.Attempts[0].ResponseExcerpt != "ok" || !sameTime(got.Attempts[0].At, now) {
		t.Fatalf("delivered: %+v", got)
	}
	limited, err := s.Deliveries(ctx, w1.ID, 2)
	must(t, err)
	wantStrings(t, "limited", eventIDs(limited), []string{"evt_r3", "evt_r2"})

	// A failure that disables the webhook: nothing more is claimed for it.
	last := deliveries(t, s, w2.ID)[2]
	must(t, s.RecordAttempts(ctx, []chartctl.AttemptResult{{DeliveryID: last.ID, Attempt: chartctl.Attempt{At: retry, StatusCode: 410},
		State: chartctl.DeliveryFailed, Disable: "the endpoint answered 410 Gone"}}))
	wh, err := s.Webhook(ctx, w2.ID)
	must(t, err)
	if wh.Active || wh.DisabledReason != "the endpoint answered 410 Gone" {
		t.Fatalf("webhook after a disabling attempt: %+v", wh)
	}
	wantStrings(t, "disabled webhook", claim(retry.Add(time.Hour)), []string{w1.ID + " evt_r2"})
	must(t, s.RecordAttempts(ctx, nil))

	// Redeliver queues the event again as a new delivery.
	re, err := s.Redeliver(ctx, w1.ID, got.ID)
	must(t, err)
	if re.ID == got.ID || re.Event.ID != "evt_r1" || re.State != chartctl.DeliveryPending || re.Seq <= got.Seq {
		t.Fatalf("redelivery %+v", re)
	}
	_, err = s.Redeliver(ctx, w2.ID, got.ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Redeliver(ctx, "wh_missing", got.ID)
	wantCode(t, err, chartctl.ENOTFOUND)

	// EnqueueEvent sends one webhook an event whatever it wants.
	ping := &chartctl.Event{ID: "evt_ping", Type: chartctl.EventPing, Time: base, Data: []byte(`{}`)}
	pd, err := s.EnqueueEvent(ctx, w2.ID, ping)
	must(t, err)
	if pd.WebhookID != w2.ID || pd.Event.ID != "evt_ping" || pd.Event.Type != chartctl.EventPing || pd.State != chartctl.DeliveryPending {
		t.Fatalf("ping delivery %+v", pd)
	}
	_, err = s.EnqueueEvent(ctx, "wh_missing", &chartctl.Event{ID: "evt_x", Type: chartctl.EventPing})
	wantCode(t, err, chartctl.ENOTFOUND)
}

// testClaimBatches: a claim takes, per webhook, the due prefix of its
// queue (at most perWebhook), round robin over the webhooks up to the
// limit; a webhook whose head is claimed gives nothing; an unsent result
// puts a delivery back, due, behind one that failed.
func testClaimBatches(t *testing.T, open Open) {
	s := open(t)
	w1 := mustWebhook(t, s, &chartctl.Webhook{URL: "https://a.example.com", Events: []string{"*"}, Active: true})
	w2 := mustWebhook(t, s, &chartctl.Webhook{URL: "https://b.example.com", Events: []string{"*"}, Active: true})
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("r%d", i)
		must(t, s.CreateRepository(withChange("repository.create", name, chartctl.EventRepositoryCreated, "evt_"+name, name),
			&chartctl.Repository{Name: name}))
	}
	first, second := w1.ID, w2.ID
	if second < first {
		first, second = second, first
	}
	now := time.Now().UTC().Add(time.Hour)
	claim := func(at time.Time, per, limit int) ([]string, map[string]*chartctl.Delivery) {
		t.Helper()
		ds, err := s.ClaimDeliveries(ctx, at, time.Minute, per, limit)
		must(t, err)
		var out []string
		byKey := map[string]*chartctl.Delivery{}
		for _, d := range ds {
			k := d.WebhookID + " " + d.Event.ID
			out = append(out, k)
			byKey[k] = d
		}
		return out, byKey
	}
	// Two per webhook, three in all: both heads first, then the second of
	// the first webhook. Grouped by webhook, in queue order.
	got, byKey := claim(now, 2, 3)
	wantStrings(t, "batch claim", got, []string{first + " evt_r1", first + " evt_r2", second + " evt_r1"})
	got, _ = claim(now.Add(time.Second), 5, 10)
	wantStrings(t, "heads claimed", got, []string{})

	// The first webhook: r1 delivered, r2 sent back unsent; the second:
	// r1 failed, retried in ten minutes.
	retry := now.Add(10 * time.Minute)
	must(t, s.RecordAttempts(ctx, []chartctl.AttemptResult{
		{DeliveryID: byKey[first+" evt_r1"].ID, Attempt: chartctl.Attempt{At: now, StatusCode: 204}, State: chartctl.DeliveryDelivered},
		{DeliveryID: byKey[first+" evt_r2"].ID, Unsent: true, State: chartctl.DeliveryPending, Next: &now},
		{DeliveryID: byKey[second+" evt_r1"].ID, Attempt: chartctl.Attempt{At: now, StatusCode: 503}, State: chartctl.DeliveryPending, Next: &retry},
	}))
	unsent := deliveries(t, s, first)[1]
	if unsent.Event.ID != "evt_r2" || unsent.State != chartctl.DeliveryPending || len(unsent.Attempts) != 0 {
		t.Fatalf("unsent delivery %+v", unsent)
	}
	// The first webhook's rest is due; the second's waits behind its head.
	got, _ = claim(now.Add(time.Second), 5, 10)
	wantStrings(t, "after the round", got, []string{first + " evt_r2", first + " evt_r3"})
	// At the retry the first webhook's claim has run out unrecorded: due
	// again too.
	got, _ = claim(retry, 5, 10)
	wantStrings(t, "at the retry", got, []string{first + " evt_r2", first + " evt_r3", second + " evt_r1", second + " evt_r2", second + " evt_r3"})
}

// testClaimConcurrency: of callers claiming at once, each due delivery
// goes to exactly one.
func testClaimConcurrency(t *testing.T, open Open) {
	s := open(t)
	const hooks = 8
	for i := 0; i < hooks; i++ {
		mustWebhook(t, s, &chartctl.Webhook{URL: fmt.Sprintf("https://%d.example.com", i), Events: []string{"*"}, Active: true})
	}
	must(t, s.CreateRepository(withChange("repository.create", "apps", chartctl.EventRepositoryCreated, "evt_1", "apps"),
		&chartctl.Repository{Name: "apps"}))
	now := time.Now().Add(time.Hour)
	var (
		mu      sync.Mutex
		claimed = map[string]int{}
	)
	errs := race(8, func(int) error {
		ds, err := s.ClaimDeliveries(ctx, now, time.Hour, 2, 3)
		mu.Lock()
		defer mu.Unlock()
		for _, d := range ds {
			claimed[d.ID]++
		}
		return err
	})
	for _, err := range errs {
		must(t, err)
	}
	if len(claimed) > hooks {
		t.Fatalf("claimed %d deliveries of %d", len(claimed), hooks)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("delivery %s claimed %d times", id, n)
		}
	}
}

func testQuotas(t *testing.T, open Open) {
	s := open(t)
	mustOrg(t, s, "acme", "")
	mustRepo(t, s, "apps", "acme")
	mustRepo(t, s, "tools", "acme")
	mustRepo(t, s, "solo", "")
	usage := func(scope, name string) chartctl.Usage {
		t.Helper()
		_, u, err := s.Quota(ctx, scope, name)
		must(t, err)
		return u
	}
	_, _, err := s.Quota(ctx, chartctl.QuotaRepository, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, _, err = s.Quota(ctx, chartctl.QuotaOrganization, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantCode(t, s.SetQuota(ctx, chartctl.QuotaRepository, "missing", chartctl.Quota{MaxVersions: ptr(int64(1))}), chartctl.ENOTFOUND)

	withProv := chart("apps", "web", "1.0.0")
	withProv.ProvDigest, withProv.ProvSize = Digest("prov"), 100
	mustPut(t, s, withProv)
	mustPut(t, s, chart("tools", "cli", "1.0.0"))
	if u := usage(chartctl.QuotaRepository, "apps"); u != (chartctl.Usage{Bytes: 1334, Versions: 1}) {
		t.Fatalf("apps usage %+v", u)
	}
	if u := usage(chartctl.QuotaOrganization, "acme"); u != (chartctl.Usage{Bytes: 2568, Versions: 2}) {
		t.Fatalf("acme usage %+v", u)
	}
	got, err := s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	if got.ProvSize != 100 {
		t.Fatalf("ProvSize = %d", got.ProvSize)
	}

	// A repository quota of 2 versions: the third is refused and nothing
	// is stored.
	must(t, s.SetQuota(ctx, chartctl.QuotaRepository, "apps", chartctl.Quota{MaxVersions: ptr(int64(2))}))
	q, _, err := s.Quota(ctx, chartctl.QuotaRepository, "apps")
	must(t, err)
	if q.MaxVersions == nil || *q.MaxVersions != 2 || q.MaxBytes != nil {
		t.Fatalf("quota %+v", q)
	}
	// QuotaLimits: the same quota without the usage; none is zero.
	if q, err := s.QuotaLimits(ctx, chartctl.QuotaRepository, "apps"); err != nil || q.MaxVersions == nil || *q.MaxVersions != 2 || q.MaxBytes != nil {
		t.Fatalf("QuotaLimits(apps) = %+v, %v", q, err)
	}
	if q, err := s.QuotaLimits(ctx, chartctl.QuotaOrganization, "acme"); err != nil || q != (chartctl.Quota{}) {
		t.Fatalf("QuotaLimits(acme) = %+v, %v", q, err)
	}
	_, err = s.QuotaLimits(ctx, chartctl.QuotaRepository, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	mustPut(t, s, chart("apps", "web", "2.0.0"))
	_, _, _, err = s.PutChartVersion(ctx, chart("apps", "web", "3.0.0"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.EQUOTA)
	_, err = s.ChartVersion(ctx, "apps", "web", "3.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	// The same version again takes nothing more.
	_, _, _, err = s.PutChartVersion(ctx, chart("apps", "web", "2.0.0"), chartctl.PutVersionOptions{})
	must(t, err)

	// An organization byte quota counts every repository of it.
	must(t, s.SetQuota(ctx, chartctl.QuotaOrganization, "acme", chartctl.Quota{MaxBytes: ptr(int64(4000))}))
	_, _, _, err = s.PutChartVersion(ctx, chart("tools", "cli", "2.0.0"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.EQUOTA)
	// Deleting frees room.
	_, _, err = s.DeleteChartVersion(ctx, "apps", "web", "2.0.0")
	must(t, err)
	if u := usage(chartctl.QuotaOrganization, "acme"); u != (chartctl.Usage{Bytes: 2568, Versions: 2}) {
		t.Fatalf("acme usage after delete %+v", u)
	}
	mustPut(t, s, chart("tools", "cli", "2.0.0"))

	// Overwriting with a bigger archive charges the difference.
	big := chart("tools", "cli", "2.0.0")
	big.Digest, big.Size = Digest("bigger"), 2000
	_, _, _, err = s.PutChartVersion(ctx, big, chartctl.PutVersionOptions{Overwrite: true})
	wantCode(t, err, chartctl.EQUOTA)
	big.Size = 1300
	_, created, _, err := s.PutChartVersion(ctx, big, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if !created {
		t.Fatal("overwrite: created = false")
	}
	if u := usage(chartctl.QuotaRepository, "tools"); u != (chartctl.Usage{Bytes: 2534, Versions: 2}) {
		t.Fatalf("tools usage after overwrite %+v", u)
	}

	// Deleting a repository takes it off its organization's usage.
	_, err = s.DeleteRepository(ctx, "tools")
	must(t, err)
	if u := usage(chartctl.QuotaOrganization, "acme"); u != (chartctl.Usage{Bytes: 1334, Versions: 1}) {
		t.Fatalf("acme usage after deleting tools %+v", u)
	}
	// A repository created again under a deleted one's name starts empty,
	// without the old quota.
	mustRepo(t, s, "tools", "acme")
	q, u, err := s.Quota(ctx, chartctl.QuotaRepository, "tools")
	must(t, err)
	if q.MaxBytes != nil || q.MaxVersions != nil || u != (chartctl.Usage{}) {
		t.Fatalf("recreated repository: quota %+v usage %+v", q, u)
	}
	// Removing a quota.
	must(t, s.SetQuota(ctx, chartctl.QuotaOrganization, "acme", chartctl.Quota{}))
	q, _, err = s.Quota(ctx, chartctl.QuotaOrganization, "acme")
	must(t, err)
	if q.MaxBytes != nil || q.MaxVersions != nil {
		t.Fatalf("removed quota %+v", q)
	}
	if u := usage(chartctl.QuotaRepository, "solo"); u != (chartctl.Usage{}) {
		t.Fatalf("solo usage %+v", u)
	}
}

// testOCIQuotas: OCI manifests other than charts, and the blobs they
// refer to, count against the quotas of their repository and organization
// (CONTRACT §18 decision 12): once per name, so a blob shared by two
// repositories counts in both; blobs no manifest refers to yet do not.
// Past a max_bytes quota a new manifest is EQUOTA and nothing of it is
// stored, and a chart version's check counts the OCI bytes.
func testOCIQuotas(t *testing.T, open Open) {
	s := open(t)
	mustOrg(t, s, "acme", "")
	mustRepo(t, s, "apps", "acme")
	mustRepo(t, s, "tools", "acme")
	usage := func(scope, name string) chartctl.Usage {
		t.Helper()
		_, u, err := s.Quota(ctx, scope, name)
		must(t, err)
		return u
	}
	cfg, layer := Digest("oci config"), Digest("oci layer")
	must(t, s.LinkBlob(ctx, "apps/img", cfg, 10))
	must(t, s.LinkBlob(ctx, "apps/img", layer, 1000))
	if u := usage(chartctl.QuotaRepository, "apps"); u != (chartctl.Usage{}) {
		t.Fatalf("apps usage with blobs no manifest refers to: %+v", u)
	}
	m := manifest("apps/img", cfg, layer)
	must(t, s.PutManifest(ctx, m, "v1"))
	apps := 1010 + m.Size()
	if u := usage(chartctl.QuotaRepository, "apps"); u != (chartctl.Usage{Bytes: apps}) {
		t.Fatalf("apps usage with a manifest: %+v, want %d bytes", u, apps)
	}
	// The same blobs in a second repository count there too, and twice in
	// the organization (before any deduplication, as /v1's bytes are).
	must(t, s.LinkBlob(ctx, "tools/img", cfg, 10))
	must(t, s.LinkBlob(ctx, "tools/img", layer, 1000))
	m2 := manifest("tools/img", cfg, layer)
	must(t, s.PutManifest(ctx, m2, ""))
	if u := usage(chartctl.QuotaOrganization, "acme"); u != (chartctl.Usage{Bytes: apps + 1010 + m2.Size()}) {
		t.Fatalf("acme usage: %+v", u)
	}

	// Past the repository's quota a new manifest is refused, and nothing
	// of it is stored.
	must(t, s.SetQuota(ctx, chartctl.QuotaRepository, "apps", chartctl.Quota{MaxBytes: ptr(apps + 500)}))
	big := Digest("oci big layer")
	must(t, s.LinkBlob(ctx, "apps/img", big, 600))
	m3 := manifest("apps/img", big)
	err := s.PutManifest(ctx, m3, "v2")
	wantCode(t, err, chartctl.EQUOTA)
	if msg := chartctl.ErrorMessage(err); !strings.Contains(msg, fmt.Sprintf(`max_bytes quota of repository "apps" is %d bytes, with %d bytes used`, apps+500, apps)) {
		t.Fatalf("quota message: %s", msg)
	}
	_, err = s.Manifest(ctx, "apps/img", m3.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Tag(ctx, "apps/img", "v2")
	wantCode(t, err, chartctl.ENOTFOUND)
	// A manifest referring only to blobs already counted adds its own
	// bytes alone.
	m4 := manifest("apps/img", layer)
	must(t, s.PutManifest(ctx, m4, ""))
	apps += m4.Size()

	// A chart version's check counts the OCI bytes.
	_, _, _, err = s.PutChartVersion(ctx, chart("apps", "web", "1.0.0"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.EQUOTA)
	if msg := chartctl.ErrorMessage(err); !strings.Contains(msg, fmt.Sprintf("with %d bytes used", apps)) {
		t.Fatalf("chart quota message: %s", msg)
	}
	// Deleting the manifests frees the room.
	_, err = s.DeleteManifest(ctx, "apps/img", m.Digest)
	must(t, err)
	_, err = s.DeleteManifest(ctx, "apps/img", m4.Digest)
	must(t, err)
	if u := usage(chartctl.QuotaRepository, "apps"); u != (chartctl.Usage{}) {
		t.Fatalf("apps usage after deleting its manifests: %+v", u)
	}
	mustPut(t, s, chart("apps", "web", "1.0.0"))

	// Deleting a repository takes its artifacts with it: a repository
	// made again under its name counts none of them, then its own.
	_, err = s.DeleteRepository(ctx, "tools")
	must(t, err)
	mustRepo(t, s, "tools", "acme")
	must(t, s.SetQuota(ctx, chartctl.QuotaRepository, "tools", chartctl.Quota{MaxBytes: ptr(int64(100_000))}))
	if u := usage(chartctl.QuotaRepository, "tools"); u != (chartctl.Usage{}) {
		t.Fatalf("usage of tools made again: %+v", u)
	}
	must(t, s.LinkBlob(ctx, "tools/img", layer, 1000))
	m5 := manifest("tools/img", layer)
	must(t, s.PutManifest(ctx, m5, "v1"))
	if u := usage(chartctl.QuotaRepository, "tools"); u != (chartctl.Usage{Bytes: 1000 + m5.Size()}) {
		t.Fatalf("usage of tools made again, with a manifest: %+v, want %d bytes", u, 1000+m5.Size())
	}
}

// testQuotaConcurrency: concurrent uploads cannot pass a quota together.
func testQuotaConcurrency(t *testing.T, open Open) {
	s := open(t)
	mustOrg(t, s, "acme", "")
	mustRepo(t, s, "a", "acme")
	mustRepo(t, s, "b", "acme")
	must(t, s.SetQuota(ctx, chartctl.QuotaOrganization, "acme", chartctl.Quota{MaxVersions: ptr(int64(3))}))
	errs := race(10, func(i int) error {
		repo := []string{"a", "b"}[i%2]
		_, _, _, err := s.PutChartVersion(ctx, chart(repo, "web", fmt.Sprintf("1.0.%d", i)), chartctl.PutVersionOptions{})
		return err
	})
	if c := countCodes(errs); c[""] != 3 || c[chartctl.EQUOTA] != 7 {
		t.Fatalf("outcomes %v, want 3 stored and 7 refused", c)
	}
	_, u, err := s.Quota(ctx, chartctl.QuotaOrganization, "acme")
	must(t, err)
	if u.Versions != 3 {
		t.Fatalf("usage %+v", u)
	}
}

func testDownloads(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	mustPut(t, s, chart("apps", "web", "1.0.0"))
	mustPut(t, s, chart("apps", "web", "2.0.0"))
	t1, t2 := base.Add(time.Hour), base.Add(2*time.Hour)
	must(t, s.AddDownloads(ctx, []chartctl.DownloadCount{
		{Repository: "apps", Name: "web", Version: "1.0.0", Count: 3, Last: t2},
		{Repository: "apps", Name: "web", Version: "9.9.9", Count: 5, Last: t1},
		{Repository: "missing", Name: "web", Version: "1.0.0", Count: 5, Last: t1},
	}))
	must(t, s.AddDownloads(ctx, []chartctl.DownloadCount{{Repository: "apps", Name: "web", Version: "1.0.0", Count: 2, Last: t1}}))
	cv, err := s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	if cv.Downloads != 5 || cv.LastDownloadedAt == nil || !sameTime(*cv.LastDownloadedAt, t2) {
		t.Fatalf("counter %d %v", cv.Downloads, cv.LastDownloadedAt)
	}
	list, err := s.ChartVersions(ctx, "apps", chartctl.ChartFilter{})
	must(t, err)
	if len(list) != 2 || list[0].Downloads != 0 || list[0].LastDownloadedAt != nil || list[1].Downloads != 5 {
		t.Fatalf("listing counters %+v", list)
	}
	page, _, err := s.ChartVersionPage(ctx, "apps", chartctl.ChartFilter{}, 1, 1)
	must(t, err)
	if len(page) != 1 || page[0].Downloads != 5 {
		t.Fatalf("page counters %+v", page)
	}
	// Concurrent flushes add up.
	errs := race(8, func(int) error {
		return s.AddDownloads(ctx, []chartctl.DownloadCount{{Repository: "apps", Name: "web", Version: "2.0.0", Count: 1, Last: t1}})
	})
	for _, err := range errs {
		must(t, err)
	}
	cv, err = s.ChartVersion(ctx, "apps", "web", "2.0.0")
	must(t, err)
	if cv.Downloads != 8 {
		t.Fatalf("after concurrent flushes: %d", cv.Downloads)
	}
	// A deleted version's counter goes with it.
	_, _, err = s.DeleteChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	mustPut(t, s, chart("apps", "web", "1.0.0"))
	cv, err = s.ChartVersion(ctx, "apps", "web", "1.0.0")
	must(t, err)
	if cv.Downloads != 0 || cv.LastDownloadedAt != nil {
		t.Fatalf("re-pushed version kept the counter: %d", cv.Downloads)
	}
	_, err = s.DeleteRepository(ctx, "apps")
	must(t, err)
	mustRepo(t, s, "apps", "")
	mustPut(t, s, chart("apps", "web", "2.0.0"))
	cv, err = s.ChartVersion(ctx, "apps", "web", "2.0.0")
	must(t, err)
	if cv.Downloads != 0 {
		t.Fatalf("re-created repository kept the counter: %d", cv.Downloads)
	}
}

func testRetention(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "apps", "")
	mustRepo(t, s, "tools", "")
	day := 24 * time.Hour
	p := &chartctl.RetentionPolicy{KeepLatest: ptr(5), KeepPushedWithin: ptr(30 * day), KeepDownloadedWithin: ptr(7 * day),
		KeepMatching: ">=1.0.0", DeletePrereleasesAfter: ptr(day), Schedule: "0 3 * * *"}
	must(t, s.SetRetentionPolicy(ctx, "apps", p))
	must(t, s.SetRetentionPolicy(ctx, "tools", &chartctl.RetentionPolicy{KeepLatest: ptr(1)}))
	wantCode(t, s.SetRetentionPolicy(ctx, "missing", p), chartctl.ENOTFOUND)
	all, err := s.RetentionPolicies(ctx)
	must(t, err)
	if len(all) != 2 || !reflect.DeepEqual(all["apps"], p) || all["tools"].KeepLatest == nil || *all["tools"].KeepLatest != 1 {
		t.Fatalf("policies %+v", all)
	}
	// The time of the last scheduled run: set by MarkRetentionRun alone,
	// kept when the policy is replaced.
	at := time.Date(2026, 5, 1, 3, 0, 7, 0, time.UTC)
	must(t, s.MarkRetentionRun(ctx, "apps", at))
	wantCode(t, s.MarkRetentionRun(ctx, "missing", at), chartctl.ENOTFOUND)
	all, err = s.RetentionPolicies(ctx)
	must(t, err)
	if !all["apps"].LastRun.Equal(at) || !all["tools"].LastRun.IsZero() || all["apps"].Schedule != p.Schedule {
		t.Fatalf("after a run: %+v %+v", all["apps"], all["tools"])
	}
	p2 := &chartctl.RetentionPolicy{KeepLatest: ptr(2), Schedule: "0 4 * * *", LastRun: at.Add(time.Hour)}
	must(t, s.SetRetentionPolicy(ctx, "apps", p2))
	all, err = s.RetentionPolicies(ctx)
	must(t, err)
	if got := all["apps"]; !got.LastRun.Equal(at) || got.Schedule != "0 4 * * *" || *got.KeepLatest != 2 || got.KeepMatching != "" {
		t.Fatalf("replaced policy %+v", got)
	}
	must(t, s.SetRetentionPolicy(ctx, "tools", nil))
	wantCode(t, s.MarkRetentionRun(ctx, "tools", at), chartctl.ENOTFOUND)
	_, err = s.DeleteRepository(ctx, "apps")
	must(t, err)
	mustRepo(t, s, "apps", "")
	all, err = s.RetentionPolicies(ctx)
	must(t, err)
	if len(all) != 0 {
		t.Fatalf("policies after removal and deletion %+v", all)
	}
}

func testUpdateRepository(t *testing.T, open Open) {
	s := open(t)
	r := mustRepo(t, s, "apps", "")
	pub := chartctl.VisibilityPublic
	got, err := s.UpdateRepository(ctx, "apps", chartctl.RepositoryUpdate{Description: ptr("Our apps"), Visibility: &pub})
	must(t, err)
	if got.Description != "Our apps" || got.Visibility != pub || got.ID != r.ID || got.Name != "apps" {
		t.Fatalf("updated %+v", got)
	}
	got, err = s.UpdateRepository(ctx, "apps", chartctl.RepositoryUpdate{Description: nil, Visibility: nil})
	must(t, err)
	if got.Description != "Our apps" || got.Visibility != pub {
		t.Fatalf("nothing changed %+v", got)
	}
	got, err = s.Repository(ctx, "apps")
	must(t, err)
	if got.Description != "Our apps" || got.Visibility != pub {
		t.Fatalf("read back %+v", got)
	}
	bad := chartctl.Visibility("secret")
	_, err = s.UpdateRepository(ctx, "apps", chartctl.RepositoryUpdate{Description: nil, Visibility: &bad})
	wantCode(t, err, chartctl.EINVALID)
	_, err = s.UpdateRepository(ctx, "missing", chartctl.RepositoryUpdate{Description: ptr("x"), Visibility: nil})
	wantCode(t, err, chartctl.ENOTFOUND)

	// The index format: a repository created without one is yaml (as
	// every repository stored before formats); it changes alone, and
	// lists and dumps carry it.
	if got.IndexFormat != chartctl.IndexYAML {
		t.Fatalf("index format of a repository created without one: %q", got.IndexFormat)
	}
	js := chartctl.IndexJSON
	got, err = s.UpdateRepository(ctx, "apps", chartctl.RepositoryUpdate{IndexFormat: &js})
	must(t, err)
	if got.IndexFormat != js || got.Description != "Our apps" || got.Visibility != pub {
		t.Fatalf("after changing the index format %+v", got)
	}
	all, err := s.Repositories(ctx)
	must(t, err)
	if len(all) != 1 || all[0].IndexFormat != js {
		t.Fatalf("listed %+v", all[0])
	}
	badFormat := chartctl.IndexFormat("toml")
	_, err = s.UpdateRepository(ctx, "apps", chartctl.RepositoryUpdate{IndexFormat: &badFormat})
	wantCode(t, err, chartctl.EINVALID)
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "fast", IndexFormat: js}))
	got, err = s.Repository(ctx, "fast")
	must(t, err)
	if got.IndexFormat != js {
		t.Fatalf("created as json, read back %q", got.IndexFormat)
	}
}

// testBoundToRepository: what is scoped to a repository (webhooks with
// their deliveries, quota, retention policy, OCI upload sessions) is bound
// to its ID and deleted with it (CONTRACT §18 decision 2): a repository of
// the same name created afterwards starts with none of it, a webhook,
// quota or retention policy given for the deleted one is refused, and the
// new repository's events reach none of the old webhooks.
func testBoundToRepository(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	old := &chartctl.Repository{Name: "charts", OwnerID: ada.ID}
	must(t, s.CreateRepository(ctx, old))
	hook := mustWebhook(t, s, &chartctl.Webhook{Repository: "charts", URL: "https://a.example.com/hook", Events: []string{"*"}, Active: true, Secret: []byte("s")})
	if hook.RepositoryID != old.ID {
		t.Fatalf("CreateWebhook bound the webhook to %q, want %q", hook.RepositoryID, old.ID)
	}
	if got, err := s.Webhook(ctx, hook.ID); err != nil || got.RepositoryID != old.ID {
		t.Fatalf("Webhook = %+v, %v; want RepositoryID %q", got, err, old.ID)
	}
	server := mustWebhook(t, s, &chartctl.Webhook{URL: "https://admin.example.com/hook", Events: []string{"*"}, Active: true, Secret: []byte("s")})
	if server.RepositoryID != "" {
		t.Fatalf("a server-wide webhook got RepositoryID %q", server.RepositoryID)
	}
	_, err := s.DeleteRepository(withChange("chart.push", "charts/web/1.0.0", chartctl.EventChartPushed, "evt_before", "charts"), "charts")
	// (The DeleteRepository's own event goes to the remaining webhooks.)
	must(t, err)
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: ada.ID}))
	n := int64(3)
	must(t, s.SetQuota(ctx, chartctl.QuotaRepository, "charts", chartctl.Quota{MaxVersions: &n}))
	must(t, s.SetRetentionPolicy(ctx, "charts", &chartctl.RetentionPolicy{KeepLatest: new(int)}))
	must(t, s.CreateUpload(ctx, &chartctl.OCIUpload{ID: "upload-current", Name: "charts/web"}))
	current, err := s.Repository(ctx, "charts")
	must(t, err)

	if _, err := s.Webhook(ctx, hook.ID); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("the deleted repository's webhook: %v", err)
	}
	if hooks, err := s.Webhooks(ctx, "charts", ""); err != nil || len(hooks) != 0 {
		t.Fatalf("the new repository lists %d webhooks, %v", len(hooks), err)
	}
	_, err = s.Deliveries(ctx, hook.ID, 0)
	wantCode(t, err, chartctl.ENOTFOUND)
	// A webhook created for the deleted repository (its caller was
	// authorized against it) is refused; one for the current ID is not.
	err = s.CreateWebhook(ctx, &chartctl.Webhook{Repository: "charts", RepositoryID: old.ID, URL: "https://a.example.com/late", Events: []string{"*"}, Active: true, Secret: []byte("s")})
	wantCode(t, err, chartctl.ENOTFOUND)
	err = s.CreateWebhook(ctx, &chartctl.Webhook{Repository: "nowhere", URL: "https://a.example.com/late", Events: []string{"*"}, Active: true, Secret: []byte("s")})
	wantCode(t, err, chartctl.ENOTFOUND)
	// So are a quota and a retention policy set for the deleted one.
	err = s.SetQuota(ctx, chartctl.QuotaRepository, "charts", chartctl.Quota{MaxVersions: &n, RepositoryID: old.ID})
	wantCode(t, err, chartctl.ENOTFOUND)
	err = s.SetRetentionPolicy(ctx, "charts", &chartctl.RetentionPolicy{KeepLatest: new(int), RepositoryID: old.ID})
	wantCode(t, err, chartctl.ENOTFOUND)
	must(t, s.SetQuota(ctx, chartctl.QuotaRepository, "charts", chartctl.Quota{MaxVersions: &n, RepositoryID: current.ID}))
	must(t, s.SetRetentionPolicy(ctx, "charts", &chartctl.RetentionPolicy{KeepLatest: new(int), RepositoryID: current.ID}))
	mine := mustWebhook(t, s, &chartctl.Webhook{Repository: "charts", RepositoryID: current.ID, URL: "https://b.example.com/hook", Events: []string{"*"}, Active: true, Secret: []byte("s")})
	_, _, _, err = s.PutChartVersion(withChange("chart.push", "charts/web/2.0.0", chartctl.EventChartPushed, "evt_after", "charts"),
		chart("charts", "web", "2.0.0"), chartctl.PutVersionOptions{})
	must(t, err)
	if got := eventIDs(deliveries(t, s, mine.ID)); !reflect.DeepEqual(got, []string{"evt_after"}) {
		t.Fatalf("the new webhook got %v", got)
	}

	// Deleting the new repository takes its webhook, quota, retention
	// policy and upload sessions; the server-wide webhook stays.
	ups, err := s.Uploads(ctx)
	must(t, err)
	if len(ups) != 1 {
		t.Fatalf("uploads %+v", ups)
	}
	must(t, s.CreateUpload(ctx, &chartctl.OCIUpload{ID: "upload-bound", Name: "charts/api", RepositoryID: current.ID}))
	must(t, s.CreateUpload(ctx, &chartctl.OCIUpload{ID: "upload-other", Name: "other/api"}))
	_, err = s.DeleteRepository(ctx, "charts")
	must(t, err)
	if _, err := s.Webhook(ctx, mine.ID); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("the webhook outlived its repository: %v", err)
	}
	if _, err := s.Webhook(ctx, server.ID); err != nil {
		t.Fatalf("the server-wide webhook: %v", err)
	}
	ups, err = s.Uploads(ctx)
	must(t, err)
	if len(ups) != 1 || ups[0].ID != "upload-other" {
		t.Fatalf("uploads after the deletion: %+v", ups)
	}
	ps, err := s.RetentionPolicies(ctx)
	must(t, err)
	if len(ps) != 0 {
		t.Fatalf("retention policies after the deletion: %v", ps)
	}
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: ada.ID}))
	if q, _, err := s.Quota(ctx, chartctl.QuotaRepository, "charts"); err != nil || q.MaxVersions != nil || q.MaxBytes != nil {
		t.Fatalf("the third repository inherited the quota %+v, %v", q, err)
	}
}
