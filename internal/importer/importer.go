// Package importer copies chart versions from another chart repository
// into a chartctl repository through the /v1 API (CONTRACT §14): from a
// Helm repository (its index.yaml), a ChartMuseum storage directory, or an
// OCI registry.
//
// An import is idempotent and therefore resumable: the versions the target
// repository already holds are listed first and skipped, and each upload
// is atomic on the server, so a run interrupted at any point leaves only
// whole versions behind and the next run carries on from there.
package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/chartctl/chartctl/client"
)

// Version is one chart version a source offers.
type Version struct {
	// Name and Version identify it.
	Name    string
	Version string
	// Created is the source's creation time; zero when it has none.
	Created time.Time
	// Digest is the archive's sha256 (hex) the source announces; empty
	// when it announces none. A download that does not match fails.
	Digest string
	// Location is where the archive comes from, for messages.
	Location string

	open     func(ctx context.Context) (io.ReadCloser, error)
	openProv func(ctx context.Context) (io.ReadCloser, error)

	// A Helm repository's version is opened by its source from its URL
	// (Location, or url when Location is redacted), or says why not
	// (bad), instead of by closures: an index may list hundreds of
	// thousands of versions, and these few strings are all they hold.
	helm *HelmSource
	url  string
	bad  string
}

// NewVersion returns a version whose archive and provenance file are
// opened by open and openProv (nil: it has none), for sources outside
// this package (the mirror's OCI upstreams).
func NewVersion(name, version, location string, open, openProv func(ctx context.Context) (io.ReadCloser, error)) *Version {
	return &Version{Name: name, Version: version, Location: location, open: open, openProv: openProv}
}

// Open returns the version's archive as the source serves it; the caller
// checks it against Digest (the importer and the mirror both do).
func (v *Version) Open(ctx context.Context) (io.ReadCloser, error) {
	if v.helm != nil {
		return v.helm.openHelm(ctx, v, false)
	}
	return v.open(ctx)
}

// OpenProv returns the version's provenance file; an error wrapping
// ErrNotFound means it has none.
func (v *Version) OpenProv(ctx context.Context) (io.ReadCloser, error) {
	if v.helm != nil {
		return v.helm.openHelm(ctx, v, true)
	}
	if v.openProv == nil {
		return nil, fmt.Errorf("%s %s: no provenance file: %w", v.Name, v.Version, ErrNotFound)
	}
	return v.openProv(ctx)
}

// Source lists the chart versions of one place to import from.
type Source interface {
	// Versions lists every version the source offers.
	Versions(ctx context.Context) ([]*Version, error)
	// String describes the source for messages.
	String() string
}

// Item is one version in a Result.
type Item struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Reason says why a version was skipped or failed.
	Reason string `json:"reason,omitempty"`
}

// Result is what an import did.
type Result struct {
	Imported []Item `json:"imported"`
	Skipped  []Item `json:"skipped"`
	Failed   []Item `json:"failed"`
	// Warnings are notes about the whole run, such as created times that
	// could not be kept.
	Warnings []string `json:"warnings,omitempty"`
}

// State is what happened to one version, for Progress.
type State string

// The states Progress reports.
const (
	StateImporting State = "importing"
	StateImported  State = "imported"
	StateSkipped   State = "skipped"
	StateFailed    State = "failed"
)

// Event tells Progress about one version.
type Event struct {
	// N is the version's position (1-based) among Total.
	N, Total int
	Item     Item
	State    State
}

// Importer uploads a Source's versions into one repository.
type Importer struct {
	// Client talks to the target server.
	Client *client.Client
	// Repo is the target repository.
	Repo string
	// KeepCreated sends each version's source creation time (the server
	// accepts it from a credential with the admin scope only; when it
	// refuses, the import goes on without it and says so in a warning).
	KeepCreated bool
	// Progress, when set, is told about every version as it goes.
	Progress func(Event)
	// TempDir holds downloads while they are uploaded ("" = os.TempDir).
	TempDir string
}

// Run imports every version of src that the repository does not hold
// yet. It returns an error only when the import cannot start (the source
// or the repository cannot be listed) or ctx ends; a version that cannot
// be imported is recorded in Result.Failed and the run goes on.
func (im *Importer) Run(ctx context.Context, src Source) (*Result, error) {
	versions, err := src.Versions(ctx)
	if err != nil {
		return nil, err
	}
	sortVersions(versions)
	have, err := im.existing(ctx)
	if err != nil {
		return nil, err
	}
	res := &Result{Imported: []Item{}, Skipped: []Item{}, Failed: []Item{}}
	keep := im.KeepCreated
	for i, v := range versions {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		it := Item{Name: v.Name, Version: v.Version}
		ev := Event{N: i + 1, Total: len(versions), Item: it}
		if have[key(v.Name, v.Version)] {
			it.Reason = "already present"
			res.Skipped = append(res.Skipped, it)
			im.progress(ev, it, StateSkipped)
			continue
		}
		im.progress(ev, it, StateImporting)
		refused, err := im.importOne(ctx, v, keep)
		if refused {
			keep = false
			res.Warnings = append(res.Warnings, "The server refused to keep the source's created times (that needs a credential with the admin scope); versions were imported with the current time.")
		}
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			it.Reason = err.Error()
			res.Failed = append(res.Failed, it)
			im.progress(ev, it, StateFailed)
			continue
		}
		have[key(v.Name, v.Version)] = true
		res.Imported = append(res.Imported, it)
		im.progress(ev, it, StateImported)
	}
	return res, nil
}

