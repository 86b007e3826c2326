package chartdiff

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/chartctl/chartctl/internal/gzpool"
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

// encodeStored is s as gzipped JSON. Speed over size: the images job
// encodes every version once, and the manifests are repetitive enough
// that the fastest level still compresses them several times.
func encodeStored(s storedRendering) ([]byte, error) {
	return gzpool.Bytes(func(w io.Writer) error { return json.NewEncoder(w).Encode(s) })
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
