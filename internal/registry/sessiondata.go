package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// sessionData keeps the bytes of upload sessions: in the blob store when
// it is a chartctl.SessionStore (S3: every replica continues a session
// another started), else in files of Config.UploadDir (one node).
type sessionData interface {
	// create prepares the data of a new session.
	create(ctx context.Context, id string) error
	// chunk starts writing the session's bytes from offset on; bytes past
	// offset, never acknowledged, are dropped. It returns
	// errUploadUnknown when the session has no data.
	chunk(ctx context.Context, id string, offset int64) (chartctl.SessionChunkWriter, error)
	// open reads the session's first size bytes.
	open(ctx context.Context, id string, size int64) (io.ReadCloser, error)
	// remove deletes the session's data.
	remove(ctx context.Context, id string) error
	// walk calls fn for every session that has data, with when it was
	// last written.
	walk(ctx context.Context, fn func(id string, modified time.Time) error) error
}

func (r *Registry) sessionData() sessionData {
	if ss, ok := r.Blobs.(chartctl.SessionStore); ok {
		return sharedSessions{ss}
	}
	return localSessions{r}
}

// localSessions keeps each session's bytes in one file of the upload
// directory, fsynced before the session's offset moves past them.
type localSessions struct{ r *Registry }

func (l localSessions) create(_ context.Context, id string) error {
	f, err := os.OpenFile(l.r.uploadPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create upload file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create upload file: %w", err)
	}
	return nil
}

func (l localSessions) chunk(_ context.Context, id string, offset int64) (chartctl.SessionChunkWriter, error) {
	f, err := os.OpenFile(l.r.uploadPath(id), os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errUploadUnknown()
	} else if err != nil {
		return nil, fmt.Errorf("open upload file: %w", err)
	}
	// Bytes past the offset were never acknowledged (a crash or a refused
	// chunk): they go.
	if err := f.Truncate(offset); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("truncate upload file: %w", err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("seek upload file: %w", err)
	}
	return &fileChunk{f: f, offset: offset}, nil
}

func (l localSessions) open(_ context.Context, id string, size int64) (io.ReadCloser, error) {
	f, err := os.Open(l.r.uploadPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errUploadUnknown()
	} else if err != nil {
		return nil, fmt.Errorf("open upload file: %w", err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, size), f}, nil
}

func (l localSessions) remove(_ context.Context, id string) error {
	if err := os.Remove(l.r.uploadPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (l localSessions) walk(_ context.Context, fn func(id string, modified time.Time) error) error {
	if l.r.Config.UploadDir == "" {
		return nil
	}
	entries, err := os.ReadDir(l.r.Config.UploadDir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if err := fn(e.Name(), fi.ModTime()); err != nil {
			return err
		}
	}
	return nil
}

// fileChunk writes at the end of a session's file; Commit fsyncs it,
// Abort cuts the file back to where the chunk started.
type fileChunk struct {
	f      *os.File
	offset int64
	done   bool
}

func (c *fileChunk) Write(p []byte) (int, error) { return c.f.Write(p) }

func (c *fileChunk) Commit() error {
	if c.done {
		return nil
	}
	c.done = true
	err := c.f.Sync()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync upload file: %w", err)
	}
	return nil
}

func (c *fileChunk) Abort() error {
	if c.done {
		return nil
	}
	c.done = true
	_ = c.f.Truncate(c.offset)
	return c.f.Close()
}

// sharedSessions keeps sessions' bytes as chunks in the blob store.
type sharedSessions struct{ ss chartctl.SessionStore }

func (s sharedSessions) create(context.Context, string) error { return nil }

func (s sharedSessions) chunk(ctx context.Context, id string, offset int64) (chartctl.SessionChunkWriter, error) {
	return s.ss.CreateSessionChunk(ctx, id, offset)
}

// open reads the chunks that make up the first size bytes: from offset 0,
// each starting where the one before ended. A chunk written at an offset
// but never acknowledged was replaced by the next one written there.
func (s sharedSessions) open(ctx context.Context, id string, size int64) (io.ReadCloser, error) {
	chunks, err := s.ss.SessionChunks(ctx, id)
	if err != nil {
		return nil, err
	}
	byOffset := map[int64]int64{}
	for _, c := range chunks {
		byOffset[c.Offset] = c.Size
	}
	var plan []int64
	for pos := int64(0); pos < size; {
		n, ok := byOffset[pos]
		if !ok || n == 0 {
			return nil, newError(400, CodeBlobUploadInvalid, "The upload's data is incomplete (nothing stored from byte %d); start the upload again.", pos)
		}
		plan = append(plan, pos)
		pos += n
	}
	return &chunkReader{ctx: ctx, ss: s.ss, id: id, plan: plan, left: size}, nil
}

func (s sharedSessions) remove(ctx context.Context, id string) error {
	return s.ss.DeleteSession(ctx, id)
}

func (s sharedSessions) walk(ctx context.Context, fn func(id string, modified time.Time) error) error {
	return s.ss.WalkSessions(ctx, fn)
}

// chunkReader reads a session's chunks in turn, opening each when reached,
// and stops after left bytes.
type chunkReader struct {
	ctx  context.Context
	ss   chartctl.SessionStore
	id   string
	plan []int64
	cur  io.ReadCloser
	left int64
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for {
		if c.left <= 0 {
			return 0, io.EOF
		}
		if c.cur == nil {
			if len(c.plan) == 0 {
				return 0, io.ErrUnexpectedEOF
			}
			rc, err := c.ss.OpenSessionChunk(c.ctx, c.id, c.plan[0])
			if err != nil {
				return 0, err
			}
			c.cur, c.plan = rc, c.plan[1:]
		}
		if int64(len(p)) > c.left {
			p = p[:c.left]
		}
		n, err := c.cur.Read(p)
		c.left -= int64(n)
		if err == io.EOF {
			_ = c.cur.Close()
			c.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *chunkReader) Close() error {
	if c.cur != nil {
		return c.cur.Close()
	}
	return nil
}
