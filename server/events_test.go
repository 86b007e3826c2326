package server_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
)

// withWebhooks gives the test server a secrets key and lets webhooks reach
// the loopback receivers of the tests.
func withWebhooks(onEvents func()) testkit.Option {
	return func(s *server.Server) {
		box, err := secrets.New(bytes.Repeat([]byte("k"), 32))
		if err != nil {
			panic(err)
		}
		s.Secrets, s.OnEvents = box, onEvents
		s.Config.AllowPrivateWebhooks = true
	}
}

// lastAudit returns the newest audit entry.
func lastAudit(t *testing.T, s *testkit.Server) client.AuditEntry {
	t.Helper()
	r := s.Do(t, "GET", "/v1/audit?limit=1", s.AdminKey, nil)
	var env envelope[[]client.AuditEntry]
	r.JSON(t, &env)
	if r.StatusCode != 200 || len(env.Data) != 1 {
		t.Fatalf("audit: %d %s", r.StatusCode, r.Body)
	}
	return env.Data[0]
}

// mutatingRoute is a request to one mutating route of the route table:
// the concrete path and body, sent as the admin, and the action its audit
// entry must name.
type mutatingRoute struct {
	route  string // "METHOD pattern", as the route table has it
	path   func() string
	body   func() (body []byte, contentType string)
	action string
}

func jsonBody(v string) func() ([]byte, string) {
	return func() ([]byte, string) { return []byte(v), "application/json" }
}

