package gzpool_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/gzpool"
)

// TestBytes: what write writes comes back gzip-compressed, whatever the
// pooled writer compressed before; write's error is returned as is.
func TestBytes(t *testing.T) {
	for _, text := range []string{strings.Repeat("first record ", 1000), "second", ""} {
		b, err := gzpool.Bytes(func(w io.Writer) error {
			_, err := io.WriteString(w, text)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || string(got) != text {
			t.Fatalf("read back %q, %v; want %q", got, err, text)
		}
	}
	boom := errors.New("boom")
	if _, err := gzpool.Bytes(func(io.Writer) error { return boom }); err != boom {
		t.Fatalf("err = %v, want write's", err)
	}
}
