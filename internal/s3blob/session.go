package s3blob

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure Store implements chartctl.SessionStore.
var _ chartctl.SessionStore = (*Store)(nil)

const sessionsDir = "sessions/"

// validSessionID reports whether id may become part of a key.
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (s *Store) sessionDir(id string) string { return s.prefix + sessionsDir + id + "/" }

// CreateSessionChunk starts the chunk of session id at offset: streamed as
// a blob is (one part in memory, then a multipart upload), and written
// under sessions/<id>/<offset> on Commit.
func (s *Store) CreateSessionChunk(ctx context.Context, id string, offset int64) (chartctl.SessionChunkWriter, error) {
	if !validSessionID(id) || offset < 0 {
		return nil, chartctl.Invalid("session", "Invalid upload session %q.", id)
	}
	w, err := s.CreateAlgorithm(ctx, "sha256")
	if err != nil {
		return nil, err
	}
	bw := w.(*writer)
	// Zero-padded, so keys list in the order of their offsets.
	bw.target = s.sessionDir(id) + fmt.Sprintf("%020d", offset)
	return chunkWriter{bw}, nil
}

// chunkWriter is a writer committing to its target key.
type chunkWriter struct{ w *writer }

func (c chunkWriter) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c chunkWriter) Commit() error {
	_, err := c.w.Commit()
	return err
}
func (c chunkWriter) Abort() error { return c.w.Abort() }

// SessionChunks lists the chunks of session id, by offset.
func (s *Store) SessionChunks(ctx context.Context, id string) ([]chartctl.SessionChunk, error) {
	if !validSessionID(id) {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dir := s.sessionDir(id)
	var out []chartctl.SessionChunk
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if obj.Err != nil {
			return nil, s.wrap("list upload session", obj.Err)
		}
		off, err := strconv.ParseInt(strings.TrimPrefix(obj.Key, dir), 10, 64)
		if err != nil || off < 0 {
			continue
		}
		out = append(out, chartctl.SessionChunk{Offset: off, Size: obj.Size, Modified: obj.LastModified})
	}
	return out, nil
}

// OpenSessionChunk opens the chunk of id at offset.
func (s *Store) OpenSessionChunk(ctx context.Context, id string, offset int64) (io.ReadCloser, error) {
	if !validSessionID(id) || offset < 0 {
		return nil, notFound()
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, s.sessionDir(id)+fmt.Sprintf("%020d", offset), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap("open upload session chunk", err)
	}
	return body, nil
}

// DeleteSession removes every chunk of id.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	chunks, err := s.SessionChunks(ctx, id)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		err := s.client.RemoveObject(ctx, s.bucket, s.sessionDir(id)+fmt.Sprintf("%020d", c.Offset), minio.RemoveObjectOptions{})
		if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
			return s.wrap("delete upload session", err)
		}
	}
	return nil
}

// WalkSessions calls fn for every session with chunks, with its newest
// chunk's time. The listing is in key order, so a session's chunks come
// together.
func (s *Store) WalkSessions(ctx context.Context, fn func(id string, modified time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dir := s.prefix + sessionsDir
	cur, newest := "", time.Time{}
	flush := func() error {
		if cur == "" {
			return nil
		}
		return fn(cur, newest)
	}
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if obj.Err != nil {
			return s.wrap("list upload sessions", obj.Err)
		}
		id, _, ok := strings.Cut(strings.TrimPrefix(obj.Key, dir), "/")
		if !ok || !validSessionID(id) {
			continue
		}
		if id != cur {
			if err := flush(); err != nil {
				return err
			}
			cur, newest = id, time.Time{}
		}
		if obj.LastModified.After(newest) {
			newest = obj.LastModified
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return ctx.Err()
}
