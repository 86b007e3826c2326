// Package ociclient is a small client of the OCI Distribution API for
// the server's own outgoing traffic to registries: mirrors following an
// oci:// upstream, proxy repositories filling their cache, replication
// pushing to a target. It is built on oras-go's registry client (the
// WWW-Authenticate challenge flow: Bearer tokens from the realm the
// registry names with its service and scope, as GHCR, Docker Hub, Harbor
// and chartctl answer, anonymous or with a user name and password; Basic
// auth where the registry asks for it), and adds what the server needs
// on top: every connection through internal/netguard (private addresses
// refused unless the operator allowed them, checked at connect time and
// for every redirect; HTTPS_PROXY honoured after the target is checked),
// plain http only when the caller says so, manifests read whole but
// capped in size and checked against their digest, blobs streamed and
// checked against their digest as they are read, and the referrers of a
// manifest found through the referrers API, its tag-schema fallback
// (`sha256-<hex>` tags) and cosign's `sha256-<hex>.sig` tags.
//
// A Client talks to one registry host; methods name the repository
// within it.
package ociclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/chartctl/chartctl/internal/netguard"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds each phase of a request (connect, TLS, the
	// wait for response headers), as --upstream-timeout's default.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxManifestSize caps a manifest, an index or a token
	// response read into memory.
	DefaultMaxManifestSize = 4 << 20
	// DefaultPrivateFlag is the server flag named in refusals of private
	// addresses.
	DefaultPrivateFlag = "--allow-private-upstreams"
	// maxRedirects bounds a chain of redirects, as net/http's default.
	maxRedirects = 10
)

// Descriptor describes a manifest or blob: media type, digest and size
// (and, for referrers, the artifact type and annotations).
type Descriptor = ocispec.Descriptor

// ErrNotFound is returned (wrapped) when the registry answers that a
// repository, manifest, tag or blob does not exist.
var ErrNotFound = errdef.ErrNotFound

// ErrNoCatalog is returned (wrapped) by Catalog when the registry has no
// /v2/_catalog (GHCR and Docker Hub do not offer one).
var ErrNoCatalog = errors.New("the registry does not list its repositories (no /v2/_catalog): name one chart repository, oci://HOST/PATH/CHART")

// ErrUnauthorized is returned (wrapped) when the registry refuses the
// client's credential, or wants one and the client has none.
var ErrUnauthorized = errors.New("the registry refused the credential (or wants one)")

// ErrDigestMismatch is returned (wrapped) when content read from the
// registry does not match the digest or size it was asked for.
var ErrDigestMismatch = errors.New("content does not match its digest")

// ErrTooLarge is returned (wrapped) when a manifest is larger than
// Options.MaxManifestSize.
var ErrTooLarge = errors.New("manifest too large")

// Options configure a Client.
type Options struct {
	// Host is the registry's HOST[:PORT].
	Host string
	// PlainHTTP talks http instead of https to Host; the caller allows it
	// only for hosts its operator listed (--plain-http-upstreams).
	PlainHTTP bool
	// Username and Password are the credential given to the registry
	// when it challenges (Basic, or to its token realm); empty for
	// anonymous access. A Password with no Username is sent as a bearer
	// token (an identity token, a robot secret).
	Username, Password string
	// Transport, when set, carries every request as it is (the caller
	// built it with netguard: a CIDR allow list, a test transport). When
	// nil, netguard.Upstream(Timeout, AllowPrivate, PrivateFlag) does.
	Transport http.RoundTripper
	// AllowPrivate lets the default transport reach loopback and private
	// addresses.
	AllowPrivate bool
	// PrivateFlag names the server flag that allows private addresses, in
	// refusals (default DefaultPrivateFlag).
	PrivateFlag string
	// Timeout bounds each phase of a request (default DefaultTimeout).
	Timeout time.Duration
	// MaxManifestSize caps manifests read into memory (default
	// DefaultMaxManifestSize).
	MaxManifestSize int64
	// UserAgent is sent with every request (default "chartctl").
	UserAgent string
	// PageSize asks for pages of that many tags or catalog entries (the
	// registry's default when 0); the Link header leads to the next.
	PageSize int
}

