// Package migrate copies a chartctl store and its blobs to other engines
// (`chartctl admin migrate`: a single node's bbolt file and blob files to
// PostgreSQL and an S3-compatible store). See docs/scale-out.md for the
// runbook.
//
// The records go through the one path every copy takes: the source's
// dump (chartctl.Exporter, one read transaction) loaded by internal/dump,
// in one transaction of the target (postgres.DB.Import), so a migration
// that stops writes no record and the next run starts afresh. Blobs, the
// long part, go first and are resumable: a blob the target holds already
// is not copied again. At the end the target's records are read back and
// compared with the source's, and every blob is read back and checked
// against its digest.
//
// What is copied is what a dump carries (chartctl.DumpRecord): users with
// password hashes and flags, API keys, OAuth clients, organizations,
// teams, members, repositories, chart versions with provenance, index
// entries and download counters, quotas, retention policies, webhooks
// (secrets stay sealed: the replicas need the single node's secrets key
// file), the OCI registry's links, manifests and tags, and the audit log.
// Only the blobs those records refer to are copied (orphans stay behind).
package migrate

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/text"
)

// Summary counts what the source holds and what was copied in this run.
type Summary struct {
	// Blobs is how many blobs the records refer to, BlobsCopied how many
	// this run copied (the rest were there from an earlier run) and
	// BlobBytes their size.
	Blobs, BlobsCopied int
	BlobBytes          int64
	// Records counts the records copied, by kind (chartctl.DumpKinds).
	Records dump.Counts
}

// String renders the summary for a person.
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s %d (%d copied now, %s)", "blobs:", s.Blobs, s.BlobsCopied, text.HumanBytes(s.BlobBytes))
	for _, k := range chartctl.DumpKinds {
		fmt.Fprintf(&b, "\n%-20s %d", dump.Plural(k)+":", s.Records[k])
	}
	return b.String()
}

// Migration is one copy from a source to a target.
type Migration struct {
	Src      chartctl.Exporter
	SrcBlobs chartctl.BlobStore
	// Dst must hold no record.
	Dst      dump.Target
	DstBlobs chartctl.AlgorithmBlobStore
	// Transaction, if set, runs fn in one transaction of Dst
	// (postgres.DB.Import); without it a failed run may leave records in
	// Dst.
	Transaction func(ctx context.Context, fn func(dump.Target) error) error
	// Progress receives a progress bar (carriage returns, one line per
	// phase); nil discards it.
	Progress io.Writer

	sum Summary
}

// Run copies everything, then verifies the target.
func (m *Migration) Run(ctx context.Context) (*Summary, error) {
	if m.Progress == nil {
		m.Progress = io.Discard
	}
	records, err := dump.Read(ctx, m.Src)
	if err != nil {
		return &m.sum, fmt.Errorf("read the source: %w", err)
	}
	if err := requireEmpty(ctx, m.Dst); err != nil {
		return &m.sum, err
	}
	blobs := dump.Blobs(records)
	steps := []struct {
		name, hint string
		fn         func(context.Context) error
	}{
		{"copy blobs", "run the same command again to resume: blobs already copied are kept",
			func(ctx context.Context) error { return m.copyBlobs(ctx, blobs) }},
		{"copy records", "no record was written; run the same command again",
			func(ctx context.Context) error { return m.copyRecords(ctx, records) }},
		{"verify blobs", "the records were copied; check the blob store",
			func(ctx context.Context) error { return m.verifyBlobs(ctx, blobs) }},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			fmt.Fprintln(m.Progress)
			return &m.sum, fmt.Errorf("%s (%s): %w", s.name, s.hint, err)
		}
	}
	return &m.sum, nil
}

// requireEmpty refuses a target that holds records.
func requireEmpty(ctx context.Context, st dump.Target) error {
	empty, kind, err := dump.Empty(ctx, st)
	if err != nil {
		return fmt.Errorf("check that the target is empty: %w", err)
	}
	if !empty {
		return fmt.Errorf("the target database already holds data (at least one %s): migrate only into an empty database (a migration that stopped wrote no records, so one that completed did)", dump.Singular(kind))
	}
	return nil
}

