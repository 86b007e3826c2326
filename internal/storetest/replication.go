package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// runReplication runs the parts of issue #31 every engine implements:
// replications, the tasks their events queue, claims and results.
func runReplication(t *testing.T, open Open) {
	t.Run("Replications", func(t *testing.T) { testReplications(t, open) })
	t.Run("ReplicationQueue", func(t *testing.T) { testReplicationQueue(t, open) })
}

func testReplications(t *testing.T, s0 Open) {
	s := s0(t)
	src := mustRepo(t, s, "charts", "")
	r := &chartctl.Replication{Name: "dr", Source: "charts", Target: "oci://registry.example/acme", Username: "ci", Password: []byte("sealed"),
		Filter: chartctl.ReplicationFilter{Name: "web-*", Version: "^1"}, On: []chartctl.ReplicationOp{chartctl.ReplicationPush, chartctl.ReplicationDelete},
		CreatedBy: "usr_1"}
	must(t, s.CreateReplication(withChange("replication.create", "dr", "", "", ""), r))
	if r.ID == "" || r.SourceID != src.ID || r.CreatedAt.IsZero() {
		t.Fatalf("CreateReplication filled %+v", r)
	}
	got, err := s.Replication(ctx, "dr")
	must(t, err)
	if got.ID != r.ID || got.Source != "charts" || got.SourceID != src.ID || got.Target != r.Target || got.Username != "ci" ||
		string(got.Password) != "sealed" || got.Filter != r.Filter || len(got.On) != 2 || got.On[1] != chartctl.ReplicationDelete ||
		got.CreatedBy != "usr_1" || !got.CreatedAt.Equal(r.CreatedAt.Truncate(time.Microsecond)) || got.LastSuccessAt != nil {
		t.Fatalf("Replication = %+v, want %+v", got, r)
	}
	wantCode(t, s.CreateReplication(ctx, &chartctl.Replication{Name: "dr", Source: "charts", Target: "oci://x/y"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateReplication(ctx, &chartctl.Replication{Name: "other", Source: "nowhere", Target: "oci://x/y"}), chartctl.ENOTFOUND)
	wantCode(t, s.CreateReplication(ctx, &chartctl.Replication{Name: "other", Source: "charts", SourceID: "repo_gone", Target: "oci://x/y"}), chartctl.ENOTFOUND)
	must(t, s.CreateReplication(ctx, &chartctl.Replication{Name: "another", Source: "charts", Target: "oci://x/y", On: []chartctl.ReplicationOp{}}))
	all, err := s.Replications(ctx)
	must(t, err)
	if len(all) != 2 || all[0].Name != "another" || all[1].Name != "dr" {
		t.Fatalf("Replications = %+v; want another, dr", all)
	}
	_, err = s.Replication(ctx, "nowhere")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ReplicationStatus(ctx, "nowhere")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantCode(t, s.DeleteReplication(ctx, "nowhere"), chartctl.ENOTFOUND)
	must(t, s.DeleteReplication(ctx, "another"))

	// Deleting the source repository deletes its replications
	// (decision 2); a new repository of the name has none.
	must(t, s.EnqueueReplicationTasks(ctx, "dr", []*chartctl.ReplicationTask{{Op: chartctl.ReplicationPush, Chart: "web-a", Version: "1.0.0"}}))
	_, err = s.DeleteRepository(ctx, "charts")
	must(t, err)
	mustRepo(t, s, "charts", "")
	_, err = s.Replication(ctx, "dr")
	wantCode(t, err, chartctl.ENOTFOUND)
	if tasks, err := s.ClaimReplicationTasks(ctx, base.Add(time.Hour), time.Minute, 10); err != nil || len(tasks) != 0 {
		t.Fatalf("tasks of a deleted replication claimed: %+v, %v", tasks, err)
	}
}

func testReplicationQueue(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	mustRepo(t, s, "others", "")
	push := []chartctl.ReplicationOp{chartctl.ReplicationPush}
	must(t, s.CreateReplication(ctx, &chartctl.Replication{Name: "a", Source: "charts", Target: "oci://x/a", On: push, Filter: chartctl.ReplicationFilter{Name: "web*"}}))
	must(t, s.CreateReplication(ctx, &chartctl.Replication{Name: "b", Source: "charts", Target: "oci://x/b",
		On: []chartctl.ReplicationOp{chartctl.ReplicationPush, chartctl.ReplicationDelete}}))
	a, _ := s.Replication(ctx, "a")
	b, _ := s.Replication(ctx, "b")

	// Events written with a mutation queue the tasks each replication
	// asks for, in the same transaction: a push of web to both, a push
	// of api only to b (a's filter), a delete only to b (a has no
	// delete), nothing for another repository's push.
	mutate := func(ev chartctl.EventType, id, repo, subject string) {
		t.Helper()
		must(t, s.SetRetentionPolicy(withChange("x", subject, ev, id, repo), "others", nil))
	}
	mutate(chartctl.EventChartPushed, "evt_1", "charts", "web/1.0.0")
	mutate(chartctl.EventChartPushed, "evt_2", "charts", "api/2.0.0")
	mutate(chartctl.EventChartDeleted, "evt_3", "charts", "web/1.0.0")
	mutate(chartctl.EventChartPushed, "evt_4", "others", "web/9.0.0")
	mutate(chartctl.EventRepositoryUpdated, "evt_5", "charts", "charts")
	status := func(name string) chartctl.ReplicationStatus {
		t.Helper()
		st, err := s.ReplicationStatus(ctx, name)
		must(t, err)
		return st
	}
	if st := status("a"); st.Pending != 1 || st.Failed != 0 {
		t.Fatalf("a's status = %+v; want 1 pending", st)
	}
	if st := status("b"); st.Pending != 3 {
		t.Fatalf("b's status = %+v; want 3 pending", st)
	}

	// A claim takes each queue's head, and postpones it by the lease.
	now := time.Now().Add(time.Minute)
	tasks, err := s.ClaimReplicationTasks(ctx, now, time.Minute, 10)
	must(t, err)
	heads := map[string]*chartctl.ReplicationTask{}
	for _, tk := range tasks {
		heads[tk.ReplicationID] = tk
	}
	if len(tasks) != 2 || heads[a.ID] == nil || heads[b.ID] == nil || heads[a.ID].Chart != "web" || heads[a.ID].Version != "1.0.0" ||
		heads[a.ID].Op != chartctl.ReplicationPush || heads[a.ID].EventID != "evt_1" || heads[b.ID].Chart != "web" {
		t.Fatalf("claimed %+v; want the web push of a and of b", tasks)
	}
	if again, err := s.ClaimReplicationTasks(ctx, now, time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("a second claim during the lease got %+v, %v", again, err)
	}
	// A renewal keeps the claims past their lease; a task that is gone
	// is skipped.
	gone := &chartctl.ReplicationTask{ReplicationID: a.ID, Seq: 1 << 40}
	must(t, s.RenewReplicationTasks(ctx, append(slices.Clone(tasks), gone), now.Add(10*time.Minute)))
	if again, err := s.ClaimReplicationTasks(ctx, now.Add(2*time.Minute), time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("a claim after the lease of renewed tasks got %+v, %v", again, err)
	}
	if one, err := s.ClaimReplicationTasks(ctx, now.Add(11*time.Minute), time.Minute, 1); err != nil || len(one) != 1 {
		t.Fatalf("claim with limit 1 after the lease: %+v, %v", one, err)
	}

	// A failure counts, holds back the queue until due, and shows in
	// the status; a success removes the task and records the time.
	later := now.Add(3 * time.Minute)
	must(t, s.RecordReplicationResults(ctx, []chartctl.ReplicationResult{
		{ReplicationID: b.ID, TaskID: heads[b.ID].ID, At: later, Error: "target down", Next: later.Add(time.Hour)},
		{ReplicationID: a.ID, TaskID: heads[a.ID].ID, At: later},
		{ReplicationID: a.ID, TaskID: "rpt_00000000000fffff", At: later},
	}))
	if st := status("a"); st.Pending != 0 || st.LastSuccessAt == nil || !st.LastSuccessAt.Equal(later.UTC().Truncate(time.Microsecond)) || st.LastError != "" {
		t.Fatalf("a's status after a success = %+v", st)
	}
	if st := status("b"); st.Pending != 3 || st.LastError != "target down" || st.LastSuccessAt != nil {
		t.Fatalf("b's status after a failure = %+v", st)
	}
	if got, err := s.ClaimReplicationTasks(ctx, later.Add(time.Minute), time.Minute, 10); err != nil || len(got) != 0 {
		t.Fatalf("claimed %+v before the failed head is due again", got)
	}
	got, err := s.ClaimReplicationTasks(ctx, later.Add(2*time.Hour), time.Minute, 10)
	must(t, err)
	if len(got) != 1 || got[0].ID != heads[b.ID].ID || got[0].Attempts != 1 || got[0].LastError != "target down" {
		t.Fatalf("claimed %+v; want b's head again, with its attempt", got)
	}
	// Given up, it no longer holds back the next; the replication.failed
	// event the context carries is written with it, for the webhooks of
	// the source repository (issue #31).
	hook := mustWebhook(t, s, &chartctl.Webhook{Repository: "charts", URL: "https://hooks.example.com", Events: []string{string(chartctl.EventReplicationFailed)}, Active: true})
	failed := chartctl.WithChange(ctx, &chartctl.Change{Events: []*chartctl.Event{{ID: "evt_failed", Type: chartctl.EventReplicationFailed, Time: base,
		Repository: "charts", Source: "/v1/replications/b", Subject: "web/1.0.0", Data: []byte(`{"replication":"b"}`)}}})
	must(t, s.RecordReplicationResults(failed, []chartctl.ReplicationResult{{ReplicationID: b.ID, TaskID: got[0].ID, At: later, Error: "gave up", Failed: true}}))
	if st := status("b"); st.Pending != 2 || st.Failed != 1 {
		t.Fatalf("b's status after giving up = %+v", st)
	}
	if ids := eventIDs(deliveries(t, s, hook.ID)); len(ids) != 1 || ids[0] != "evt_failed" {
		t.Fatalf("deliveries of the replication.failed webhook: %v", ids)
	}
	got, err = s.ClaimReplicationTasks(ctx, later.Add(3*time.Hour), time.Minute, 10)
	must(t, err)
	if len(got) != 1 || got[0].Chart != "api" {
		t.Fatalf("claimed %+v; want b's api push", got)
	}

	// A run's tasks queue behind the pending ones.
	run := []*chartctl.ReplicationTask{{Op: chartctl.ReplicationPush, Chart: "web", Version: "0.1.0"}}
	must(t, s.EnqueueReplicationTasks(ctx, "a", run))
	if run[0].ID == "" || run[0].ReplicationID != a.ID {
		t.Fatalf("EnqueueReplicationTasks filled %+v", run[0])
	}
	wantCode(t, s.EnqueueReplicationTasks(ctx, "nowhere", run), chartctl.ENOTFOUND)
	if st := status("a"); st.Pending != 1 {
		t.Fatalf("a's status after a run = %+v", st)
	}
	must(t, s.DeleteReplication(ctx, "b"))
	if got, err := s.ClaimReplicationTasks(ctx, later.Add(4*time.Hour), time.Minute, 10); err != nil || len(got) != 1 || got[0].ReplicationID != a.ID {
		t.Fatalf("after deleting b, claimed %+v, %v; want a's run task only", got, err)
	}
}