// Client talks to one OCI registry. It is safe for concurrent use; tokens
// the registry issues are cached and reused per scope.
type Client struct {
	host      string
	plainHTTP bool
	maxMan    int64
	pageSize  int
	auth      *auth.Client
}

// New returns a client of the registry o.Host.
func New(o Options) (*Client, error) {
	host := strings.TrimSuffix(o.Host, "/")
	if host == "" || strings.ContainsAny(host, "/?#@ ") {
		return nil, fmt.Errorf("%q is not a registry host (HOST or HOST:PORT)", o.Host)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxManifestSize <= 0 {
		o.MaxManifestSize = DefaultMaxManifestSize
	}
	if o.PrivateFlag == "" {
		o.PrivateFlag = DefaultPrivateFlag
	}
	if o.UserAgent == "" {
		o.UserAgent = "chartctl"
	}
	rt := o.Transport
	if rt == nil {
		rt = netguard.Upstream(o.Timeout, o.AllowPrivate, o.PrivateFlag)
	}
	hc := &http.Client{Transport: rt, CheckRedirect: checkRedirect}
	cred := auth.EmptyCredential
	switch {
	case o.Username != "":
		cred = auth.Credential{Username: o.Username, Password: o.Password}
	case o.Password != "":
		cred = auth.Credential{AccessToken: o.Password}
	}
	header := http.Header{}
	header.Set("User-Agent", o.UserAgent)
	ac := &auth.Client{
		Client:     hc,
		Header:     header,
		Credential: auth.StaticCredential(host, cred),
		Cache:      auth.NewCache(),
		ClientID:   "chartctl",
	}
	return &Client{host: host, plainHTTP: o.PlainHTTP, maxMan: o.MaxManifestSize, pageSize: o.PageSize, auth: ac}, nil
}

// checkRedirect follows at most maxRedirects redirects and never from
// https down to plain http (a registry's blob storage may be elsewhere;
// the dialer checks every address it connects to). net/http drops the
// Authorization header when a redirect leaves the host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "https" && via[0].URL.Scheme == "https" {
		return fmt.Errorf("refused a redirect from https to %s", req.URL.Redacted())
	}
	if req.URL.Scheme != "https" && req.URL.Scheme != "http" {
		return fmt.Errorf("refused a redirect to %s", req.URL.Redacted())
	}
	return nil
}

// Host returns the registry's HOST[:PORT].
func (c *Client) Host() string { return c.host }

// repository returns oras's view of one repository of the registry.
func (c *Client) repository(name string) (*remote.Repository, error) {
	r, err := remote.NewRepository(c.host + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("%q is not a repository name: %w", name, err)
	}
	r.PlainHTTP = c.plainHTTP
	r.Client = c.auth
	r.MaxMetadataBytes = c.maxMan
	r.TagListPageSize = c.pageSize
	return r, nil
}

// HeadManifest resolves ref (a tag or a digest) in repo with a HEAD
// request: the manifest's digest, media type and size, without its body.
// Returns ErrNotFound when there is no such manifest.
func (c *Client) HeadManifest(ctx context.Context, repo, ref string) (Descriptor, error) {
	r, err := c.repository(repo)
	if err != nil {
		return Descriptor{}, err
	}
	d, err := r.Manifests().Resolve(ctx, ref)
	if err != nil {
		return Descriptor{}, c.wrap(repo, ref, err)
	}
	return d, nil
}

