package registry_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
)

// fullBlobs is the blob store on a full disk: every blob it starts writes
// its bytes to /dev/full, so the write fails with the kernel's own ENOSPC.
type fullBlobs struct {
	chartctl.AlgorithmBlobStore
	dev *os.File
}

func (b fullBlobs) CreateAlgorithm(ctx context.Context, algorithm string) (chartctl.BlobWriter, error) {
	w, err := b.AlgorithmBlobStore.CreateAlgorithm(ctx, algorithm)
	if err != nil {
		return nil, err
	}
	return fullWriter{BlobWriter: w, dev: b.dev}, nil
}

type fullWriter struct {
	chartctl.BlobWriter
	dev *os.File
}

func (w fullWriter) Write(p []byte) (int, error) { return w.dev.Write(p) }

// A push onto a full disk is the server's fault, not the client's: the
// blob upload is answered 503 UNAVAILABLE saying the storage is full (as
// /v1 answers it), not 400 BLOB_UPLOAD_INVALID, which tells the client its
// upload was bad, nor 500 UNKNOWN.
func TestPushOnFullDiskIsUnavailable(t *testing.T) {
	dev, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	t.Cleanup(func() { dev.Close() })
	e := setup(t, func(r *registry.Registry) { r.Blobs = fullBlobs{AlgorithmBlobStore: r.Blobs, dev: dev} })
	mustRepoIn(t, e, "full", "private")
	data := []byte("a layer for a full disk")
	d := digest.FromBytes(data)

	start := e.do(t, "POST", "/v2/full/app/blobs/uploads/", e.AdminKey, nil)
	loc := start.Header.Get("Location")
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	for what, path := range map[string]string{
		"monolithic POST":  "/v2/full/app/blobs/uploads/?digest=" + d.String(),
		"PUT of a session": strings.TrimPrefix(loc, e.URL) + sep + "digest=" + d.String(),
	} {
		method := "POST"
		if strings.HasPrefix(what, "PUT") {
			method = "PUT"
		}
		r := e.do(t, method, path, e.AdminKey, data, "Content-Type", "application/octet-stream")
		var body struct {
			Errors []struct{ Code, Message string } `json:"errors"`
		}
		_ = json.Unmarshal(r.Body, &body)
		if r.StatusCode != 503 || len(body.Errors) != 1 || body.Errors[0].Code != registry.CodeUnavailable ||
			!strings.Contains(body.Errors[0].Message, "storage is full") {
			t.Errorf("%s on a full disk: %d %s, want 503 UNAVAILABLE saying the storage is full", what, r.StatusCode, r.Body)
		}
	}
	if r := e.do(t, "HEAD", "/v2/full/app/blobs/"+d.String(), e.AdminKey, nil); r.StatusCode != 404 {
		t.Errorf("HEAD of the refused blob: %d, want 404", r.StatusCode)
	}
}
