package storetest

import (
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Fill writes into an empty store at least one record of every kind a
// dump carries (chartctl.DumpKinds), with the optional fields set, for
// the tests of dumps, backups, restores and migrations. It returns the
// blobs the records refer to, by digest: the store's blob store must hold
// them for a backup to be taken.
func Fill(tb testing.TB, s Store) map[string][]byte {
	tb.Helper()
	blobs := map[string][]byte{}
	blob := func(content string) (string, int64) {
		d := Digest(content)
		blobs[d] = []byte(content)
		return d, int64(len(content))
	}
	at := func(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }
	ptr := func(t time.Time) *time.Time { return &t }
	i64 := func(n int64) *int64 { return &n }

	admin := &chartctl.User{ID: "usr_admin", Email: "admin@example.com", PasswordHash: "$argon2id$hash", Admin: true,
		CreatedAt: at(0), LastSeenAt: ptr(at(50))}
	gone := &chartctl.User{ID: "usr_gone", Email: "Gone@Example.com", Disabled: true, CreatedAt: at(1)}
	ci := &chartctl.User{ID: "usr_ci", Email: "ci@example.com", CreatedAt: at(2)}
	// A user bound to an identity provider's account (issue #28).
	sso := &chartctl.User{ID: "usr_sso", Email: "sso@example.com", CreatedAt: at(2),
		Identity:  chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: "https://dex.example.com", Subject: "CgNzc28SBWxvY2Fs"},
		IDPGroups: []string{"developers", "platform-admins"}}
	for _, u := range []*chartctl.User{admin, gone, ci, sso} {
		must(tb, s.CreateUser(ctx, u))
	}
	must(tb, s.CreateAPIKey(ctx, &chartctl.APIKey{ID: "key_admin", UserID: admin.ID, Name: "laptop",
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite}, Hash: []byte("hash-admin"),
		CreatedAt: at(3), LastUsedAt: ptr(at(40)), ExpiresAt: ptr(at(60 * 24 * 90))}))
	must(tb, s.CreateAPIKey(ctx, &chartctl.APIKey{ID: "key_ci", UserID: ci.ID, Name: "ci",
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: []byte("hash-ci"), CreatedAt: at(4), Repositories: []string{"apps", "pub-*"}}))
	must(tb, s.CreateOAuthClient(ctx, &chartctl.OAuthClient{ID: "app", Name: "An app", RedirectURIs: []string{"https://app.example.com/cb"},
		SecretHash: []byte("secret-hash"), CreatedAt: at(5)}))
	must(tb, s.CreateOrganization(ctx, &chartctl.Organization{ID: "org_acme", Name: "acme", Description: "Acme Corp",
		CreatedBy: admin.ID, CreatedAt: at(6)}))
	must(tb, s.CreateRepository(ctx, &chartctl.Repository{ID: "repo_apps", Name: "apps", Description: "Our apps",
		Organization: "acme", OwnerID: admin.ID, Visibility: chartctl.VisibilityPrivate, CreatedAt: at(7)}))
	must(tb, s.CreateRepository(ctx, &chartctl.Repository{ID: "repo_pub", Name: "pub", OwnerID: ci.ID,
		Visibility: chartctl.VisibilityPublic, CreatedAt: at(8)}))
	// A mirror, its upstream password sealed (opaque bytes to a store),
	// after a failed sync.
	must(tb, s.CreateRepository(ctx, &chartctl.Repository{ID: "repo_upstream", Name: "upstream", OwnerID: admin.ID,
		Visibility: chartctl.VisibilityPublic, CreatedAt: at(8), Mirror: &chartctl.Mirror{
			MirrorSettings: chartctl.MirrorSettings{URL: "https://charts.example.com/stable", Interval: 6 * time.Hour, Username: "reader", Password: []byte("sealed\x00password")},
			MirrorState: chartctl.MirrorState{Status: chartctl.MirrorError, LastSyncAt: ptr(at(30)), LastAttemptAt: ptr(at(31)),
				Error: "https://charts.example.com/stable/index.yaml answered 503 Service Unavailable"}}}))
	must(tb, s.CreateTeam(ctx, &chartctl.Team{ID: "team_devs", Name: "devs", Organization: "acme", Description: "Developers", CreatedAt: at(9)}))
	must(tb, s.AddMember(ctx, &chartctl.Member{ID: "mem_ci", Team: "devs", Email: "ci@example.com", Role: chartctl.RoleMaintainer, AddedAt: at(10)}))
	// A team bound to identity provider groups, and what a SCIM client
	// pushed (issue #28).
	must(tb, s.CreateTeam(ctx, &chartctl.Team{ID: "team_platform", Name: "platform", Organization: "acme", CreatedAt: at(9),
		IDPGroups: []string{"platform-admins", "00gabc123"}}))
	must(tb, s.CreateSCIMToken(ctx, &chartctl.SCIMToken{ID: "scimtok_okta", Name: "okta", Hash: []byte("scim-hash"), CreatedBy: admin.ID,
		CreatedAt: at(9), LastUsedAt: ptr(at(41))}))
	must(tb, s.PutSCIMGroup(ctx, &chartctl.SCIMGroup{ID: "scimgrp_platform", DisplayName: "platform-admins", ExternalID: "00gabc123",
		Members: []string{sso.ID}, CreatedAt: at(9), UpdatedAt: at(42)}))
	must(tb, s.AddMember(ctx, &chartctl.Member{ID: "mem_later", Team: "devs", Email: "later@example.com", Role: chartctl.RoleMember, AddedAt: at(11)}))
	// Access (issue #29): grants to a team and a user, a robot mid-rotation
	// with a trusted publisher.
	for _, g := range []*chartctl.Grant{
		{ID: "grant_devs", RepositoryID: "repo_pub", Kind: chartctl.GrantTeam, SubjectID: "team_devs", Role: chartctl.RepoRoleWrite, CreatedBy: admin.ID, CreatedAt: at(12)},
		{ID: "grant_gone", RepositoryID: "repo_apps", Kind: chartctl.GrantUser, SubjectID: gone.ID, Role: chartctl.RepoRoleMaintain, CreatedAt: at(12)},
	} {
		_, err := s.PutGrant(ctx, g)
		must(tb, err)
	}
	must(tb, s.CreateRobot(ctx, &chartctl.Robot{ID: "robot_ci", OrganizationID: "org_acme", Name: "ci", Description: "Release pipeline",
		Repositories: []string{"apps", "apps-*"}, Permissions: chartctl.RobotPermissions{chartctl.RobotPull, chartctl.RobotPush},
		SecretHash: []byte("robot-hash"), PreviousSecretHash: []byte("robot-hash-old"), PreviousSecretExpiresAt: ptr(at(60 * 24)),
		ExpiresAt: ptr(at(60 * 24 * 365)), LastUsedAt: ptr(at(45)), CreatedBy: admin.ID, CreatedAt: at(13)}))
	must(tb, s.AddPublisher(ctx, &chartctl.TrustedPublisher{ID: "pub_gh", RobotID: "robot_ci", Issuer: "https://token.actions.githubusercontent.com",
		Audience: "chartctl", Claims: map[string]string{"repository": "acme/apps", "ref": "refs/tags/v*"}, CreatedBy: admin.ID, CreatedAt: at(14)}))
	must(tb, s.AddTrustEntry(ctx, &chartctl.TrustEntry{ID: "trust_release", Scope: chartctl.TrustScopeRepository, ScopeID: "repo_apps",
		Name: "release", Kind: chartctl.TrustCosignKey, Key: []byte("-----BEGIN PUBLIC KEY-----\n"), CreatedBy: admin.ID, CreatedAt: at(15)}))

	for i, v := range []string{"1.0.0", "1.1.0", "2.0.0-rc.1"} {
		d, size := blob("web archive " + v)
		cv := &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: v, AppVersion: "3.1", Description: "The web tier",
			Keywords: []string{"web", "http"}, Digest: d, ContentDigest: Digest("web files " + v), Size: size, CreatedAt: at(20 + i),
			Metadata: []byte(`{"apiVersion":"v2","name":"web","version":"` + v + `"}`), IndexEntry: []byte("  - name: web\n    version: " + v + "\n")}
		if i < 2 {
			// Stored with its JSON index entry (issue #32); the third
			// version is one stored before those were kept.
			cv.IndexEntryJSON = []byte(`{"name":"web","version":"` + v + `"}`)
		}
		if i == 0 {
			cv.ProvDigest, cv.ProvSize = blob("web signature " + v)
			cv.Verification = &chartctl.Verification{Status: chartctl.VerificationVerified, CheckedAt: at(21), Signatures: []chartctl.Signature{
				{Kind: chartctl.SignatureProvenance, Identity: "Release Bot <release@example.com>", Trust: "release", VerifiedAt: ptr(at(21))},
				{Kind: chartctl.SignatureCosign, Reason: "no trust entry verifies this key"}}}
			// A version the policy re-check found noncompliant, with a
			// lint warning kept from its push (issue #30).
			cv.Policy = &chartctl.VersionPolicy{CheckedAt: at(49), PolicyAt: at(48), Findings: []chartctl.Finding{
				{Rule: chartctl.RuleLint, Severity: chartctl.SeverityWarning, Message: "Chart.yaml: icon is recommended"},
				{Rule: chartctl.RuleRequiredFields, Severity: chartctl.SeverityError, Message: "Chart.yaml lacks maintainers"}}}
		}
		_, _, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
		must(tb, err)
	}
	d, size := blob("tool archive")
	_, _, _, err := s.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "pub", Name: "tool", Version: "0.1.0", Digest: d,
		Size: size, CreatedAt: at(25), Metadata: []byte(`{"name":"tool","version":"0.1.0"}`), IndexEntry: []byte("  - name: tool\n")}, chartctl.PutVersionOptions{})
	must(tb, err)
	must(tb, s.AddDownloads(ctx, []chartctl.DownloadCount{
		{Repository: "apps", Name: "web", Version: "1.0.0", Count: 7, Last: at(45)},
		{Repository: "pub", Name: "tool", Version: "0.1.0", Count: 2, Last: at(46)},
	}))

	must(tb, s.SetQuota(ctx, chartctl.QuotaRepository, "apps", chartctl.Quota{MaxBytes: i64(1 << 30), MaxVersions: i64(100)}))
	must(tb, s.SetQuota(ctx, chartctl.QuotaOrganization, "acme", chartctl.Quota{MaxVersions: i64(1000)}))
	keep, within := 5, 30*24*time.Hour
	must(tb, s.SetRetentionPolicy(ctx, "apps", &chartctl.RetentionPolicy{KeepLatest: &keep, KeepDownloadedWithin: &within,
		KeepMatching: ">=1.0.0", DeletePrereleasesAfter: &within, Schedule: "0 3 * * *"}))
	must(tb, s.SetPolicy(ctx, chartctl.PolicyOrganization, "org_acme", &chartctl.Policy{RequireSignature: chartctl.SignatureAny,
		HoldWindow: 10 * time.Minute, Lint: chartctl.LintError, AllowPrerelease: true, UpdatedAt: at(47)}))
	must(tb, s.SetPolicy(ctx, chartctl.PolicyRepository, "repo_apps", &chartctl.Policy{RequireSignature: "release", HoldWindow: time.Minute,
		Lint: chartctl.LintError, ValuesSchema: true, RequiredFields: []string{"maintainers"}, NamePattern: "^[a-z]+$",
		MonotonicVersions: true, ImagesPinned: true, MaxSize: 5 << 20, DenyFiles: []string{"*.pem"}, UpdatedAt: at(48)}))

	last := at(49)
	must(tb, s.CreateReplication(ctx, &chartctl.Replication{ID: "rpl_dr", Name: "apps-dr", Source: "apps", Target: "oci://registry.example/acme",
		Username: "ci", Password: []byte("sealed-password"), Filter: chartctl.ReplicationFilter{Name: "web*", Version: ">=1.0.0"},
		On: []chartctl.ReplicationOp{chartctl.ReplicationPush, chartctl.ReplicationDelete}, CreatedBy: admin.ID, CreatedAt: at(33),
		LastSuccessAt: &last, LastError: "target down"}))

	for _, w := range []*chartctl.Webhook{
		{ID: "wh_repo", Repository: "apps", URL: "https://hooks.example.com/apps", Events: []string{"chart.pushed"}, Active: true,
			Secret: []byte("sealed-secret-1"), CreatedBy: admin.ID, CreatedAt: at(30)},
		{ID: "wh_org", Organization: "acme", URL: "https://hooks.example.com/acme", Events: []string{"*"}, Active: false,
			Secret: []byte("sealed-secret-2"), CreatedBy: admin.ID, CreatedAt: at(31), DisabledReason: "Disabled after 10 failed deliveries."},
		{ID: "wh_all", URL: "https://hooks.example.com/all", Events: []string{"api_key.created", "api_key.revoked"}, Active: true,
			Secret: []byte("sealed-secret-3"), CreatedBy: admin.ID, CreatedAt: at(32)},
	} {
		mustWebhook(tb, s, w)
	}

	// OCI: an image with a config and a layer, an index listing it, a
	// signature referring to it, and the OCI manifest of a chart version.
	cfg, cfgSize := blob(`{"architecture":"amd64"}`)
	layer, layerSize := blob("layer bytes")
	// OCI blobs may be addressed by sha512.
	big := Digest512("sha512 layer bytes")
	blobs[big] = []byte("sha512 layer bytes")
	for _, l := range []struct {
		d string
		n int64
	}{{cfg, cfgSize}, {layer, layerSize}, {big, int64(len(blobs[big]))}} {
		must(tb, s.LinkBlob(ctx, "apps/image", l.d, l.n))
	}
	image := &chartctl.OCIManifest{Name: "apps/image", Digest: Digest("image manifest"), MediaType: "application/vnd.oci.image.manifest.v1+json",
		ArtifactType: "application/vnd.oci.image.config.v1+json", Annotations: map[string]string{"org.opencontainers.image.title": "image"},
		Blobs: []string{cfg, layer, big}, Content: []byte(`{"schemaVersion":2,"image":true}`), CreatedAt: at(33)}
	index := &chartctl.OCIManifest{Name: "apps/image", Digest: Digest("index manifest"), MediaType: "application/vnd.oci.image.index.v1+json",
		Manifests: []string{image.Digest}, Content: []byte(`{"schemaVersion":2,"index":true}`), CreatedAt: at(34)}
	sig := &chartctl.OCIManifest{Name: "apps/image", Digest: Digest("signature manifest"), MediaType: "application/vnd.oci.image.manifest.v1+json",
		ArtifactType: "application/vnd.dev.cosign.signature", Subject: image.Digest, Blobs: []string{cfg},
		Content: []byte(`{"schemaVersion":2,"signature":true}`), CreatedAt: at(35)}
	must(tb, s.PutManifest(ctx, image, ""))
	must(tb, s.PutManifest(ctx, index, "latest"))
	must(tb, s.PutManifest(ctx, sig, ""))
	must(tb, s.PutManifest(ctx, image, "v1"))
	webCfg, webCfgSize := blob(`{"name":"web","version":"1.1.0"}`)
	must(tb, s.LinkBlob(ctx, "apps/web", webCfg, webCfgSize))
	must(tb, s.LinkBlob(ctx, "apps/web", Digest("web archive 1.1.0"), int64(len("web archive 1.1.0"))))
	must(tb, s.PutManifest(ctx, &chartctl.OCIManifest{Name: "apps/web", Digest: Digest("web chart manifest"),
		MediaType: "application/vnd.oci.image.manifest.v1+json", ArtifactType: "application/vnd.cncf.helm.config.v1+json",
		Blobs: []string{webCfg, Digest("web archive 1.1.0")}, Content: []byte(`{"schemaVersion":2,"chart":true}`),
		Chart: &chartctl.OCIChartRef{Repository: "apps", Name: "web", Version: "1.1.0"}, CreatedAt: at(36)}, "1.1.0"))

	must(tb, s.AppendAudit(ctx,
		&chartctl.AuditEntry{Time: at(41), Actor: chartctl.Actor{UserID: admin.ID, Email: admin.Email, CredentialID: "key_admin",
			CredentialKind: chartctl.CredentialAPIKey, ClientIP: "192.0.2.7", RequestID: "req-1"},
			Action: "chart.push", Target: "apps/web/1.0.0", Outcome: chartctl.OutcomeSuccess, Organization: "acme"},
		&chartctl.AuditEntry{Time: at(42), Actor: chartctl.Actor{Email: "intruder@example.com", ClientIP: "198.51.100.1"},
			Action: "session.signin", Target: "intruder@example.com", Outcome: chartctl.OutcomeDenied},
		&chartctl.AuditEntry{Time: at(43), Action: "retention.run", Target: "apps", Outcome: chartctl.OutcomeFailed, Organization: "acme"},
		&chartctl.AuditEntry{Time: at(44), Actor: chartctl.Actor{UserID: "robot_ci", Email: "robot$acme+ci", CredentialID: "exc_1",
			CredentialKind: chartctl.CredentialExchanged, Robot: "acme/ci", Publisher: "pub_gh"},
			Action: "chart.push", Target: "apps/web/1.1.0", Outcome: chartctl.OutcomeSuccess, Organization: "acme"},
	))
	return blobs
}