func (im *Importer) progress(ev Event, it Item, st State) {
	if im.Progress != nil {
		ev.Item, ev.State = it, st
		im.Progress(ev)
	}
}

func key(name, version string) string { return name + "\x00" + version }

// existing lists the versions the target repository holds.
func (im *Importer) existing(ctx context.Context) (map[string]bool, error) {
	have := map[string]bool{}
	for c, err := range im.Client.Charts.All(ctx, im.Repo, client.ChartListOptions{}) {
		if err != nil {
			if client.IsNotFound(err) {
				return nil, fmt.Errorf("repository %q not found on the server: create it first with `chartctl repo create %s`", im.Repo, im.Repo)
			}
			return nil, fmt.Errorf("list the charts of %s: %w", im.Repo, err)
		}
		have[key(c.Name, c.Version)] = true
	}
	return have, nil
}

// importOne downloads v (and its provenance) to temporary files, checks
// the announced digest, and uploads it. refused reports that the server
// refused the created time, after which the upload was made without it.
func (im *Importer) importOne(ctx context.Context, v *Version, keepCreated bool) (refused bool, err error) {
	archive, err := im.download(ctx, v.Open, v.Digest)
	if err != nil {
		return false, fmt.Errorf("download %s: %w", v.Location, err)
	}
	defer removeTemp(archive)
	prov, err := im.download(ctx, v.OpenProv, "")
	if err != nil {
		return false, fmt.Errorf("download the provenance file of %s: %w", v.Location, err)
	}
	if prov != nil {
		defer removeTemp(prov)
	}
	upload := func(created time.Time) error {
		if _, err := archive.Seek(0, io.SeekStart); err != nil {
			return err
		}
		opts := &client.UploadOptions{Filename: v.Name + "-" + v.Version + ".tgz", CreatedAt: created}
		if prov != nil {
			if _, err := prov.Seek(0, io.SeekStart); err != nil {
				return err
			}
			opts.Prov = prov
		}
		_, _, err := im.Client.Charts.Upload(ctx, im.Repo, archive, opts)
		return err
	}
	if keepCreated && !v.Created.IsZero() {
		err = upload(v.Created)
		if !client.IsForbidden(err) {
			return false, uploadError(err)
		}
		refused = true
	}
	return refused, uploadError(upload(time.Time{}))
}

func uploadError(err error) error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("upload refused: %s", ce.Message)
	}
	return fmt.Errorf("upload: %w", err)
}

// ErrNotFound is returned (wrapped) when a file a source lists does not
// exist; from OpenProv it means the version has no provenance file.
var ErrNotFound = errors.New("not found")

// download copies what open returns into a temporary file, checking its
// sha256 against digest when one is given. A provenance opener answering
// ErrNotFound yields a nil file.
func (im *Importer) download(ctx context.Context, open func(context.Context) (io.ReadCloser, error), digest string) (*os.File, error) {
	rc, err := open(ctx)
	if errors.Is(err, ErrNotFound) && digest == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	f, err := os.CreateTemp(im.TempDir, "chartctl-import-*")
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), rc); err != nil {
		removeTemp(f)
		return nil, err
	}
	if digest != "" {
		got := hex.EncodeToString(h.Sum(nil))
		want := strings.TrimPrefix(strings.ToLower(digest), "sha256:")
		if got != want {
			removeTemp(f)
			return nil, fmt.Errorf("the archive's sha256 is %s but the source announces %s", got, want)
		}
	}
	return f, nil
}

func removeTemp(f *os.File) {
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// sortVersions orders versions by chart name, then oldest first, so an
// interrupted import leaves each chart's history without gaps in time.
func sortVersions(vs []*Version) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.Version < b.Version
	})
}

// SourceOptions configure OpenSource.
type SourceOptions struct {
	Auth Auth
	// HTTP does the source's requests (nil: http.DefaultClient).
	HTTP *http.Client
	// PlainHTTP talks HTTP to an OCI registry.
	PlainHTTP bool
	// MaxIndexSize bounds a Helm repository's index.yaml (0:
	// DefaultMaxIndexSize); import's --index-max-size.
	MaxIndexSize int64
}

// OpenSource returns the source named by ref: an http(s) URL of a Helm
// repository, oci://HOST/PATH, or a local ChartMuseum storage directory.
func OpenSource(ref string, opts SourceOptions) (Source, error) {
	switch {
	case strings.HasPrefix(ref, "http://"), strings.HasPrefix(ref, "https://"):
		s, err := NewHelmSource(ref, opts.Auth, opts.HTTP)
		if err != nil {
			return nil, err
		}
		s.AuthHint = "check --username/--password-stdin or --source-token"
		s.MaxIndexSize, s.MaxIndexSizeFlag = opts.MaxIndexSize, "--index-max-size"
		return s, nil
	case strings.HasPrefix(ref, "oci://"):
		return NewOCISource(ref, opts.Auth, opts.HTTP, opts.PlainHTTP)
	}
	fi, err := os.Stat(ref)
	if err != nil {
		return nil, fmt.Errorf("%s is neither an http(s):// or oci:// URL nor a directory: %w", ref, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give a ChartMuseum storage directory, a Helm repository URL or oci://HOST/PATH", ref)
	}
	return &DirSource{Dir: ref}, nil
}
