package chartctl

import (
	"context"
	"io"
	"time"
)

// SessionStore keeps the bytes of upload sessions in progress (the OCI
// registry's chunked blob uploads) in the blob store, where every replica
// reaches them: a client may send each request of one session to another
// replica behind a load balancer. A blob store that does not implement it
// leaves them in the data directory, which serves a single node only.
//
// A session's bytes are chunks keyed by the offset they start at; the
// session's record (OCIUpload.Offset) says how many bytes are
// acknowledged, so a chunk written but never acknowledged is simply
// replaced by the next one written at its offset.
type SessionStore interface {
	// CreateSessionChunk starts the chunk of session id that begins at
	// offset. Nothing is visible until Commit, which replaces a chunk
	// stored at that offset; Abort discards it. id is 1 to 128 characters
	// of a-z, A-Z, 0-9, '-' and '_' (EINVALID otherwise).
	CreateSessionChunk(ctx context.Context, id string, offset int64) (SessionChunkWriter, error)
	// SessionChunks returns the committed chunks of id, by offset (none
	// for an unknown id).
	SessionChunks(ctx context.Context, id string) ([]SessionChunk, error)
	// OpenSessionChunk opens the chunk of id at offset. Returns ENOTFOUND.
	OpenSessionChunk(ctx context.Context, id string, offset int64) (io.ReadCloser, error)
	// DeleteSession removes every chunk of id; an unknown id succeeds.
	DeleteSession(ctx context.Context, id string) error
	// WalkSessions calls fn for every session that has chunks, with when
	// its newest chunk was committed. It stops at fn's first error.
	WalkSessions(ctx context.Context, fn func(id string, modified time.Time) error) error
}

// SessionChunk is one stored chunk of an upload session.
type SessionChunk struct {
	// Offset is where the chunk starts in the session's bytes.
	Offset int64
	// Size is its length in bytes.
	Size int64
	// Modified is when it was committed.
	Modified time.Time
}

// SessionChunkWriter receives one chunk; Commit or Abort must be called.
type SessionChunkWriter interface {
	io.Writer
	// Commit makes the chunk durable and visible under its offset.
	Commit() error
	// Abort discards an uncommitted chunk; it is safe after Commit.
	Abort() error
}
