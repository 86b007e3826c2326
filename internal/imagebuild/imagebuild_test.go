package imagebuild_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/chartctl/chartctl/internal/imagebuild"
	"github.com/chartctl/chartctl/internal/testkit"
)

// image is what checkLayout found in a layout.
type image struct {
	byArch map[string]v1.Image
	sboms  map[string]map[string]any // by platform manifest digest
}

// checkLayout reads an OCI layout with go-containerregistry and checks
// what every chartctl image must be: both platforms, non-root user,
// labels, environment, and an SBOM referrer per platform.
func checkLayout(t *testing.T, dir, wantVersion string) *image {
	t.Helper()
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := &image{byArch: map[string]v1.Image{}, sboms: map[string]map[string]any{}}
	var index v1.ImageIndex
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			if d.Annotations["org.opencontainers.image.ref.name"] != wantVersion {
				t.Errorf("ref.name = %q, want %q", d.Annotations["org.opencontainers.image.ref.name"], wantVersion)
			}
			if index, err = top.ImageIndex(d.Digest); err != nil {
				t.Fatal(err)
			}
		case d.ArtifactType == imagebuild.SBOMMediaType:
			img, err := top.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.Subject == nil || m.ArtifactType != imagebuild.SBOMMediaType || len(m.Layers) != 1 {
				t.Fatalf("SBOM manifest = %+v", m)
			}
			l, err := img.LayerByDigest(m.Layers[0].Digest)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := l.Compressed()
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.NewDecoder(rc).Decode(&doc); err != nil {
				t.Fatalf("SBOM is not JSON: %v", err)
			}
			rc.Close()
			out.sboms[m.Subject.Digest.String()] = doc
		}
	}
	if index == nil {
		t.Fatal("index.json lists no image index")
	}
	idx, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if idx.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Errorf("index media type = %s", idx.MediaType)
	}
	var plats []string
	for _, d := range idx.Manifests {
		plats = append(plats, d.Platform.String())
		img, err := index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		out.byArch[d.Platform.Architecture] = img
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || cf.Architecture != d.Platform.Architecture {
			t.Errorf("%s: config says %s/%s", d.Platform, cf.OS, cf.Architecture)
		}
		c := cf.Config
		if c.User != "65532:65532" {
			t.Errorf("%s: user = %q, want 65532:65532", d.Platform, c.User)
		}
		if !slices.Equal(c.Entrypoint, []string{"/usr/bin/chartctl"}) || !slices.Equal(c.Cmd, []string{"serve"}) {
			t.Errorf("%s: entrypoint %v cmd %v", d.Platform, c.Entrypoint, c.Cmd)
		}
		for _, e := range []string{"CHARTCTL_ADDR=0.0.0.0:8080", "CHARTCTL_DATA=/var/lib/chartctl"} {
			if !slices.Contains(c.Env, e) {
				t.Errorf("%s: env %v lacks %s", d.Platform, c.Env, e)
			}
		}
		if _, ok := c.Volumes["/var/lib/chartctl"]; !ok {
			t.Errorf("%s: no volume /var/lib/chartctl", d.Platform)
		}
		for _, l := range []string{"org.opencontainers.image.source", "org.opencontainers.image.version", "org.opencontainers.image.revision"} {
			if c.Labels[l] == "" {
				t.Errorf("%s: label %s missing", d.Platform, l)
			}
		}
		if c.Labels["org.opencontainers.image.version"] != wantVersion {
			t.Errorf("%s: version label = %q", d.Platform, c.Labels["org.opencontainers.image.version"])
		}
		doc := out.sboms[d.Digest.String()]
		if doc == nil {
			t.Errorf("%s: no SBOM refers to %s", d.Platform, d.Digest)
		} else if doc["spdxVersion"] != "SPDX-2.3" || len(doc["packages"].([]any)) < 2 {
			t.Errorf("%s: SBOM = %v", d.Platform, doc["spdxVersion"])
		}
	}
	slices.Sort(plats)
	if !slices.Equal(plats, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms = %v", plats)
	}
	return out
}

