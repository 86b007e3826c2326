package backup

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestMirrorRecordRoundTrip: a mirror repository's settings, with its
// password still sealed, and its sync state survive a backup record; a
// record of an ordinary repository (as every backup written before
// mirrors holds, format 1 included) reads back without one.
func TestMirrorRecordRoundTrip(t *testing.T) {
	synced := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	in := &chartctl.Repository{ID: "repo_1", Name: "upstream", Visibility: chartctl.VisibilityPublic, CreatedAt: synced,
		Mirror: &chartctl.Mirror{
			MirrorSettings: chartctl.MirrorSettings{URL: "https://charts.example.com", Interval: 2 * time.Hour, Username: "u", Password: []byte("sealed\x00bytes")},
			MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorOK, LastSyncAt: &synced, LastAttemptAt: &synced},
		}}
	b, err := encodeRecord(chartctl.DumpRecord{Repository: in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRecord(b, FormatVersion)
	if err != nil || out.Repository == nil {
		t.Fatalf("decode: %+v, %v", out, err)
	}
	m := out.Repository.Mirror
	if m == nil || m.URL != in.Mirror.URL || m.Interval != 2*time.Hour || m.Username != "u" || !bytes.Equal(m.Password, in.Mirror.Password) ||
		m.Status != chartctl.MirrorOK || !m.LastSyncAt.Equal(synced) {
		t.Fatalf("mirror after the round trip: %+v", m)
	}
	old := []byte(`{"kind":"repository","data":{"id":"repo_2","name":"plain","visibility":"private","created_at":"2025-01-01T00:00:00Z"}}`)
	out, err = decodeRecord(old, 1)
	if err != nil || out.Repository.Mirror != nil {
		t.Fatalf("an older record: %+v, %v", out.Repository, err)
	}
}

// TestFormat3Kinds: the kinds format 3 added round-trip, and a backup
// claiming an older format cannot smuggle them in; an API key of an older
// backup reads back unrestricted.
func TestFormat3Kinds(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	recs := []chartctl.DumpRecord{
		{Grant: &chartctl.Grant{ID: "grant_1", RepositoryID: "repo_1", Repository: "apps", Kind: chartctl.GrantTeam, SubjectID: "team_1",
			Subject: "devs", Role: chartctl.RepoRoleMaintain, CreatedAt: at}},
		{Robot: &chartctl.Robot{ID: "robot_1", OrganizationID: "org_1", Organization: "acme", Name: "ci", Repositories: []string{"apps-*"},
			Permissions: chartctl.RobotPermissions{chartctl.RobotPull, chartctl.RobotDelete}, SecretHash: []byte("h"), CreatedAt: at}},
		{Publisher: &chartctl.TrustedPublisher{ID: "pub_1", RobotID: "robot_1", Issuer: "https://ci.example.com", Audience: "chartctl",
			Claims: map[string]string{"sub": "repo:acme/*"}, CreatedAt: at}},
		{APIKey: &chartctl.APIKey{ID: "key_1", UserID: "usr_1", Name: "k", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: []byte("k"),
			CreatedAt: at, Repositories: []string{"apps"}}},
	}
	for _, in := range recs {
		b, err := encodeRecord(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := decodeRecord(b, FormatVersion)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		ib, _ := json.Marshal(in)
		ob, _ := json.Marshal(out)
		if !bytes.Equal(ib, ob) {
			t.Errorf("round trip:\n in %s\nout %s", ib, ob)
		}
		if in.Kind() != chartctl.DumpAPIKey {
			if _, err := decodeRecord(b, 2); err == nil {
				t.Errorf("a format 2 backup read a %s record", in.Kind())
			}
		}
	}
	old := []byte(`{"kind":"api_key","data":{"id":"key_2","user_id":"usr_1","name":"k","scopes":["repo:read"],"hash":"aw==","created_at":"2025-01-01T00:00:00Z"}}`)
	out, err := decodeRecord(old, 2)
	if err != nil || out.APIKey == nil || out.APIKey.Repositories != nil {
		t.Fatalf("an older key: %+v, %v", out.APIKey, err)
	}
}

// TestIndexFormatRecord: a repository's index format survives a backup
// record, and a record written before format 5 (without one) restores
// as yaml, the index that repository served.
func TestIndexFormatRecord(t *testing.T) {
	in := &chartctl.Repository{ID: "repo_1", Name: "fast", Visibility: chartctl.VisibilityPublic, IndexFormat: chartctl.IndexJSON, CreatedAt: time.Unix(0, 0).UTC()}
	b, err := encodeRecord(chartctl.DumpRecord{Repository: in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRecord(b, FormatVersion)
	if err != nil || out.Repository.IndexFormat != chartctl.IndexJSON {
		t.Fatalf("decode: %+v, %v", out.Repository, err)
	}
	old := []byte(`{"kind":"repository","data":{"id":"repo_2","name":"plain","visibility":"private","created_at":"2025-01-01T00:00:00Z"}}`)
	out, err = decodeRecord(old, 4)
	if err != nil || out.Repository.IndexFormat != chartctl.IndexYAML {
		t.Fatalf("a format 4 record: %+v, %v", out.Repository, err)
	}
}

// TestHeldVersionRecordRoundTrip: a held version's deadline survives a
// backup record (format 9); a version of an older record is not held.
func TestHeldVersionRecordRoundTrip(t *testing.T) {
	until := time.Date(2026, 5, 6, 7, 18, 9, 0, time.UTC)
	in := &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: "1.0.0", Digest: "sha256:" + string(bytes.Repeat([]byte("a"), 64)),
		Size: 10, CreatedAt: until.Add(-10 * time.Minute), HeldUntil: &until}
	b, err := encodeRecord(chartctl.DumpRecord{ChartVersion: in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRecord(b, FormatVersion)
	if err != nil || out.ChartVersion == nil || out.ChartVersion.HeldUntil == nil || !out.ChartVersion.HeldUntil.Equal(until) {
		t.Fatalf("held version after the round trip: %+v, %v", out.ChartVersion, err)
	}
	in.HeldUntil = nil
	if b, err = encodeRecord(chartctl.DumpRecord{ChartVersion: in}); err != nil {
		t.Fatal(err)
	}
	if out, err = decodeRecord(b, 8); err != nil || out.ChartVersion.Held() {
		t.Fatalf("a version of format 8: %+v, %v", out.ChartVersion, err)
	}
}

// TestImagesRecord: a chart version's image record survives a backup
// record (format 9), and a version without one (pending, or of an older
// backup) reads back pending.
func TestImagesRecord(t *testing.T) {
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	in := &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: "1.0.0", Digest: "sha256:" + string(bytes.Repeat([]byte("a"), 64)), CreatedAt: at,
		Images: &chartctl.Images{Images: []string{"docker.io/library/nginx:1.25.3"}, Source: chartctl.ImagesRendered, KubeVersion: "v1.31.0", CheckedAt: at}}
	b, err := encodeRecord(chartctl.DumpRecord{ChartVersion: in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRecord(b, FormatVersion)
	if err != nil || out.ChartVersion == nil {
		t.Fatalf("decode: %+v, %v", out, err)
	}
	ib, _ := json.Marshal(in.Images)
	ob, _ := json.Marshal(out.ChartVersion.Images)
	if !bytes.Equal(ib, ob) {
		t.Fatalf("images after the round trip:\n in %s\nout %s", ib, ob)
	}
	old := []byte(`{"kind":"chart_version","data":{"repository":"apps","name":"web","version":"1.0.0","digest":"sha256:aa","size":1,"created_at":"2025-01-01T00:00:00Z"}}`)
	out, err = decodeRecord(old, 8)
	if err != nil || out.ChartVersion == nil || out.ChartVersion.Images != nil {
		t.Fatalf("an older version: %+v, %v", out.ChartVersion, err)
	}
}

// TestProxyRecordRoundTrip: a proxy repository's settings, its password
// still sealed, survive a backup record (format 9); a format 8 record of
// an ordinary repository reads back without one.
func TestProxyRecordRoundTrip(t *testing.T) {
	in := &chartctl.Repository{ID: "repo_3", Name: "cached", Visibility: chartctl.VisibilityPublic, CreatedAt: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC),
		Proxy: &chartctl.Proxy{URL: "https://charts.example.com", Username: "u", Password: []byte("sealed\x00bytes"), TTL: 10 * time.Minute,
			Include: []string{"ingress-*"}, Exclude: []string{"*-test"}}}
	b, err := encodeRecord(chartctl.DumpRecord{Repository: in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRecord(b, FormatVersion)
	if err != nil || out.Repository == nil {
		t.Fatalf("decode: %+v, %v", out, err)
	}
	p := out.Repository.Proxy
	if p == nil || p.URL != in.Proxy.URL || p.TTL != 10*time.Minute || p.Username != "u" || !bytes.Equal(p.Password, in.Proxy.Password) ||
		len(p.Include) != 1 || p.Include[0] != "ingress-*" || len(p.Exclude) != 1 {
		t.Fatalf("proxy after the round trip: %+v", p)
	}
	old := []byte(`{"kind":"repository","data":{"id":"repo_2","name":"plain","visibility":"private","created_at":"2025-01-01T00:00:00Z"}}`)
	if out, err := decodeRecord(old, 8); err != nil || out.Repository.Proxy != nil {
		t.Fatalf("a format 8 record: %+v, %v", out.Repository, err)
	}
}