// Manifest fetches the manifest ref (a tag or a digest) of repo: its
// descriptor and bytes, checked against the digest (the one asked for,
// or the one the registry names). Manifests over the size cap are
// refused with ErrTooLarge; a missing one is ErrNotFound.
func (c *Client) Manifest(ctx context.Context, repo, ref string) (Descriptor, []byte, error) {
	r, err := c.repository(repo)
	if err != nil {
		return Descriptor{}, nil, err
	}
	d, rc, err := r.Manifests().FetchReference(ctx, ref)
	if err != nil {
		return Descriptor{}, nil, c.wrap(repo, ref, err)
	}
	defer rc.Close()
	if d.Size > c.maxMan {
		return Descriptor{}, nil, fmt.Errorf("%s/%s:%s: %w (%d bytes, at most %d)", c.host, repo, ref, ErrTooLarge, d.Size, c.maxMan)
	}
	b, err := content.ReadAll(rc, d)
	if err != nil {
		return Descriptor{}, nil, fmt.Errorf("%s/%s:%s: %w: %v", c.host, repo, ref, ErrDigestMismatch, err)
	}
	return d, b, nil
}

// Blob streams the blob desc of repo. A desc without a size is resolved
// first with a HEAD. The reader checks size and digest as it is read:
// its last Read returns ErrDigestMismatch instead of io.EOF when they do
// not match, so a caller that stores what it reads must treat any error
// as a failed copy. A missing blob is ErrNotFound.
func (c *Client) Blob(ctx context.Context, repo string, desc Descriptor) (io.ReadCloser, error) {
	if err := desc.Digest.Validate(); err != nil {
		return nil, fmt.Errorf("blob digest %q: %w", desc.Digest, err)
	}
	r, err := c.repository(repo)
	if err != nil {
		return nil, err
	}
	if desc.Size <= 0 {
		d, err := r.Blobs().Resolve(ctx, desc.Digest.String())
		if err != nil {
			return nil, c.wrap(repo, desc.Digest.String(), err)
		}
		desc.Size = d.Size
	}
	rc, err := r.Blobs().Fetch(ctx, desc)
	if err != nil {
		return nil, c.wrap(repo, desc.Digest.String(), err)
	}
	return &verifyReader{rc: rc, h: desc.Digest.Algorithm().Hash(), want: desc, left: desc.Size}, nil
}

// verifyReader passes a blob through, hashing it, and turns its end into
// ErrDigestMismatch when size or digest differ from what was asked for.
type verifyReader struct {
	rc   io.ReadCloser
	h    hash.Hash
	want Descriptor
	left int64
	err  error
}