// TestEveryMutatingRouteIsAudited walks the real server's route table and
// sends a request to every mutating route, as an admin (the entry must
// say success, with the actor, credential, address and request id) and
// without a credential (denied). A route missing from the table below
// fails the test: add it, with the audit entry it must leave.
func TestEveryMutatingRouteIsAudited(t *testing.T) {
	s := testkit.StartServer(t, withWebhooks(nil), func(s *server.Server) { s.Config.AllowPrivateUpstreams = true })
	var (
		webhookID, deliveryID, ownKeyID, userKeyID, memberID, publisherID, scimTokenID string
	)
	// A cosign public key for the trust entries.
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	trustJSON, err := json.Marshal(map[string]string{"name": "release", "kind": "cosign-key", "key": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))})
	if err != nil {
		t.Fatal(err)
	}
	trustBody := jsonBody(string(trustJSON))
	// A mirror to ask a sync of (no syncer runs here: the request is
	// recorded and the status says syncing).
	if r := s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]any{"name": "m1", "mirror": map[string]string{"url": "http://127.0.0.1:9/charts"}}); r.StatusCode != 200 {
		t.Fatalf("create mirror: %d %s", r.StatusCode, r.Body)
	}
	// A proxy whose (empty) cache to purge; nothing fetches here.
	if r := s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]any{"name": "p1", "proxy": map[string]string{"url": "https://charts.example.com/stable"}}); r.StatusCode != 200 {
		t.Fatalf("create proxy: %d %s", r.StatusCode, r.Body)
	}
	chartBody := func(version string) func() ([]byte, string) {
		return func() ([]byte, string) {
			return testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "app", Version: version})})
		}
	}
	fixed := func(p string) func() string { return func() string { return p } }
	// The robot whose trusted publisher is added and removed, made in the
	// store once organization o1 exists.
	var pubBot string
	pubRobot := func() string {
		if pubBot == "" {
			ctx := context.Background()
			org, err := s.Store.Organization(ctx, "o1")
			if err != nil {
				t.Fatal(err)
			}
			r := &chartctl.Robot{OrganizationID: org.ID, Name: "pub-bot", Repositories: []string{"o1-*"}, Permissions: chartctl.RobotPermissions{chartctl.RobotPush},
				SecretHash: token.Hash("unused"), CreatedBy: s.Admin.ID}
			if err := s.Store.CreateRobot(ctx, r); err != nil {
				t.Fatal(err)
			}
			pubBot = r.Name
		}
		return pubBot
	}
	routes := []mutatingRoute{
		{"POST /v1/repositories", fixed("/v1/repositories"), jsonBody(`{"name":"r1"}`), "repository.create"},
		{"PATCH /v1/repositories/:repo", fixed("/v1/repositories/r1"), jsonBody(`{"description":"Updated"}`), "repository.update"},
		{"POST /v1/repositories/:repo/charts", fixed("/v1/repositories/r1/charts"), chartBody("1.0.0"), "chart.push"},
		{"DELETE /v1/repositories/:repo/charts/:name/:version", fixed("/v1/repositories/r1/charts/app/1.0.0"), nil, "chart.delete"},
		{"POST /helm/api/:repo/charts", fixed("/helm/api/r1/charts"), chartBody("2.0.0"), "chart.push"},
		{"DELETE /helm/api/:repo/charts/:name/:version", fixed("/helm/api/r1/charts/app/2.0.0"), nil, "chart.delete"},
		{"POST /v1/organizations", fixed("/v1/organizations"), jsonBody(`{"name":"o1"}`), "organization.create"},
		{"POST /v1/teams", fixed("/v1/teams"), jsonBody(`{"name":"t1","organization":"o1"}`), "team.create"},
		{"POST /v1/teams/:team/members", fixed("/v1/teams/t1/members"), jsonBody(`{"email":"m@example.com"}`), "team.member_add"},
		{"PATCH /v1/teams/:team/members/:member", func() string { return "/v1/teams/t1/members/" + memberID }, jsonBody(`{"role":"maintainer"}`), "team.member_role_change"},
		{"DELETE /v1/teams/:team/members/:member", func() string { return "/v1/teams/t1/members/" + memberID }, nil, "team.member_remove"},
		{"POST /v1/users", fixed("/v1/users"), jsonBody(`{"email":"u2@example.com"}`), "user.create"},
		{"POST /v1/repositories/:repo/access", fixed("/v1/repositories/r1/access"), jsonBody(`{"user":"u2@example.com","role":"write"}`), "repository.access_granted"},
		{"DELETE /v1/repositories/:repo/access/:kind/:name", fixed("/v1/repositories/r1/access/user/u2@example.com"), nil, "repository.access_revoked"},
		{"POST /v1/users/:email/api-keys", fixed("/v1/users/u2@example.com/api-keys"), jsonBody(`{"name":"ci","scopes":["repo:read"]}`), "api_key.create"},
		{"DELETE /v1/users/:email/api-keys/:id", func() string { return "/v1/users/u2@example.com/api-keys/" + userKeyID }, nil, "api_key.revoke"},
		{"PATCH /v1/users/:email", fixed("/v1/users/u2@example.com"), jsonBody(`{"disabled":true}`), "user.update"},
		{"POST /v1/user/api-keys", fixed("/v1/user/api-keys"), jsonBody(`{"name":"mine","scopes":["repo:read"]}`), "api_key.create"},
		{"DELETE /v1/user/api-keys/:id", func() string { return "/v1/user/api-keys/" + ownKeyID }, nil, "api_key.revoke"},
		{"POST /v1/repositories/:repo/webhooks", fixed("/v1/repositories/r1/webhooks"), jsonBody(`{"url":"http://127.0.0.1:9/hook","events":["*"],"active":false}`), "webhook.create"},
		{"POST /v1/organizations/:org/webhooks", fixed("/v1/organizations/o1/webhooks"), jsonBody(`{"url":"http://127.0.0.1:9/hook","events":["chart.pushed"],"active":false}`), "webhook.create"},
		{"POST /v1/admin/webhooks", fixed("/v1/admin/webhooks"), jsonBody(`{"url":"http://127.0.0.1:9/hook","events":["*"],"active":false}`), "webhook.create"},
		{"PATCH /v1/webhooks/:id", func() string { return "/v1/webhooks/" + webhookID }, jsonBody(`{"events":["chart.pushed","chart.deleted"]}`), "webhook.update"},
		{"POST /v1/webhooks/:id/ping", func() string { return "/v1/webhooks/" + webhookID + "/ping" }, nil, "webhook.ping"},
		{"POST /v1/webhooks/:id/deliveries/:delivery/redeliver", func() string { return "/v1/webhooks/" + webhookID + "/deliveries/" + deliveryID + "/redeliver" }, nil, "webhook.redeliver"},
		{"DELETE /v1/webhooks/:id", func() string { return "/v1/webhooks/" + webhookID }, nil, "webhook.delete"},
		{"PUT /v1/repositories/:repo/quota", fixed("/v1/repositories/r1/quota"), jsonBody(`{"max_bytes":1000000}`), "quota.set"},
		{"PUT /v1/repositories/:repo/retention", fixed("/v1/repositories/r1/retention"), jsonBody(`{"keep_latest":3}`), "retention.set"},
		{"POST /v1/repositories/:repo/retention/run", fixed("/v1/repositories/r1/retention/run?dry_run=true"), nil, "retention.run"},
		{"PUT /v1/organizations/:org/quota", fixed("/v1/organizations/o1/quota"), jsonBody(`{"max_versions":100}`), "quota.set"},
		{"POST /v1/organizations/:org/robots", fixed("/v1/organizations/o1/robots"), jsonBody(`{"name":"ci","repositories":["o1-*"],"permissions":["push"]}`), "robot.create"},
		{"PATCH /v1/organizations/:org/robots/:name", fixed("/v1/organizations/o1/robots/ci"), jsonBody(`{"disabled":true}`), "robot.update"},
		{"POST /v1/organizations/:org/robots/:name/rotate", fixed("/v1/organizations/o1/robots/ci/rotate"), jsonBody(`{"grace":"10m"}`), "robot.rotate"},
		{"DELETE /v1/organizations/:org/robots/:name", fixed("/v1/organizations/o1/robots/ci"), nil, "robot.delete"},
		{"POST /v1/organizations/:org/robots/:name/publishers", func() string { return "/v1/organizations/o1/robots/" + pubRobot() + "/publishers" },
			jsonBody(`{"issuer":"https://issuer.example.com","audience":"https://charts.example.com","claims":{"sub":"project_path:o1/charts:ref_type:branch:ref:main"}}`), "publisher.add"},
		{"DELETE /v1/organizations/:org/robots/:name/publishers/:id", func() string { return "/v1/organizations/o1/robots/" + pubRobot() + "/publishers/" + publisherID }, nil, "publisher.remove"},
		{"PATCH /v1/teams/:team", fixed("/v1/teams/t1"), jsonBody(`{"idp_groups":["platform"]}`), "team.update"},
		{"POST /v1/admin/scim-tokens", fixed("/v1/admin/scim-tokens"), jsonBody(`{"name":"okta"}`), "scim_token.create"},
		{"DELETE /v1/admin/scim-tokens/:id", func() string { return "/v1/admin/scim-tokens/" + scimTokenID }, nil, "scim_token.revoke"},
		{"POST /v1/repositories/:repo/trust", fixed("/v1/repositories/r1/trust"), trustBody, "trust.add"},
		{"DELETE /v1/repositories/:repo/trust/:name", fixed("/v1/repositories/r1/trust/release"), nil, "trust.remove"},
		{"POST /v1/organizations/:org/trust", fixed("/v1/organizations/o1/trust"), trustBody, "trust.add"},
		{"DELETE /v1/organizations/:org/trust/:name", fixed("/v1/organizations/o1/trust/release"), nil, "trust.remove"},
		{"PUT /v1/organizations/:org/policy", fixed("/v1/organizations/o1/policy"), jsonBody(`{"lint":"warning"}`), "policy.update"},
		{"PUT /v1/repositories/:repo/policy", fixed("/v1/repositories/r1/policy"), jsonBody(`{"lint":"warning"}`), "policy.update"},
		{"PUT /v1/repositories/:repo/artifacthub", fixed("/v1/repositories/r1/artifacthub"), jsonBody(`{"owners":[{"name":"ada"}]}`), "repository.artifacthub"},
		{"POST /v1/replications", fixed("/v1/replications"), jsonBody(`{"name":"rp1","source":"r1","target":"oci://registry.example.com/acme"}`), "replication.create"},
		{"POST /v1/replications/:name/run", fixed("/v1/replications/rp1/run"), nil, "replication.run"},
		{"DELETE /v1/replications/:name", fixed("/v1/replications/rp1"), nil, "replication.delete"},
		{"POST /v1/admin/verify", fixed("/v1/admin/verify"), nil, "backup.verify"},
		{"DELETE /v1/users/:email", fixed("/v1/users/u2@example.com"), nil, "user.delete"},
		{"POST /v1/repositories/:repo/sync", fixed("/v1/repositories/m1/sync"), nil, "repository.sync"},
		{"DELETE /v1/repositories/:repo/cache", fixed("/v1/repositories/p1/cache"), nil, "repository.cache_purge"},
		{"DELETE /v1/repositories/:repo", fixed("/v1/repositories/r1"), nil, "repository.delete"},
		{"DELETE /v1/organizations/:org", fixed("/v1/organizations/o1"), nil, "organization.delete"},
	}

	// Every mutating route of the API and the ChartMuseum API is listed.
	var table, listed []string
	for _, r := range s.Routes() {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == "echo_route_not_found" || !(strings.HasPrefix(r.Path, "/v1/") || strings.HasPrefix(r.Path, "/helm/api/")) {
			continue
		}
		if r.Path == "/v1/oidc/token" {
			// Takes no credential (the CI's token is the proof): its
			// audit, success and refusals, is TestTokenExchangeRefusals'.
			continue
		}
		table = append(table, r.Method+" "+r.Path)
	}
	for _, m := range routes {
		listed = append(listed, m.route)
	}
	sort.Strings(table)
	sort.Strings(listed)
	if strings.Join(table, "\n") != strings.Join(listed, "\n") {
		t.Fatalf("mutating routes and the audited list differ:\nroute table:\n%s\n\nlisted here:\n%s", strings.Join(table, "\n"), strings.Join(listed, "\n"))
	}

	for _, m := range routes {
		var body []byte
		ctype := ""
		if m.body != nil {
			body, ctype = m.body()
		}
		method, _, _ := strings.Cut(m.route, " ")
		path := m.path()

		// Without a credential: refused, and audited as denied.
		r := s.Do(t, method, path, "", bytes.NewReader(body), "Content-Type", ctype)
		if r.StatusCode != 401 {
			t.Fatalf("%s anonymous: %d %s", m.route, r.StatusCode, r.Body)
		}
		if e := lastAudit(t, s); e.Action != m.action || e.Outcome != "denied" || e.Actor.UserID != nil || e.ClientIP != "127.0.0.1" {
			t.Fatalf("%s anonymous left %+v", m.route, e)
		}

		r = s.Do(t, method, path, s.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
		if r.StatusCode/100 != 2 {
			t.Fatalf("%s: %d %s", m.route, r.StatusCode, r.Body)
		}
		e := lastAudit(t, s)
		if e.Action != m.action || e.Outcome != "success" || e.Actor.Email == nil || *e.Actor.Email != "admin@example.com" ||
			e.Credential.Kind == nil || *e.Credential.Kind != "api_key" || e.Credential.ID == nil || !strings.HasPrefix(*e.Credential.ID, "key_") ||
			e.ClientIP != "127.0.0.1" || e.RequestID != r.Header.Get("X-Request-Id") || e.Target == "" || !strings.HasPrefix(e.ID, "aud_") {
			t.Fatalf("%s left %+v (actor %v, credential %v)", m.route, e, e.Actor, e.Credential)
		}

		var out struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		r.JSON(t, &out)
		switch m.route {
		case "POST /v1/teams/:team/members":
			memberID = out.Data.ID
		case "POST /v1/users/:email/api-keys":
			userKeyID = out.Data.ID
		case "POST /v1/user/api-keys":
			ownKeyID = out.Data.ID
		case "POST /v1/organizations/:org/robots/:name/publishers":
			publisherID = out.Data.ID
		case "POST /v1/repositories/:repo/webhooks":
			webhookID = out.Data.ID
		case "POST /v1/webhooks/:id/ping":
			deliveryID = out.Data.ID
		case "POST /v1/admin/scim-tokens":
			scimTokenID = out.Data.ID
		}
	}
}