func TestLayoutStructure(t *testing.T) {
	// Any Go binary shows the structure; the real image is checked below.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	ca := testkit.NewCA(t)
	err = imagebuild.Build(dir, imagebuild.Options{
		Binaries: map[string]string{"linux/amd64": self, "linux/arm64": self},
		Linters:  map[string]string{"linux/amd64": self, "linux/arm64": self},
		CABundle: ca.CertFile, Version: "1.2.3", Revision: "abc123",
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLayout(t, dir, "1.2.3")

	// The same inputs give the same bytes (reproducible builds).
	again := filepath.Join(t.TempDir(), "image")
	if err := imagebuild.Build(again, imagebuild.Options{
		Binaries: map[string]string{"linux/amd64": self, "linux/arm64": self},
		Linters:  map[string]string{"linux/amd64": self, "linux/arm64": self},
		CABundle: ca.CertFile, Version: "1.2.3", Revision: "abc123",
	}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	b, _ := os.ReadFile(filepath.Join(again, "index.json"))
	if !bytes.Equal(a, b) {
		t.Errorf("two builds differ:\n%s\n%s", a, b)
	}
}

// TestImageRunsAsNonRoot checks the image `make image` built
// (CHARTCTL_IMAGE_LAYOUT): it unpacks the linux/amd64 file system, runs
// the entrypoint in it as uid 65532 with a chroot, and talks to it over
// HTTP; afterwards only the data directory has changed.
func TestImageRunsAsNonRoot(t *testing.T) {
	dir := os.Getenv("CHARTCTL_IMAGE_LAYOUT")
	if dir == "" {
		if testkit.RequireE2E() {
			t.Fatal("CHARTCTL_IMAGE_LAYOUT is not set (run make image) and CHARTCTL_REQUIRE_E2E=1")
		}
		t.Skip("set CHARTCTL_IMAGE_LAYOUT to a layout written by `make image`")
	}
	if os.Geteuid() != 0 {
		if testkit.RequireE2E() {
			t.Fatal("running the image's file system needs root (chroot)")
		}
		t.Skip("running the image's file system needs root (chroot)")
	}
	version := os.Getenv("CHARTCTL_IMAGE_VERSION")
	img := checkLayout(t, dir, version)
	amd := img.byArch["amd64"]
	cf, err := amd.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	// The SBOM names the modules compiled in.
	for _, doc := range img.sboms {
		b, _ := json.Marshal(doc)
		for _, mod := range []string{"github.com/chartctl/chartctl", "github.com/labstack/echo/v4", "go.etcd.io/bbolt"} {
			if !bytes.Contains(b, []byte(`"`+mod+`"`)) {
				t.Errorf("SBOM lacks %s", mod)
			}
		}
	}

	root := filepath.Join(t.TempDir(), "rootfs")
	before := unpack(t, amd, root)
	// chartctl-lint ships next to the entrypoint, where serve finds it
	// for lint policies.
	if st, err := os.Stat(filepath.Join(root, strings.TrimPrefix(imagebuild.Linter, "/"))); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("the image's chartctl-lint: %v", err)
	}
	st, err := os.Stat(filepath.Join(root, "var/lib/chartctl"))
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 65532 || st.Mode().Perm() != 0o700 {
		t.Fatalf("/var/lib/chartctl uid %d mode %v", sys.Uid, st.Mode().Perm())
	}

	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(cf.Config.Entrypoint[0], append(append([]string{}, cf.Config.Cmd...), args...)...)
		cmd.Env = cf.Config.Env
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Chroot:     root,
			Credential: &syscall.Credential{Uid: 65532, Gid: 65532, NoSetGroups: true},
		}
		return cmd
	}

	// The image's environment: listening on 0.0.0.0:8080, data in
	// /var/lib/chartctl.
	out, err := run("--print-config").CombinedOutput()
	if err != nil {
		t.Fatalf("--print-config: %v\n%s", err, out)
	}
	for _, want := range []string{"addr: 0.0.0.0:8080\n", "data: /var/lib/chartctl\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("effective configuration lacks %q:\n%s", want, out)
		}
	}

	// Serve (tests listen on loopback only, so --addr overrides the
	// image's address) and use it over HTTP.
	cmd := run("--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	urlRE := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)
	var logs strings.Builder
	url := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatalf("the server did not start:\n%s", logs.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Uid:\s+65532\s+65532\s+65532\s+65532`).Match(status) {
		t.Errorf("process does not run as 65532:\n%s", status)
	}

	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("readyz = %d", resp.StatusCode)
	}
	var admin struct {
		APIKey string `json:"api_key"`
	}
	b, err := os.ReadFile(filepath.Join(root, "var/lib/chartctl/initial-admin.json"))
	if err != nil || json.Unmarshal(b, &admin) != nil || admin.APIKey == "" {
		t.Fatalf("initial-admin.json: %v %s", err, b)
	}
	do := func(method, path, ctype string, body []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin.APIKey)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, rb)
		}
	}
	do("POST", "/v1/repositories", "application/json", []byte(`{"name":"img","visibility":"public"}`))
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "inimage", Version: "0.1.0"})})
	do("POST", "/v1/repositories/img/charts", ctype, body)
	do("GET", "/helm/img/index.yaml", "", nil)
	do("GET", "/helm/img/charts/inimage-0.1.0.tgz", "", nil)
	// The image's chartctl-lint is found and used: uploads under a lint
	// policy are linted by Helm's rules.
	testkit.CheckLintPolicy(t, http.DefaultClient, url, admin.APIKey, "linted")

	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	// Nothing outside the data directory changed.
	after := tree(t, root)
	for p, sig := range after {
		if strings.HasPrefix(p, "var/lib/chartctl/") {
			continue
		}
		if before[p] != sig {
			t.Errorf("the server changed %s outside its data directory", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("the server removed %s", p)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/chartctl/chartctl.db")); err != nil {
		t.Errorf("no database in the data directory: %v", err)
	}
}

// unpack writes img's flattened file system to root with the owners and
// modes of its tar entries and returns the tree's signature.
func unpack(t *testing.T, img v1.Image, root string) map[string]string {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("unexpected entry %s (type %c)", h.Name, h.Typeflag)
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, fs.FileMode(h.Mode).Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return tree(t, root)
}

// tree maps every path under root to its mode, owner, size and time.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sys := fi.Sys().(*syscall.Stat_t)
		sig := fmt.Sprintf("%v %d:%d", fi.Mode(), sys.Uid, sys.Gid)
		if d.IsDir() {
			rel += "/"
		} else {
			sig += fmt.Sprintf(" %d %s", fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		}
		out[rel] = sig
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPushToRegistry(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	ca := testkit.NewCA(t)
	if err := imagebuild.Build(dir, imagebuild.Options{
		Binaries: map[string]string{"linux/amd64": self, "linux/arm64": self},
		Linters:  map[string]string{"linux/amd64": self, "linux/arm64": self},
		CABundle: ca.CertFile, Version: "2.0.0", Revision: "def456",
	}); err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewServer(registry.New())
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	ref := host + "/chartctl/chartctl:2.0.0"
	if err := imagebuild.Push(dir, ref); err != nil {
		t.Fatal(err)
	}

	// Pulled back: the tag is the two-platform index, and each platform
	// image has its SBOM as a referrer.
	tag, _ := name.NewTag(ref)
	idx, err := remote.Index(tag)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("pushed index has %d manifests", len(im.Manifests))
	}
	for _, d := range im.Manifests {
		refs, err := remote.Referrers(tag.Context().Digest(d.Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		rm, err := refs.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(rm.Manifests) != 1 || rm.Manifests[0].ArtifactType != imagebuild.SBOMMediaType {
			t.Errorf("%s: referrers = %+v, want one SBOM", d.Platform, rm.Manifests)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || cf.Config.Labels["org.opencontainers.image.revision"] != "def456" {
			t.Errorf("%s: pulled config = %+v", d.Platform, cf.Config)
		}
	}
	if err := imagebuild.Push(t.TempDir(), ref); err == nil {
		t.Error("pushing a directory that is no layout succeeded")
	}
}
