// Package s3blob keeps content-addressed blobs (chart archives, provenance
// files) in a bucket of any S3-compatible object store (AWS S3, MinIO,
// Ceph RGW, versitygw, R2). It implements chartctl.BlobStore, so several
// chartctl replicas share one bucket.
//
// The store is named by a URL:
//
//	s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true
//
// endpoint defaults to AWS S3 (https://s3.amazonaws.com), region to the
// bucket's own (asked of the store), and path_style to false (virtual-host
// addressing, as AWS wants; most other stores want path_style=true).
// Credentials come from the standard AWS chain: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), the shared credentials
// file (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE), then the container or
// instance role (ECS, EKS web identity, EC2 metadata).
//
// Layout under PREFIX:
//
//	sha256/<hex>       one object per blob, named by its sha256
//	sha512/<hex>       the same for blobs addressed by sha512 (OCI clients
//	                   may push those)
//	uploads/<random>   large blobs being assembled (multipart uploads)
//	sessions/<id>/<offset>  chunks of the OCI registry's upload sessions in
//	                   progress (chartctl.SessionStore), so that every
//	                   replica can continue a session another started
//
// A blob smaller than one part goes up in a single PUT straight to its
// digest's key when committed; S3 makes an object visible only once its
// PUT completes, so nothing partial is ever seen under a digest. A larger
// blob streams to a multipart upload under uploads/ as it is written, one
// part in memory at a time, and Commit completes it and copies it to its
// digest's key server-side. A crash can leave an incomplete multipart
// upload or an object under uploads/: a bucket lifecycle rule removes them
// (see docs/scale-out.md).
package s3blob

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure Store implements chartctl.AlgorithmBlobStore.
var _ chartctl.AlgorithmBlobStore = (*Store)(nil)

// algorithms are the digest algorithms blobs may be addressed by, with the
// length of their hex digests; Walk visits them in algorithmNames order.
var (
	algorithms     = map[string]int{"sha256": sha256.Size * 2, "sha512": sha512.Size * 2}
	algorithmNames = []string{"sha256", "sha512"}
)

const (
	uploadsDir = "uploads/"

	// DefaultPartSize is the size of a multipart upload's parts, and so
	// the largest blob sent in one PUT and the memory one writer holds.
	DefaultPartSize = 8 << 20
	// maxCopySize is the largest object S3 copies in one request.
	maxCopySize = 5 << 30
)

// Config is a parsed store URL.
type Config struct {
	Bucket string
	// Prefix is "" or a key prefix ending in "/".
	Prefix string
	// Endpoint is host[:port]; Secure says whether it speaks HTTPS.
	Endpoint string
	Secure   bool
	// Region is "" to ask the store for the bucket's region.
	Region    string
	PathStyle bool
	// PartSize is the multipart part size (DefaultPartSize when 0).
	PartSize int
}

// ParseURL parses s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=BOOL.
func ParseURL(raw string) (*Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("invalid blob store URL %q: use s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true", raw)
	}
	c := &Config{Bucket: u.Host, Endpoint: "s3.amazonaws.com", Secure: true}
	if p := strings.Trim(u.Path, "/"); p != "" {
		c.Prefix = p + "/"
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || strings.Trim(e.Path, "/") != "" {
				return nil, fmt.Errorf("invalid endpoint %q in blob store URL: use http(s)://HOST[:PORT]", v)
			}
			c.Endpoint, c.Secure = e.Host, e.Scheme == "https"
		case "region":
			c.Region = v
		case "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("invalid path_style %q in blob store URL: use true or false", v)
			}
			c.PathStyle = b
		default:
			return nil, fmt.Errorf("unknown parameter %q in blob store URL: use endpoint, region and path_style", k)
		}
	}
	return c, nil
}

// Store is a chartctl.BlobStore on one bucket (and prefix) of an S3 store.
// It is safe for concurrent use.
type Store struct {
	client   *minio.Client
	core     minio.Core
	bucket   string
	prefix   string
	partSize int
	where    string
}

// Open connects to the store the URL names and checks that the bucket
// exists (chartctl never creates it).
func Open(ctx context.Context, rawURL string) (*Store, error) {
	c, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, c)
}