// TestAuditFiltersAndPagination answers "who deleted that version" and
// walks the log with the cursor.
func TestAuditFiltersAndPagination(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "apps", "")
	dev := s.MustUser(t, "dev@example.com", false)
	devKey := s.MustKey(t, dev, chartctl.AllScopes...)
	for i := 0; i < 7; i++ {
		if r := s.Upload(t, "apps", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0." + string(rune('0'+i))}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	if r := s.Do(t, "DELETE", "/v1/repositories/apps/charts/web/1.0.3", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	// A non-admin may not read the log, and the attempt is not an entry
	// (reads are not audited).
	expectError(t, s.Do(t, "GET", "/v1/audit", devKey, nil), 403, "forbidden", "")

	c := clientFor(t, s, s.AdminKey)
	got, _, err := c.Audit.List(t.Context(), &client.AuditOptions{Action: "chart.delete", Target: "apps/web/1.0.3"})
	if err != nil || len(got) != 1 || *got[0].Actor.Email != "admin@example.com" {
		t.Fatalf("who deleted: %v %+v", err, got)
	}

	// Seven pushes, three a page, newest first, without gaps or repeats.
	var versions []string
	opts := &client.AuditOptions{Action: "chart.push", Limit: 3}
	for page := 0; ; page++ {
		entries, resp, err := c.Audit.List(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			versions = append(versions, e.Target)
		}
		if resp.Meta.NextCursor == "" {
			break
		}
		if page > 5 {
			t.Fatal("cursor does not end")
		}
		opts.Cursor = resp.Meta.NextCursor
	}
	want := "apps/web/1.0.6 apps/web/1.0.5 apps/web/1.0.4 apps/web/1.0.3 apps/web/1.0.2 apps/web/1.0.1 apps/web/1.0.0"
	if strings.Join(versions, " ") != want {
		t.Fatalf("pages = %v", versions)
	}
	// A resource prefix matches its actions; an actor filter by email.
	all, _, err := c.Audit.List(t.Context(), &client.AuditOptions{Action: "chart", Actor: "ADMIN@example.com"})
	if err != nil || len(all) != 8 {
		t.Fatalf("chart.* by admin: %v %d", err, len(all))
	}
	none, _, err := c.Audit.List(t.Context(), &client.AuditOptions{Actor: "dev@example.com"})
	if err != nil || len(none) != 0 {
		t.Fatalf("dev: %v %+v", err, none)
	}
	expectError(t, s.Do(t, "GET", "/v1/audit?cursor=bogus", s.AdminKey, nil), 400, "invalid_parameter", "cursor")
	expectError(t, s.Do(t, "GET", "/v1/audit?since=yesterday", s.AdminKey, nil), 400, "invalid_parameter", "since")
	if r := s.Do(t, "GET", "/v1/audit?since=1h&until=2099-01-01T00:00:00Z&limit=100", s.AdminKey, nil); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`"meta":{"next_cursor":null,"limit":100}`)) {
		t.Fatalf("since/until: %d %s", r.StatusCode, r.Body)
	}
}

