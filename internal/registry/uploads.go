package registry

import (
	"context"
	"errors"
	"fmt"
	"github.com/chartctl/chartctl/internal/bufpool"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Blob uploads (pushes): monolithic (POST with ?digest, or POST then one
// PUT), chunked (PATCH with Content-Range, then PUT), streamed (PATCH
// without Content-Range) and cross-repository mounts (POST ?mount=&from=).
//
// A session's bytes go to a file of Config.UploadDir, or, when the blob
// store keeps upload sessions (S3, so that any replica continues a session
// another started), to chunks in the blob store (sessiondata.go). Either
// way they are durable before the session record's offset moves past
// them, so a chunk is acknowledged only once durable and a restart resumes
// at the last acknowledged byte. The final PUT copies the bytes into the
// blob store, verifying the digest, and links the blob to the name;
// nothing is visible before that.

// handleStartUpload answers POST /v2/<name>/blobs/uploads/.
func (r *Registry) handleStartUpload(c echo.Context, m pathMatch) error {
	w, req := c.Response(), c.Request()
	name := m[1]
	p, repo, err := r.authorize(c, name, actionPush)
	if err != nil {
		return err
	}
	if err := r.charge(c, p, ""); err != nil {
		return err
	}
	q := req.URL.Query()
	if mount := q.Get("mount"); mount != "" {
		d, err := parseDigest(mount)
		if err != nil {
			return err
		}
		ok, err := r.mount(req.Context(), p, name, q.Get("from"), d)
		if err != nil {
			return err
		}
		if ok {
			return blobCreated(w, name, d)
		}
		// Not mountable for this caller: a normal upload session (202),
		// as the specification says.
	}
	if dg := q.Get("digest"); dg != "" {
		d, err := parseDigest(dg)
		if err != nil {
			return err
		}
		claim := r.claimEarly(req.Context(), d)
		defer claim.drop()
		if req.ContentLength > 0 {
			// A body that cannot fit the quota is refused before it is
			// read.
			if err := r.checkQuota(req.Context(), name, req.ContentLength); err != nil {
				return err
			}
		}
		release, err := r.takeUpload(c, p)
		if err != nil {
			return err
		}
		defer release()
		if err := r.putMonolithic(c, name, d, claim); err != nil {
			return err
		}
		return blobCreated(w, name, d)
	}
	if len(r.SessionKey) > 0 {
		// A keyed session: nothing is stored until it has a chunk.
		id, err := r.newKeyedID(name, repo.ID, r.Now())
		if err != nil {
			return err
		}
		return uploadAccepted(w, &chartctl.OCIUpload{ID: id, Name: name, RepositoryID: repo.ID}, http.StatusAccepted)
	}
	id, err := newID()
	if err != nil {
		return err
	}
	// The session is bound to the repository's ID: it ends with the
	// repository, whatever takes its name afterwards.
	u := &chartctl.OCIUpload{ID: id, Name: name, RepositoryID: repo.ID}
	if err := r.storeSession(req.Context(), u); err != nil {
		return err
	}
	return uploadAccepted(w, u, http.StatusAccepted)
}

// storeSession creates the data and the record of session u (at offset
// 0); a keyed session's data may exist already, from a first chunk that
// failed before its record was stored.
func (r *Registry) storeSession(ctx context.Context, u *chartctl.OCIUpload) error {
	data := r.sessionData()
	if err := data.create(ctx, u.ID); err != nil && !(keyedID(u.ID) && errors.Is(err, fs.ErrExist)) {
		return err
	}
	if err := r.OCI.CreateUpload(ctx, u); err != nil {
		_ = data.remove(context.WithoutCancel(ctx), u.ID)
		return err
	}
	return nil
}

// closeSession ends session u: a keyed ID's record is replaced by one that
// closes the ID (offset -1), another's deleted; its data goes.
func (r *Registry) closeSession(ctx context.Context, u *chartctl.OCIUpload) error {
	var err error
	if keyedID(u.ID) {
		err = r.OCI.CreateUpload(ctx, &chartctl.OCIUpload{ID: u.ID, Name: u.Name, RepositoryID: u.RepositoryID, Offset: -1, CreatedAt: u.CreatedAt})
	} else if err = r.OCI.DeleteUpload(ctx, u.ID); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		err = nil
	}
	if err != nil {
		return err
	}
	r.removeSessionData(ctx, u.ID)
	return nil
}

// mount links digest, held by from (or, without from, by any name the
// caller may pull), to name. It reports false when the caller may not read
// the blob anywhere, which is not an error.
func (r *Registry) mount(ctx context.Context, p *chartctl.Principal, name, from string, d digest.Digest) (bool, error) {
	var candidates []string
	if from != "" {
		candidates = []string{from}
	} else {
		var err error
		if candidates, err = r.OCI.BlobNames(ctx, d.String()); err != nil {
			return false, err
		}
	}
	for _, src := range candidates {
		if !chartctl.ValidOCIName(src) || !r.canPull(ctx, p, src) {
			continue
		}
		held := false
		if _, err := r.OCI.BlobLink(ctx, src, d.String()); err == nil {
			held = true
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return false, err
		} else if cb, err := r.chartBlob(ctx, src, d.String()); err != nil {
			return false, err
		} else {
			held = cb != nil && cb.data == nil
		}
		if !held {
			continue
		}
		release, err := r.App.ClaimDigests(ctx, d.String())
		if err != nil {
			return false, err
		}
		b, err := r.Blobs.Open(ctx, d.String())
		if err == nil {
			size := b.Size()
			_ = b.Close()
			err = r.OCI.LinkBlob(ctx, name, d.String(), size)
		}
		release()
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			continue
		} else if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// handleUpload answers GET (status), PATCH (a chunk), PUT (the last chunk,
// if any, and completion) and DELETE (cancel) on an upload session.
func (r *Registry) handleUpload(c echo.Context, m pathMatch) error {
	w, req := c.Response(), c.Request()
	name, id := m[1], m[2]
	p, repo, err := r.authorize(c, name, actionPush)
	if err != nil {
		return err
	}
	if req.Method != http.MethodGet {
		if err := r.charge(c, p, ""); err != nil {
			return err
		}
	}
	if !validID(id) {
		return errUploadUnknown()
	}
	unlock := r.sessions.Lock(id)
	defer unlock()
	ctx := req.Context()
	// A PUT's digest, whose error is answered after the session's.
	var (
		d     digest.Digest
		dErr  error
		claim *earlyClaim
	)
	if req.Method == http.MethodPut {
		if d, dErr = parseDigest(req.URL.Query().Get("digest")); dErr == nil {
			claim = r.claimEarly(ctx, d)
			defer claim.drop()
		}
	}
	u, err := r.OCI.Upload(ctx, id)
	stored := err == nil
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		if u = r.keyedSession(name, repo.ID, id); u == nil {
			return errUploadUnknown()
		}
	} else if err != nil {
		return err
	}
	// A session of a deleted repository is unknown, even when another
	// repository of the same name exists by now.
	if u.Offset < 0 || u.Name != name || u.RepositoryID != repo.ID || r.Now().Sub(u.UpdatedAt) > r.Config.UploadExpiry {
		return errUploadUnknown()
	}
	// store gives a keyed session without a record one, before its
	// first chunk.
	store := func() error {
		if stored {
			return nil
		}
		stored = true
		return r.storeSession(ctx, u)
	}
	if req.Method == http.MethodPatch || req.Method == http.MethodPut {
		if req.ContentLength > 0 {
			// A body that cannot fit the quota is refused before it is
			// read.
			if err := r.checkQuota(ctx, name, u.Offset+req.ContentLength); err != nil {
				return err
			}
		}
		release, err := r.takeUpload(c, p)
		if err != nil {
			return err
		}
		defer release()
	}
	switch req.Method {
	case http.MethodGet:
		return uploadAccepted(w, u, http.StatusNoContent)
	case http.MethodDelete:
		if err := r.closeSession(ctx, u); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodPatch:
		if err := store(); err != nil {
			return err
		}
		if err := r.appendChunk(c, u); err != nil {
			return err
		}
		return uploadAccepted(w, u, http.StatusAccepted)
	}
	// PUT: completes the upload with the digest the client claims.
	if dErr != nil {
		return dErr
	}
	if u.Offset == 0 && (req.Header.Get("Content-Range") == "" || !hasBody(req)) {
		// The whole blob in this PUT: straight into the blob store.
		if err := r.putMonolithic(c, name, d, claim); err != nil {
			return err
		}
	} else {
		if hasBody(req) {
			if err := store(); err != nil {
				return err
			}
			if err := r.appendChunk(c, u); err != nil {
				return err
			}
		}
		if err := r.completeUpload(ctx, u, d, claim); err != nil {
			return err
		}
	}
	if stored {
		if err := r.closeSession(ctx, u); err != nil {
			return err
		}
	}
	return blobCreated(w, name, d)
}

// hasBody reports whether the request carries bytes.
func hasBody(req *http.Request) bool {
	return req.ContentLength > 0 || (req.ContentLength < 0 && req.Body != nil && req.Body != http.NoBody)
}

// appendChunk writes the request body to the session's file at its offset
// and, once the bytes are durable, advances the session. A chunk that does
// not start at the offset is 416; one shorter than its Content-Range says
// (a truncated chunk) is refused and leaves the session as it was.
func (r *Registry) appendChunk(c echo.Context, u *chartctl.OCIUpload) error {
	w, req := c.Response(), c.Request()
	want := int64(-1)
	if cr := req.Header.Get("Content-Range"); cr != "" {
		start, end, ok := parseContentRange(cr)
		if !ok || start != u.Offset || end < start {
			setUploadHeaders(w, u)
			return newError(http.StatusRequestedRangeNotSatisfiable, CodeBlobUploadInvalid,
				"The chunk must start at byte %d (Content-Range: %d-<end>); got %q.", u.Offset, u.Offset, cr)
		}
		want = end - start + 1
		if req.ContentLength >= 0 && req.ContentLength != want {
			return newError(http.StatusBadRequest, CodeBlobUploadInvalid, "Content-Length %d does not match Content-Range %q.", req.ContentLength, cr)
		}
	}
	f, err := r.sessionData().chunk(req.Context(), u.ID, u.Offset)
	if err != nil {
		return err
	}
	defer f.Abort()
	room := r.Config.MaxBlobSize - u.Offset
	body := &sourceReader{r: r.idleReader(w, req)}
	n, err := io.Copy(f, io.LimitReader(body, room+1))
	fail := func(e error) error {
		_ = f.Abort()
		return e
	}
	switch {
	case err != nil && body.err == nil:
		// The session's storage, not the client: a full disk, say.
		return fail(fmt.Errorf("store upload chunk: %w", err))
	case err != nil:
		return fail(newError(http.StatusBadRequest, CodeBlobUploadInvalid, "The chunk could not be read completely."))
	case n > room:
		return fail(newError(http.StatusRequestEntityTooLarge, CodeSizeInvalid, "The blob exceeds the maximum size of %d bytes.", r.Config.MaxBlobSize))
	case want >= 0 && n != want:
		return fail(newError(http.StatusBadRequest, CodeBlobUploadInvalid, "The chunk is %d bytes, but Content-Range announced %d.", n, want))
	}
	if err := f.Commit(); err != nil {
		return fail(err)
	}
	if err := r.OCI.AdvanceUpload(req.Context(), u.ID, u.Offset, u.Offset+n); err != nil {
		return fail(err)
	}
	u.Offset += n
	return nil
}

// completeUpload moves the session's bytes into the blob store if their
// digest is d, and links the blob to the session's name.
func (r *Registry) completeUpload(ctx context.Context, u *chartctl.OCIUpload, d digest.Digest, claim *earlyClaim) error {
	f, err := r.sessionData().open(ctx, u.ID, u.Offset)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.storeBlob(ctx, u.Name, d, f, nil, claim)
}

// putMonolithic stores the request body as the blob d of name.
func (r *Registry) putMonolithic(c echo.Context, name string, d digest.Digest, claim *earlyClaim) error {
	req := c.Request()
	return r.storeBlob(req.Context(), name, d, r.idleReader(c.Response(), req), req, claim)
}

// storeBlob writes src to the blob store, verifies its digest is d, commits
// it and links it to name, under a claim of the digest so no garbage
// collection, on any replica, deletes it between commit and link: claim,
// started when the request named d (claimEarly).
//
// The commit (fsync of the file and of its directory) and the link (a
// metadata commit) wait on different files, so they run at the same time:
// the upload is acknowledged when both are durable, in the time of the
// slower. A crash between them can leave a link to a blob that was never
// stored (the upload was not acknowledged); such a link is harmless:
// reads of the blob answer BLOB_UNKNOWN, a manifest referring to it is
// refused (storedBlobs), and garbage collection removes it as
// unreferenced.
func (r *Registry) storeBlob(ctx context.Context, name string, d digest.Digest, src io.Reader, req *http.Request, claim *earlyClaim) error {
	// Uploads finishing together share their links' commit (linker).
	r.links.begin()
	linking := false
	defer func() {
		if !linking {
			r.links.abandon()
		}
	}()
	bw, err := r.Blobs.CreateAlgorithm(ctx, string(d.Algorithm()))
	if err != nil {
		return err
	}
	defer bw.Abort()
	// A small blob is also kept in memory once stored: the manifest that
	// follows reads it (a chart's layer is validated) and clients pull it.
	keep := &capBuffer{max: r.App.MaxKeptBlob()}
	keep.over = req != nil && req.ContentLength > keep.max // known too large
	body := &sourceReader{r: src}
	buf := bufpool.Get() // io.Copy would allocate one per blob, the largest allocation of an upload
	n, err := io.CopyBuffer(io.MultiWriter(bw, keep), io.LimitReader(body, r.Config.MaxBlobSize+1), *buf)
	bufpool.Put(buf)
	if err != nil {
		if body.err == nil {
			// The blob store, not the client: a full disk, say.
			return fmt.Errorf("store blob: %w", err)
		}
		if req != nil {
			return newError(http.StatusBadRequest, CodeBlobUploadInvalid, "The blob could not be read completely.")
		}
		return fmt.Errorf("copy upload: %w", err)
	}
	if n > r.Config.MaxBlobSize {
		return newError(http.StatusRequestEntityTooLarge, CodeSizeInvalid, "The blob exceeds the maximum size of %d bytes.", r.Config.MaxBlobSize)
	}
	if req != nil && req.ContentLength >= 0 && n != req.ContentLength {
		return newError(http.StatusBadRequest, CodeSizeInvalid, "Received %d bytes, but Content-Length announced %d.", n, req.ContentLength)
	}
	if bw.Digest() != d.String() {
		return errDigestInvalid("The uploaded content has digest %s, not %s.", bw.Digest(), d)
	}
	// A small monolithic body was checked against the quota at its
	// Content-Length, which it matched, milliseconds ago (both callers
	// check before reading it); a larger one, read over a longer time,
	// is checked again at its size.
	if checked := req != nil && req.ContentLength > 0 && req.ContentLength <= keep.max; !checked {
		if err := r.checkQuota(ctx, name, n); err != nil {
			return err
		}
	}
	release, err := claim.take()
	if err != nil {
		return err
	}
	// The link, once committed, keeps the blob.
	defer r.App.ReleaseLater(release)
	linked := make(chan error, 1)
	linking = true
	go func() { linked <- r.links.link(r.OCI, name, d.String(), n) }()
	_, err = bw.Commit()
	if err == nil {
		r.App.NoteCommitted(d.String())
	}
	if err = errors.Join(err, <-linked); err != nil {
		return err
	}
	r.App.NoteLinked(name, d.String())
	if keep.buf != nil && int64(len(keep.buf)) == n {
		r.App.KeepBlob(d.String(), keep.buf)
	}
	return nil
}

// takeUpload reserves one of p's concurrent uploads for a request that
// sends a body (--max-concurrent-uploads), returning its release.
func (r *Registry) takeUpload(c echo.Context, p *chartctl.Principal) (func(), error) {
	if r.Uploads == nil || !hasBody(c.Request()) {
		return func() {}, nil
	}
	return r.Uploads.TakeUpload(c, p)
}

// checkQuota refuses (EQUOTA, answered DENIED) size bytes of blob pushed
// into the repository of name when they alone would take it or its
// organization past a max_bytes quota.
func (r *Registry) checkQuota(ctx context.Context, name string, size int64) error {
	repo, err := r.App.Repository(ctx, repoOf(name))
	if err != nil {
		return err
	}
	return r.App.CheckBlobQuota(ctx, repo, size)
}

// sourceReader remembers the error its source returned, so a failed copy
// can tell the client's body (BLOB_UPLOAD_INVALID) from the storage it
// was written to (a fault of the server).
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// capBuffer collects what is written to it while it stays within max
// bytes; past that it drops what it has and collects nothing more.
type capBuffer struct {
	max  int64
	buf  []byte
	over bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if !c.over {
		if int64(len(c.buf)+len(p)) > c.max {
			c.over, c.buf = true, nil
		} else {
			c.buf = append(c.buf, p...)
		}
	}
	return len(p), nil
}

// parseContentRange parses "start-end" (optionally "bytes start-end" or
// "bytes=start-end").
func parseContentRange(s string) (start, end int64, ok bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "bytes")
	s = strings.TrimLeft(s, " =")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	return start, end, err1 == nil && err2 == nil && start >= 0
}

