package registry

import (
	"context"
	"errors"
	"regexp"

	"golang.org/x/sync/errgroup"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Signatures of chart versions (issue #30): cosign and Notation push them
// after the chart, as referrers of its manifest or (cosign's legacy
// scheme) under the tag sha256-<hex>.sig. Either manifest of a version
// counts (CONTRACT §18 decision 10): the stored or derived one, and an
// alternate.

// legacySigTag matches cosign's legacy signature tags.
var legacySigTag = regexp.MustCompile(`^(sha256)-([0-9a-f]{64})\.sig$`)

// signedSubject returns the digest of the manifest a pushed manifest
// signs: its subject, or the digest its legacy cosign tag names; "" for
// anything else.
func signedSubject(man *chartctl.OCIManifest, tag string) string {
	if man.Subject != "" {
		return man.Subject
	}
	if m := legacySigTag.FindStringSubmatch(tag); m != nil {
		return m[1] + ":" + m[2]
	}
	return ""
}

// verifySigned re-verifies the chart version whose manifest subject is in
// name, if any, now that a signature of it arrived. A failure is logged:
// the signature is stored, and the next re-verification sees it.
func (r *Registry) verifySigned(ctx context.Context, name, subject string) {
	ctx = context.WithoutCancel(ctx)
	ref, err := r.manifestChart(ctx, name, subject)
	if err != nil {
		r.Logger.Warn("find signed chart version", "name", name, "subject", subject, "err", err)
		return
	}
	if ref == nil {
		return
	}
	if _, err := r.App.VerifyVersion(ctx, ref.Repository, ref.Name, ref.Version); err != nil {
		r.Logger.Warn("verify chart version", "repository", ref.Repository, "chart", ref.Name, "version", ref.Version, "err", err)
	}
}

// manifestChart returns the chart version manifest d of name stands for,
// stored or derived; nil when it is not a chart's.
func (r *Registry) manifestChart(ctx context.Context, name, d string) (*chartctl.OCIChartRef, error) {
	m, err := r.OCI.Manifest(ctx, name, d)
	if err == nil {
		return m.Chart, nil
	} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return nil, err
	}
	if m, err = r.chartManifestByDigest(ctx, name, d); err != nil || m == nil {
		return nil, err
	}
	return m.Chart, nil
}

// versionManifestDigests returns the digests of cv's manifests: the stored
// (pushed over OCI) or derived one, then its alternates. App uses it to
// find the signatures of a version.
func (r *Registry) versionManifestDigests(ctx context.Context, cv *chartctl.ChartVersion) ([]string, error) {
	// Both are asked at the same time: a push waits for them.
	var (
		alts []string
		read errgroup.Group
	)
	read.Go(func() (err error) {
		alts, err = r.OCI.ChartAlternates(ctx, cv.Repository, cv.Name, cv.Version)
		return err
	})
	m, _, err := r.chartManifest(ctx, cv.Repository+"/"+cv.Name, cv)
	if err = errors.Join(err, read.Wait()); err != nil {
		return nil, err
	}
	return append([]string{m.Digest}, alts...), nil
}