// bar draws a progress bar for phase at done of total.
func (m *Migration) bar(phase string, done, total int) {
	const width = 30
	filled := width
	pct := 100
	if total > 0 {
		filled, pct = width*done/total, 100*done/total
	}
	fmt.Fprintf(m.Progress, "\r%-24s [%s%s] %3d%% %d/%d", phase, strings.Repeat("#", filled), strings.Repeat(".", width-filled), pct, done, total)
	if done == total {
		fmt.Fprintln(m.Progress)
	}
}

func (m *Migration) copyBlobs(ctx context.Context, blobs []dump.Blob) error {
	m.sum.Blobs = len(blobs)
	for i, b := range blobs {
		m.bar("blobs", i, len(blobs))
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := m.DstBlobs.ModTime(ctx, b.Digest); err == nil {
			continue // copied by an earlier run (commits are atomic)
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
		n, err := m.copyBlob(ctx, b.Digest)
		if err != nil {
			return fmt.Errorf("blob %s: %w", b.Digest, err)
		}
		m.sum.BlobsCopied++
		m.sum.BlobBytes += n
	}
	m.bar("blobs", len(blobs), len(blobs))
	return nil
}

func (m *Migration) copyBlob(ctx context.Context, d string) (int64, error) {
	alg, _, _ := strings.Cut(d, ":")
	src, err := m.SrcBlobs.Open(ctx, d)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	w, err := m.DstBlobs.CreateAlgorithm(ctx, alg)
	if err != nil {
		return 0, err
	}
	defer func() { _ = w.Abort() }()
	n, err := io.Copy(w, src)
	if err != nil {
		return 0, err
	}
	if got := w.Digest(); got != d {
		return 0, fmt.Errorf("the source blob's bytes hash to %s: it is damaged (run chartctl admin verify on the source)", got)
	}
	if _, err := w.Commit(); err != nil {
		return 0, err
	}
	return n, nil
}

// copyRecords loads the source's records into the target in one
// transaction, reads them back and compares.
func (m *Migration) copyRecords(ctx context.Context, records []chartctl.DumpRecord) error {
	run := m.Transaction
	if run == nil {
		run = func(ctx context.Context, fn func(dump.Target) error) error { return fn(m.Dst) }
	}
	m.bar("records", 0, len(records))
	err := run(ctx, func(st dump.Target) error {
		if err := requireEmpty(ctx, st); err != nil {
			return err
		}
		counts, err := dump.Load(ctx, st, records)
		if err != nil {
			return err
		}
		back, err := dump.Read(ctx, st)
		if err != nil {
			return fmt.Errorf("read the copied records back: %w", err)
		}
		if d := dump.Diff(records, back, 5); d != "" {
			return fmt.Errorf("the target's records differ from the source's: %s", d)
		}
		m.sum.Records = counts
		return nil
	})
	if err != nil {
		return err
	}
	m.bar("records", len(records), len(records))
	return nil
}

// verifyBlobs reads every blob back from the target and checks its
// digest.
func (m *Migration) verifyBlobs(ctx context.Context, blobs []dump.Blob) error {
	for i, b := range blobs {
		m.bar("verify blobs", i, len(blobs))
		if err := verifyBlob(ctx, m.DstBlobs, b.Digest); err != nil {
			return err
		}
	}
	m.bar("verify blobs", len(blobs), len(blobs))
	return nil
}

// verifyBlob reads the blob d from s and checks its digest.
func verifyBlob(ctx context.Context, s chartctl.BlobStore, d string) error {
	alg, want, _ := strings.Cut(d, ":")
	var h hash.Hash
	switch alg {
	case "sha512":
		h = sha512.New()
	default:
		h = sha256.New()
	}
	b, err := s.Open(ctx, d)
	if err != nil {
		return fmt.Errorf("blob %s in the target: %w", d, err)
	}
	defer b.Close()
	if _, err := io.Copy(h, b); err != nil {
		return fmt.Errorf("read blob %s in the target: %w", d, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("blob %s in the target reads back as %s:%s", d, alg, got)
	}
	return nil
}
