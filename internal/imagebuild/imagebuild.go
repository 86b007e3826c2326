// Package imagebuild assembles the chartctl container image without a
// container daemon and without pulling a base image (CONTRACT §17): from
// static chartctl binaries, one per platform, it builds a multi-platform
// OCI image index with go-containerregistry and writes it as an OCI image
// layout directory, beside an SPDX SBOM per platform attached as an OCI
// referrer.
//
// The base is assembled here: /etc/passwd and /etc/group with the
// non-root user 65532, the CA bundle of the build machine, and the data
// directory /var/lib/chartctl owned by 65532, the only place the server
// writes (so the root filesystem may be mounted read-only).
package imagebuild

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed names (CONTRACT §17).
const (
	// Repository is where releases publish the image: IMAGE_REPO of the
	// release configuration (.goreleaser.yaml), held to it by a test.
	Repository = "ghcr.io/chartctl/chartctl"
	// UID and GID of the user the server runs as.
	UID = 65532
	GID = 65532
	// DataDir is the data directory inside the image.
	DataDir = "/var/lib/chartctl"
	// Binary is the entrypoint.
	Binary = "/usr/bin/chartctl"
	// Linter is chartctl-lint, next to Binary, where serve looks for it
	// to lint charts under a lint policy (CONTRACT §18 decision 9).
	Linter = "/usr/bin/chartctl-lint"
	// SBOMPath is where the image also carries its SBOM.
	SBOMPath = "/usr/share/doc/chartctl/sbom.spdx.json"
	// CABundle is the CA certificates file inside the image.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	// SBOMMediaType is the media type of the SBOM blob and its referrer.
	SBOMMediaType = "application/spdx+json"
	// Addr is the listen address inside the image.
	Addr = "0.0.0.0:8080"
)

// Options describe one build.
type Options struct {
	// Binaries maps a platform ("linux/amd64") to a static chartctl binary.
	Binaries map[string]string
	// Linters maps each platform of Binaries to its static chartctl-lint
	// binary; a platform without one is an error, so no image ships a
	// server whose lint policies refuse every chart.
	Linters map[string]string
	// CABundle is the PEM file of CA certificates to ship
	// (default /etc/ssl/certs/ca-certificates.crt of the build machine).
	CABundle string
	// Version, Revision and Source fill the OCI labels.
	Version, Revision, Source string
	// Created is the image's creation time (default: the Unix epoch, so
	// builds are reproducible).
	Created time.Time
}

