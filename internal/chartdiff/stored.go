package chartdiff

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// MaxStoredRendering bounds the compressed size of a rendering kept for a
// chart archive (EncodeRendering). Rendered YAML compresses about tenfold,
// so this keeps every rendering under MaxRenderedBytes; one past it is
// kept as "too large" and a diff renders that version on demand.
const MaxStoredRendering = 8 << 20

// storedRendering is the kept form of a Rendering: what a diff needs
// (the manifests, or why there are none). Images live in the version's
// image record.
type storedRendering struct {
	Manifests    map[string]string `json:"manifests,omitempty"`
	Unrenderable string            `json:"unrenderable,omitempty"`
	// TooLarge marks a rendering past MaxStoredRendering: nothing is kept
	// but that it was tried, so the backfill does not render it again.
	TooLarge bool `json:"too_large,omitempty"`
}

// EncodeRendering returns the form of r kept for its archive: gzipped
// JSON of its manifests (or the reason it is unrenderable), at most
// MaxStoredRendering bytes. A larger one is encoded as too large, and
// DecodeRendering answers nil for it.
func EncodeRendering(r *Rendering) ([]byte, error) {
	b, err := encodeStored(storedRendering{Manifests: r.Manifests, Unrenderable: r.Unrenderable})
	if err != nil {
		return nil, err
	}
	if len(b) > MaxStoredRendering {
		return encodeStored(storedRendering{TooLarge: true})
	}
	return b, nil
}

// gzipWriters holds BestSpeed writers for encodeStored: a writer's
// compression state is about a megabyte, and the images job encodes one
// rendering per pushed version, so a new writer each time made most of
// what the job allocated (and the collector's work) after a large fill.
var gzipWriters = sync.Pool{New: func() any {
	// Speed over size: the worker encodes every version once, and the
	// manifests are repetitive enough that the fastest level still
	// compresses them several times.
	gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return gz
}}

func encodeStored(s storedRendering) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzipWriters.Get().(*gzip.Writer)
	gz.Reset(&buf)
	defer func() {
		// Not holding on to buf while pooled.
		gz.Reset(io.Discard)
		gzipWriters.Put(gz)
	}()
	if err := json.NewEncoder(gz).Encode(s); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeRendering reads what EncodeRendering wrote: the manifests, or the
// reason the chart is unrenderable. It answers nil for a rendering kept
// as too large (render again to diff it).
func DecodeRendering(b []byte) (*Rendering, error) {
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read a kept rendering: %w", err)
	}
	// The encoder bounded what it wrote; the reader bounds what it reads
	// the same way, whatever the store holds.
	var s storedRendering
	if err := json.NewDecoder(io.LimitReader(gz, MaxRenderedBytes+1<<20)).Decode(&s); err != nil {
		return nil, fmt.Errorf("read a kept rendering: %w", err)
	}
	if s.TooLarge {
		return nil, nil
	}
	if s.Unrenderable != "" {
		return &Rendering{Unrenderable: s.Unrenderable}, nil
	}
	return &Rendering{Manifests: s.Manifests}, nil
}