func (v *verifyReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	// One byte more than expected is enough to tell a longer blob.
	if int64(len(p)) > v.left+1 {
		p = p[:v.left+1]
	}
	n, err := v.rc.Read(p)
	v.h.Write(p[:n])
	v.left -= int64(n)
	if v.left < 0 {
		v.err = fmt.Errorf("blob %s: %w (longer than %d bytes)", v.want.Digest, ErrDigestMismatch, v.want.Size)
		return n, v.err
	}
	if errors.Is(err, io.EOF) {
		switch {
		case v.left > 0:
			v.err = fmt.Errorf("blob %s: %w (%d bytes short)", v.want.Digest, ErrDigestMismatch, v.left)
		case digest.NewDigest(v.want.Digest.Algorithm(), v.h) != v.want.Digest:
			v.err = fmt.Errorf("blob %s: %w", v.want.Digest, ErrDigestMismatch)
		default:
			v.err = io.EOF
		}
		return n, v.err
	}
	if err != nil {
		v.err = err
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.rc.Close() }

// Tags lists every tag of repo, following the registry's Link pages.
// A repository the registry does not know is ErrNotFound.
func (c *Client) Tags(ctx context.Context, repo string) ([]string, error) {
	r, err := c.repository(repo)
	if err != nil {
		return nil, err
	}
	var tags []string
	err = r.Tags(ctx, "", func(page []string) error {
		tags = append(tags, page...)
		return nil
	})
	if err != nil {
		return nil, c.wrap(repo, "", err)
	}
	return tags, nil
}

// Catalog lists every repository the registry's /v2/_catalog shows to
// this client's credential, following its Link pages. A registry without
// a catalog (it answers 404, 405 or UNSUPPORTED) is ErrNoCatalog.
func (c *Client) Catalog(ctx context.Context) ([]string, error) {
	reg, err := remote.NewRegistry(c.host)
	if err != nil {
		return nil, err
	}
	reg.PlainHTTP = c.plainHTTP
	reg.Client = c.auth
	reg.RepositoryListPageSize = c.pageSize
	var repos []string
	err = reg.Repositories(ctx, "", func(page []string) error {
		repos = append(repos, page...)
		return nil
	})
	if err != nil {
		var er *errcode.ErrorResponse
		if errors.As(err, &er) && (er.StatusCode == http.StatusNotFound || er.StatusCode == http.StatusMethodNotAllowed || hasCode(er, errcode.ErrorCodeUnsupported)) {
			return nil, fmt.Errorf("%s: %w", c.host, ErrNoCatalog)
		}
		return nil, c.wrap("", "", err)
	}
	return repos, nil
}

// BlobExists asks with a HEAD whether repo holds the blob desc.
func (c *Client) BlobExists(ctx context.Context, repo string, desc Descriptor) (bool, error) {
	r, err := c.repository(repo)
	if err != nil {
		return false, err
	}
	ok, err := r.Blobs().Exists(ctx, desc)
	if err != nil {
		return false, c.wrap(repo, desc.Digest.String(), err)
	}
	return ok, nil
}

// PushBlob uploads the blob desc, read from body, to repo unless the
// registry already has it there: a monolithic upload (POST, then PUT
// with ?digest=), which the registry checks against the digest.
func (c *Client) PushBlob(ctx context.Context, repo string, desc Descriptor, body io.Reader) error {
	if ok, err := c.BlobExists(ctx, repo, desc); err != nil || ok {
		return err
	}
	r, err := c.repository(repo)
	if err != nil {
		return err
	}
	if err := r.Blobs().Push(ctx, desc, body); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return c.wrap(repo, desc.Digest.String(), err)
	}
	return nil
}

// MountBlob makes the blob desc, which the registry holds in the
// repository from, present in repo: a cross-repository mount when the
// registry offers one, else an upload of what open returns (open may be
// nil when the caller has no other copy: then the blob is read from
// `from`). Nothing is sent when repo already has the blob.
func (c *Client) MountBlob(ctx context.Context, repo, from string, desc Descriptor, open func() (io.ReadCloser, error)) error {
	if ok, err := c.BlobExists(ctx, repo, desc); err != nil || ok {
		return err
	}
	r, err := c.repository(repo)
	if err != nil {
		return err
	}
	if open == nil {
		open = func() (io.ReadCloser, error) { return c.Blob(ctx, from, desc) }
	}
	if err := r.Mount(ctx, desc, from, open); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return c.wrap(repo, desc.Digest.String(), err)
	}
	return nil
}

// PushManifest stores body, a manifest of mediaType, in repo under ref
// (a tag; "" pushes it by digest only) and returns its descriptor. The
// blobs it names must be in repo first. A manifest with a subject, sent
// to a registry without the referrers API, is also added to the
// subject's `sha256-<hex>` tag-schema index (as oras and Helm do).
func (c *Client) PushManifest(ctx context.Context, repo, ref, mediaType string, body []byte) (Descriptor, error) {
	if int64(len(body)) > c.maxMan {
		return Descriptor{}, fmt.Errorf("%w (%d bytes, at most %d)", ErrTooLarge, len(body), c.maxMan)
	}
	r, err := c.repository(repo)
	if err != nil {
		return Descriptor{}, err
	}
	d := content.NewDescriptorFromBytes(mediaType, body)
	if ref == "" {
		err = r.Manifests().Push(ctx, d, bytes.NewReader(body))
	} else {
		err = r.Manifests().PushReference(ctx, d, bytes.NewReader(body), ref)
	}
	if err != nil {
		return Descriptor{}, c.wrap(repo, ref, err)
	}
	return d, nil
}