// OpenConfig is Open with a parsed configuration.
func OpenConfig(ctx context.Context, c *Config) (*Store, error) {
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
	lookup := minio.BucketLookupAuto
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	// A few retries ride out a blip; a longer outage fails fast, as 503.
	client, err := minio.New(c.Endpoint, &minio.Options{Creds: creds, Secure: c.Secure, Region: c.Region, BucketLookup: lookup, MaxRetries: 3})
	if err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	s := &Store{
		client: client, core: minio.Core{Client: client},
		bucket: c.Bucket, prefix: c.Prefix, partSize: c.PartSize,
		where: "s3://" + c.Bucket + "/" + c.Prefix + " at " + c.Endpoint,
	}
	if s.partSize <= 0 {
		s.partSize = DefaultPartSize
	}
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("connect to blob store %s: %w", s.where, err)
	}
	if !ok {
		return nil, fmt.Errorf("blob store bucket %q does not exist at %s; create it first", c.Bucket, c.Endpoint)
	}
	return s, nil
}

// Ping checks that the bucket answers.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.client.BucketExists(ctx, s.bucket)
	return s.wrap("check blob store", err)
}

// ValidDigest reports whether d is "sha256:" followed by 64 lowercase hex
// digits, or "sha512:" followed by 128; only such strings ever become
// object keys.
func ValidDigest(d string) bool {
	alg, h, ok := strings.Cut(d, ":")
	return ok && validHex(alg, h)
}