// Build writes the image index for every platform of o into the OCI
// layout directory dir (created; an existing layout is replaced).
func Build(dir string, o Options) error {
	if len(o.Binaries) == 0 {
		return errors.New("no binaries given")
	}
	if o.CABundle == "" {
		o.CABundle = CABundle
	}
	ca, err := os.ReadFile(o.CABundle)
	if err != nil {
		return fmt.Errorf("read the CA bundle to ship: %w", err)
	}
	if o.Source == "" {
		o.Source = "https://github.com/chartctl/chartctl"
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "chartctl",
		"org.opencontainers.image.description": "A self-hostable Helm chart repository",
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.url":         o.Source,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
	}
	base, err := baseLayer(ca)
	if err != nil {
		return err
	}

	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}

	platforms := make([]string, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	type sbomFor struct {
		doc  []byte
		desc v1.Descriptor
	}
	var sboms []sbomFor
	for _, p := range platforms {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return fmt.Errorf("platform %q: %w", p, err)
		}
		bin, err := os.ReadFile(o.Binaries[p])
		if err != nil {
			return err
		}
		if o.Linters[p] == "" {
			return fmt.Errorf("platform %q has no chartctl-lint binary (go build ./cmd/chartctl-lint)", p)
		}
		lint, err := os.ReadFile(o.Linters[p])
		if err != nil {
			return err
		}
		sbom, err := SBOM(o.Binaries[p], o.Version, plat.Architecture, o.Created)
		if err != nil {
			return err
		}
		app, err := tarLayer([]entry{
			dirEntry("usr/", 0, 0, 0o755),
			dirEntry("usr/bin/", 0, 0, 0o755),
			fileEntry(strings.TrimPrefix(Binary, "/"), 0, 0, 0o755, bin),
			fileEntry(strings.TrimPrefix(Linter, "/"), 0, 0, 0o755, lint),
			dirEntry("usr/share/", 0, 0, 0o755),
			dirEntry("usr/share/doc/", 0, 0, 0o755),
			dirEntry("usr/share/doc/chartctl/", 0, 0, 0o755),
			fileEntry(strings.TrimPrefix(SBOMPath, "/"), 0, 0, 0o644, sbom),
		})
		if err != nil {
			return err
		}
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base, app)
		if err != nil {
			return err
		}
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
		cf.Created = v1.Time{Time: o.Created}
		cf.Author = "chartctl"
		cf.Config = v1.Config{
			User:         fmt.Sprintf("%d:%d", UID, GID),
			Entrypoint:   []string{Binary},
			Cmd:          []string{"serve"},
			WorkingDir:   DataDir,
			Env:          []string{"PATH=/usr/bin:/bin", "CHARTCTL_ADDR=" + Addr, "CHARTCTL_DATA=" + DataDir, "SSL_CERT_FILE=" + CABundle},
			ExposedPorts: map[string]struct{}{"8080/tcp": {}},
			Volumes:      map[string]struct{}{DataDir: {}},
			Labels:       labels,
		}
		cf.History = []v1.History{
			{Created: v1.Time{Time: o.Created}, CreatedBy: "chartctl imagebuild: base (passwd, group, CA certificates, " + DataDir + ")", Comment: "assembled without a base image"},
			{Created: v1.Time{Time: o.Created}, CreatedBy: "chartctl imagebuild: " + Binary + " and its SBOM"},
		}
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			return err
		}
		img = mutate.Annotations(img, labels).(v1.Image)
		desc, err := partialDescriptor(img, plat)
		if err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: desc})
		sboms = append(sboms, sbomFor{doc: sbom, desc: desc})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	ref := o.Version
	if ref == "" {
		ref = "latest"
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref,
		"io.containerd.image.name":          Repository + ":" + ref,
	})); err != nil {
		return err
	}
	for _, s := range sboms {
		if err := appendSBOMReferrer(lp, s.doc, s.desc, o.Created); err != nil {
			return err
		}
	}
	return nil
}

// partialDescriptor describes img in the index with its platform.
func partialDescriptor(img v1.Image, plat *v1.Platform) (v1.Descriptor, error) {
	d, err := img.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	n, err := img.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: n, Platform: plat}, nil
}

// appendSBOMReferrer stores the SBOM as an OCI artifact whose subject is
// the platform's image manifest, and lists it in the layout's index.json
// (how OCI layouts carry referrers).
func appendSBOMReferrer(lp layout.Path, doc []byte, subject v1.Descriptor, created time.Time) error {
	emptyCfg := []byte("{}")
	cfgHash, cfgSize, _ := v1.SHA256(bytes.NewReader(emptyCfg))
	docHash, docSize, _ := v1.SHA256(bytes.NewReader(doc))
	for h, b := range map[v1.Hash][]byte{cfgHash: emptyCfg, docHash: doc} {
		if err := lp.WriteBlob(h, io.NopCloser(bytes.NewReader(b))); err != nil {
			return err
		}
	}
	subj := subject
	subj.Platform = nil
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  SBOMMediaType,
		Config:        v1.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Digest: cfgHash, Size: cfgSize, Data: emptyCfg},
		Layers:        []v1.Descriptor{{MediaType: SBOMMediaType, Digest: docHash, Size: docSize, Annotations: map[string]string{"org.opencontainers.image.title": "sbom.spdx.json"}}},
		Subject:       &subj,
		Annotations:   map[string]string{"org.opencontainers.image.created": created.UTC().Format(time.RFC3339)},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	mHash, mSize, _ := v1.SHA256(bytes.NewReader(raw))
	if err := lp.WriteBlob(mHash, io.NopCloser(bytes.NewReader(raw))); err != nil {
		return err
	}
	return lp.AppendDescriptor(v1.Descriptor{
		MediaType:    types.OCIManifestSchema1,
		Digest:       mHash,
		Size:         mSize,
		ArtifactType: SBOMMediaType,
		Annotations:  map[string]string{"org.opencontainers.image.title": "SBOM of " + subject.Platform.String(), "dev.chartctl.sbom.subject": subject.Digest.String()},
	})
}