// DeleteManifest deletes the manifest ref (a tag, resolved to its
// digest, or a digest) from repo. A missing manifest is ErrNotFound.
func (c *Client) DeleteManifest(ctx context.Context, repo, ref string) error {
	r, err := c.repository(repo)
	if err != nil {
		return err
	}
	d, err := r.Manifests().Resolve(ctx, ref)
	if err != nil {
		return c.wrap(repo, ref, err)
	}
	if err := r.Manifests().Delete(ctx, d); err != nil {
		return c.wrap(repo, ref, err)
	}
	return nil
}

// Referrer is a manifest that refers to another one: a signature, an
// SBOM, an attestation.
type Referrer struct {
	Descriptor
	// Tag is set for a referrer found by cosign's tag convention
	// (`sha256-<hex>.sig`, `.att`, `.sbom`): copies keep that tag.
	Tag string
}

// cosignSuffixes are the tags cosign gives, beside the subject's digest,
// to signatures, attestations and SBOMs it attaches without the
// referrers API.
var cosignSuffixes = []string{"sig", "att", "sbom"}

// Referrers lists the manifests in repo that refer to subject: through
// the referrers API (GET /v2/<name>/referrers/<digest>), falling back to
// the `sha256-<hex>` tag-schema index where the registry has no such API,
// plus cosign's `sha256-<hex>.sig` (and .att, .sbom) tags.
func (c *Client) Referrers(ctx context.Context, repo string, subject Descriptor) ([]Referrer, error) {
	r, err := c.repository(repo)
	if err != nil {
		return nil, err
	}
	var out []Referrer
	seen := map[digest.Digest]bool{}
	err = r.Referrers(ctx, subject, "", func(page []ocispec.Descriptor) error {
		for _, d := range page {
			if !seen[d.Digest] {
				seen[d.Digest] = true
				out = append(out, Referrer{Descriptor: d})
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errdef.ErrNotFound) {
		return nil, c.wrap(repo, subject.Digest.String(), err)
	}
	for _, suffix := range cosignSuffixes {
		tag := subject.Digest.Algorithm().String() + "-" + subject.Digest.Encoded() + "." + suffix
		d, err := r.Manifests().Resolve(ctx, tag)
		if errors.Is(err, errdef.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, c.wrap(repo, tag, err)
		}
		if !seen[d.Digest] {
			seen[d.Digest] = true
			out = append(out, Referrer{Descriptor: d, Tag: tag})
		}
	}
	return out, nil
}

// IsNotFound reports whether err says the registry does not have what was
// asked for.
func IsNotFound(err error) bool {
	if errors.Is(err, errdef.ErrNotFound) {
		return true
	}
	var er *errcode.ErrorResponse
	return errors.As(err, &er) && er.StatusCode == http.StatusNotFound
}

// StatusCode returns the HTTP status of the registry's error answer in
// err, or 0 when err is not one (a connection failure, say).
func StatusCode(err error) int {
	var er *errcode.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode
	}
	return 0
}

func hasCode(er *errcode.ErrorResponse, code string) bool {
	for _, e := range er.Errors {
		if e.Code == code {
			return true
		}
	}
	return false
}

// wrap names what was asked for in err, and turns 404 answers into
// ErrNotFound.
func (c *Client) wrap(repo, ref string, err error) error {
	what := c.host
	if repo != "" {
		what += "/" + repo
	}
	if ref != "" {
		if strings.Contains(ref, ":") {
			what += "@" + ref
		} else {
			what += ":" + ref
		}
	}
	if !errors.Is(err, errdef.ErrNotFound) && StatusCode(err) == http.StatusNotFound {
		return fmt.Errorf("%s: %w: %v", what, ErrNotFound, err)
	}
	if st := StatusCode(err); st == http.StatusUnauthorized || st == http.StatusForbidden || errors.Is(err, auth.ErrBasicCredentialNotFound) {
		return fmt.Errorf("%s: %w: %v", what, ErrUnauthorized, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