// validHex reports whether s is a lowercase hex digest of algorithm alg.
func validHex(alg, s string) bool {
	n, ok := algorithms[alg]
	if !ok || len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// key returns the object key of the blob with digest d (validated).
func (s *Store) key(d string) string {
	alg, h, _ := strings.Cut(d, ":")
	return s.prefix + alg + "/" + h
}

func notFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Blob not found.") }

// wrap maps a store error: a missing object is ENOTFOUND, a store that
// cannot be reached or answers with a server error is EUNAVAILABLE (503);
// anything else is wrapped with what was being done, for the log.
func (s *Store) wrap(op string, err error) error {
	var e *chartctl.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey":
		return notFound()
	case resp.StatusCode >= 500 || resp.Code == "SlowDown" || unreachable(err):
		return fmt.Errorf("%s: %v: %w", op, err, chartctl.Errorf(chartctl.EUNAVAILABLE, "The blob store is unavailable; retry in a moment."))
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unreachable reports whether err is a transport failure.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// Open opens the blob with digest for reading: one GET, whose response
// serves reads from the start; a read after a Seek elsewhere is a ranged
// GET. It returns ENOTFOUND if the digest is malformed or no such blob is
// stored.
func (s *Store) Open(ctx context.Context, digest string) (chartctl.Blob, error) {
	if !ValidDigest(digest) {
		return nil, notFound()
	}
	key := s.key(digest)
	body, info, _, err := s.core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap("open blob", err)
	}
	return &Object{s: s, ctx: ctx, key: key, body: body, size: info.Size}, nil
}

// Object is an open stored blob: an io.ReadSeekCloser over GETs.
type Object struct {
	s   *Store
	ctx context.Context
	key string

	// body is the response being read, positioned at bodyPos; pos is
	// where the next Read starts. Seeking only moves pos (http.ServeContent
	// seeks to the end and back before reading), so the body opened by
	// Open is used when reading starts where it is.
	body         io.ReadCloser
	bodyPos, pos int64
	size         int64
	closed       bool
}

// Size returns the blob's length in bytes.
func (o *Object) Size() int64 { return o.size }

// Read reads from the current position.
func (o *Object) Read(p []byte) (int, error) {
	if o.closed {
		return 0, errors.New("read blob: closed")
	}
	if o.pos >= o.size {
		return 0, io.EOF
	}
	if o.body != nil && o.bodyPos != o.pos {
		_ = o.body.Close()
		o.body = nil
	}
	if o.body == nil {
		opts := minio.GetObjectOptions{}
		if o.pos > 0 { // SetRange(0, 0) would ask for the first byte only
			if err := opts.SetRange(o.pos, 0); err != nil {
				return 0, err
			}
		}
		body, _, _, err := o.s.core.GetObject(o.ctx, o.s.bucket, o.key, opts)
		if err != nil {
			return 0, o.s.wrap("read blob", err)
		}
		o.body, o.bodyPos = body, o.pos
	}
	n, err := o.body.Read(p)
	o.pos += int64(n)
	o.bodyPos = o.pos
	switch {
	case err == io.EOF && o.pos < o.size:
		return n, o.s.wrap("read blob", io.ErrUnexpectedEOF)
	case err != nil && err != io.EOF:
		return n, o.s.wrap("read blob", err)
	}
	return n, err
}

// Seek sets the position of the next Read.
func (o *Object) Seek(offset int64, whence int) (int64, error) {
	if o.closed {
		return 0, errors.New("seek blob: closed")
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.pos + offset
	case io.SeekEnd:
		abs = o.size + offset
	default:
		return 0, errors.New("seek blob: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("seek blob: negative position")
	}
	o.pos = abs
	return abs, nil
}

// Close ends the read.
func (o *Object) Close() error {
	o.closed = true
	if o.body != nil {
		err := o.body.Close()
		o.body = nil
		return err
	}
	return nil
}

// ModTime returns when the blob with digest was last committed (its
// object's LastModified). It returns ENOTFOUND if the digest is malformed
// or no such blob is stored.
func (s *Store) ModTime(ctx context.Context, digest string) (time.Time, error) {
	if !ValidDigest(digest) {
		return time.Time{}, notFound()
	}
	info, err := s.client.StatObject(ctx, s.bucket, s.key(digest), minio.StatObjectOptions{})
	if err != nil {
		return time.Time{}, s.wrap("stat blob", err)
	}
	return info.LastModified, nil
}

// Delete removes the blob with digest. Deleting a missing blob, or one
// whose digest is malformed, succeeds.
func (s *Store) Delete(ctx context.Context, digest string) error {
	if !ValidDigest(digest) {
		return nil
	}
	err := s.client.RemoveObject(ctx, s.bucket, s.key(digest), minio.RemoveObjectOptions{})
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return nil
	}
	return s.wrap("delete blob", err)
}

// Walk calls fn for the digest of every stored blob: the sha256 ones, then
// the sha512 ones, each in ascending order of digest (S3 lists keys in
// order). It stops at the first error fn returns and returns it. Objects
// that are not blobs are skipped.
func (s *Store) Walk(ctx context.Context, fn func(digest string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine when fn stops early
	for _, alg := range algorithmNames {
		dir := s.prefix + alg + "/"
		for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
			if obj.Err != nil {
				return s.wrap("walk blobs", obj.Err)
			}
			h := strings.TrimPrefix(obj.Key, dir)
			if !validHex(alg, h) {
				continue
			}
			if err := fn(alg + ":" + h); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// Create starts a new blob addressed by its sha256.
func (s *Store) Create(ctx context.Context) (chartctl.BlobWriter, error) {
	return s.CreateAlgorithm(ctx, "sha256")
}

// CreateAlgorithm starts a new blob addressed by algorithm ("sha256" or
// "sha512"). It returns EINVALID for another algorithm.
func (s *Store) CreateAlgorithm(ctx context.Context, alg string) (chartctl.BlobWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var h hash.Hash
	switch alg {
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return nil, chartctl.Invalid("digest", "Unsupported digest algorithm %q; use sha256 or sha512.", alg)
	}
	return &writer{s: s, ctx: ctx, alg: alg, h: h}, nil
}

// writer receives one blob: up to one part in memory, then a multipart
// upload under uploads/.
type writer struct {
	s   *Store
	ctx context.Context
	alg string
	h   hash.Hash
	n   int64
	buf []byte

	uploadKey, uploadID string
	parts               []minio.CompletePart

	// target, when set, is the key Commit writes to instead of the
	// digest's (an upload session's chunk).
	target string

	digest string // set once committed
	closed bool   // committed, aborted or failed
}

// Write appends p to the blob, sending each part as it fills.
func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errors.New("write blob: writer is closed")
	}
	w.h.Write(p)
	w.n += int64(len(p))
	w.buf = append(w.buf, p...)
	for len(w.buf) >= w.s.partSize {
		if err := w.sendPart(w.buf[:w.s.partSize]); err != nil {
			w.fail()
			return 0, err
		}
		// Keep one part's memory: move the rest to the front.
		w.buf = w.buf[:copy(w.buf, w.buf[w.s.partSize:])]
	}
	return len(p), nil
}

// putOptions are the options of a whole object's PUT, whose sha256 the
// writer has computed and signs as the payload's hash; sendPart sets
// DisableContentSha256 on each part for the same reason. It turns off minio-go's streaming signature
// (aws-chunked bodies with a signature per chunk), which it uses over
// plain HTTP otherwise although the hash is known: the body goes as it
// is, with its Content-Length, still signed with its sha256. A server
// that leaves part of an aws-chunked body unread (versitygw v1.8.0 with
// --keep-alive does, now and then) would otherwise parse the rest as the
// next request and answer the client's following request on that
// connection with a 400.
var putOptions = minio.PutObjectOptions{ContentType: "application/octet-stream", DisableContentSha256: true}

// sendPart uploads data as the next part, starting the multipart upload
// on the first.
func (w *writer) sendPart(data []byte) error {
	if w.uploadID == "" {
		var rnd [16]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return err
		}
		w.uploadKey = w.s.prefix + uploadsDir + hex.EncodeToString(rnd[:])
		id, err := w.s.core.NewMultipartUpload(w.ctx, w.s.bucket, w.uploadKey, minio.PutObjectOptions{ContentType: "application/octet-stream"})
		if err != nil {
			return w.s.wrap("write blob", err)
		}
		w.uploadID = id
	}
	sum := sha256.Sum256(data)
	num := len(w.parts) + 1
	part, err := w.s.core.PutObjectPart(w.ctx, w.s.bucket, w.uploadKey, w.uploadID, num,
		bytes.NewReader(data), int64(len(data)), minio.PutObjectPartOptions{Sha256Hex: hex.EncodeToString(sum[:]), DisableContentSha256: true})
	if err != nil {
		return w.s.wrap("write blob", err)
	}
	w.parts = append(w.parts, minio.CompletePart{PartNumber: num, ETag: part.ETag})
	return nil
}

// Digest returns "<algorithm>:<hex>" of the bytes written so far.
func (w *writer) Digest() string { return w.alg + ":" + hex.EncodeToString(w.h.Sum(nil)) }

// Size returns the number of bytes written so far.
func (w *writer) Size() int64 { return w.n }

// Commit stores the blob under its digest and returns the digest; when it
// returns, the store has acknowledged the object. Committing bytes already
// stored succeeds. Calling Commit again after success returns the same
// digest.
func (w *writer) Commit() (string, error) {
	if w.digest != "" {
		return w.digest, nil
	}
	if w.closed {
		return "", errors.New("commit blob: writer is closed")
	}
	digest := w.Digest()
	key := w.target
	if key == "" {
		key = w.s.key(digest)
	}
	var err error
	if w.uploadID == "" {
		// One PUT straight to the digest's key, signed with the payload's
		// sha256 so the store verifies what it received.
		sum := sha256.Sum256(w.buf)
		_, err = w.s.core.PutObject(w.ctx, w.s.bucket, key, bytes.NewReader(w.buf), int64(len(w.buf)), "",
			hex.EncodeToString(sum[:]), putOptions)
		err = w.s.wrap("commit blob", err)
	} else {
		err = w.commitMultipart(key)
	}
	if err != nil {
		w.fail()
		return "", err
	}
	w.closed, w.buf, w.digest = true, nil, digest
	return digest, nil
}

// commitMultipart sends the last part, completes the upload and copies it
// to key, unless a blob is already stored there, then removes the upload.
func (w *writer) commitMultipart(key string) error {
	if len(w.buf) > 0 {
		if err := w.sendPart(w.buf); err != nil {
			return err
		}
	}
	if _, err := w.s.core.CompleteMultipartUpload(w.ctx, w.s.bucket, w.uploadKey, w.uploadID, w.parts, minio.PutObjectOptions{}); err != nil {
		return w.s.wrap("commit blob", err)
	}
	w.uploadID = ""
	defer func() {
		_ = w.s.client.RemoveObject(context.WithoutCancel(w.ctx), w.s.bucket, w.uploadKey, minio.RemoveObjectOptions{})
	}()
	// Copied even when the digest is stored already: the copy refreshes
	// the object's modification time, so garbage collection sees a blob a
	// record is about to refer to as young.
	dst := minio.CopyDestOptions{Bucket: w.s.bucket, Object: key}
	src := minio.CopySrcOptions{Bucket: w.s.bucket, Object: w.uploadKey}
	var err error
	if w.n <= maxCopySize {
		_, err = w.s.client.CopyObject(w.ctx, dst, src)
	} else {
		_, err = w.s.client.ComposeObject(w.ctx, dst, src)
	}
	return w.s.wrap("commit blob", err)
}

// fail closes the writer after an error, discarding what was sent.
func (w *writer) fail() { _ = w.Abort() }

// Abort discards an uncommitted blob. It is safe after Commit, and safe to
// call more than once.
func (w *writer) Abort() error {
	if w.digest != "" {
		return nil
	}
	w.closed, w.buf = true, nil
	if w.uploadID == "" {
		return nil
	}
	id := w.uploadID
	w.uploadID = ""
	// Abort even when the request that wrote the blob was cancelled.
	if err := w.s.core.AbortMultipartUpload(context.WithoutCancel(w.ctx), w.s.bucket, w.uploadKey, id); err != nil {
		return w.s.wrap("abort blob", err)
	}
	return nil
}