// setUploadHeaders sets the headers describing a session.
func setUploadHeaders(w http.ResponseWriter, u *chartctl.OCIUpload) {
	h := w.Header()
	h.Set("Location", "/v2/"+u.Name+"/blobs/uploads/"+u.ID)
	h.Set("Docker-Upload-UUID", u.ID)
	last := u.Offset - 1
	if last < 0 {
		last = 0
	}
	h.Set("Range", fmt.Sprintf("0-%d", last))
}

// uploadAccepted answers a session's state with status (202 or 204).
func uploadAccepted(w http.ResponseWriter, u *chartctl.OCIUpload, status int) error {
	setUploadHeaders(w, u)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
	return nil
}

// blobCreated answers 201 for a blob now in name.
func blobCreated(w http.ResponseWriter, name string, d digest.Digest) error {
	h := w.Header()
	h.Set("Location", "/v2/"+name+"/blobs/"+d.String())
	h.Set("Docker-Content-Digest", d.String())
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// removeSessionData deletes an ended session's bytes; what a failure
// leaves, garbage collection removes.
func (r *Registry) removeSessionData(ctx context.Context, id string) {
	if err := r.sessionData().remove(context.WithoutCancel(ctx), id); err != nil {
		r.Logger.Warn("remove upload session data", "session", id, "err", err)
	}
}
