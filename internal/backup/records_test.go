package backup

import (
	"bytes"
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