func clientFor(t *testing.T, s *testkit.Server, tok string) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, client.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuditOrganizationOwner: an organization owner reads the entries of
// their organization, and nothing else.
func TestAuditOrganizationOwner(t *testing.T) {
	s := testkit.StartServer(t)
	owner := s.MustUser(t, "owner@example.com", false)
	ownerKey := s.MustKey(t, owner, chartctl.AllScopes...)
	for _, r := range []*testkit.Response{
		s.DoJSON(t, "POST", "/v1/organizations", ownerKey, map[string]string{"name": "acme"}),
		s.DoJSON(t, "POST", "/v1/repositories", ownerKey, map[string]string{"name": "acme-apps", "organization": "acme"}),
		s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "elsewhere"}),
	} {
		if r.StatusCode != 200 {
			t.Fatalf("setup: %d %s", r.StatusCode, r.Body)
		}
	}
	r := s.Do(t, "GET", "/v1/audit", ownerKey, nil)
	var env envelope[[]client.AuditEntry]
	r.JSON(t, &env)
	var targets []string
	for _, e := range env.Data {
		targets = append(targets, e.Action+" "+e.Target)
	}
	if r.StatusCode != 200 || strings.Join(targets, ", ") != "repository.create acme-apps, organization.create acme" {
		t.Fatalf("owner's view: %d %v", r.StatusCode, targets)
	}
	member := s.MustUser(t, "member@example.com", false)
	expectError(t, s.Do(t, "GET", "/v1/audit", s.MustKey(t, member, chartctl.AllScopes...), nil), 403, "forbidden", "")
}