// baseLayer is the project's own base: users, CA certificates, the data
// directory.
func baseLayer(ca []byte) (v1.Layer, error) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("nonroot:x:%d:%d:chartctl:%s:/sbin/nologin\n", UID, GID, DataDir)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", GID)
	return tarLayer([]entry{
		dirEntry("etc/", 0, 0, 0o755),
		fileEntry("etc/passwd", 0, 0, 0o644, []byte(passwd)),
		fileEntry("etc/group", 0, 0, 0o644, []byte(group)),
		fileEntry("etc/nsswitch.conf", 0, 0, 0o644, []byte("hosts: files dns\n")),
		dirEntry("etc/ssl/", 0, 0, 0o755),
		dirEntry("etc/ssl/certs/", 0, 0, 0o755),
		fileEntry(strings.TrimPrefix(CABundle, "/"), 0, 0, 0o644, ca),
		// A /tmp for everyone, sticky, as on any Linux system:
		// chartctl-lint unpacks charts there to lint them where the
		// runtime provides no /dev/shm.
		dirEntry("tmp/", 0, 0, 0o1777),
		dirEntry("var/", 0, 0, 0o755),
		dirEntry("var/lib/", 0, 0, 0o755),
		dirEntry(strings.TrimPrefix(DataDir, "/")+"/", UID, GID, 0o700),
	})
}

type entry struct {
	hdr  tar.Header
	body []byte
}

func dirEntry(name string, uid, gid int, mode int64) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Uid: uid, Gid: gid, Mode: mode}}
}

func fileEntry(name string, uid, gid int, mode int64, body []byte) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Uid: uid, Gid: gid, Mode: mode, Size: int64(len(body))}, body: body}
}

// tarLayer makes a gzip layer of entries with fixed times, so the same
// inputs give the same digest.
func tarLayer(entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.hdr
		h.ModTime = time.Unix(0, 0)
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// SBOM returns an SPDX 2.3 JSON document of the Go binary at path: the
// main module and every module compiled into it, from its build info.
func SBOM(path, version, arch string, created time.Time) ([]byte, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read build info of %s: %w", path, err)
	}
	type pkg struct {
		SPDXID           string `json:"SPDXID"`
		Name             string `json:"name"`
		VersionInfo      string `json:"versionInfo,omitempty"`
		DownloadLocation string `json:"downloadLocation"`
		FilesAnalyzed    bool   `json:"filesAnalyzed"`
		ExternalRefs     []any  `json:"externalRefs,omitempty"`
	}
	type rel struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}
	purl := func(mod, ver string) []any {
		return []any{map[string]string{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": "pkg:golang/" + mod + "@" + ver}}
	}
	mainVer := version
	if mainVer == "" {
		mainVer = bi.Main.Version
	}
	pkgs := []pkg{{SPDXID: "SPDXRef-Package-chartctl", Name: bi.Main.Path, VersionInfo: mainVer, DownloadLocation: "https://github.com/chartctl/chartctl", ExternalRefs: purl(bi.Main.Path, mainVer)}}
	rels := []rel{{"SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-chartctl"}}
	pkgs = append(pkgs, pkg{SPDXID: "SPDXRef-Package-go", Name: "go", VersionInfo: strings.TrimPrefix(bi.GoVersion, "go"), DownloadLocation: "https://go.dev/dl/"})
	rels = append(rels, rel{"SPDXRef-Package-chartctl", "DEPENDS_ON", "SPDXRef-Package-go"})
	for i, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		id := fmt.Sprintf("SPDXRef-Package-%d", i+1)
		p := pkg{SPDXID: id, Name: m.Path, VersionInfo: m.Version, DownloadLocation: "NOASSERTION", ExternalRefs: purl(m.Path, m.Version)}
		pkgs = append(pkgs, p)
		rels = append(rels, rel{"SPDXRef-Package-chartctl", "DEPENDS_ON", id})
	}
	doc := map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              "chartctl-" + mainVer + "-linux-" + arch,
		"documentNamespace": "https://github.com/chartctl/chartctl/sbom/" + mainVer + "/linux-" + arch,
		"creationInfo": map[string]any{
			"created":  created.UTC().Format(time.RFC3339),
			"creators": []string{"Tool: chartctl-imagebuild"},
		},
		"packages":      pkgs,
		"relationships": rels,
	}
	return json.MarshalIndent(doc, "", "  ")
}
