package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ociPeer is a kind of registry run beside chartctl in the OCI side by
// side: CNCF Distribution or zot. Both are started the same way (`BIN
// serve CONFIG`, `BIN --version`), on filesystem storage in the run's
// directory, without auth, on a loopback port; what differs is their
// configuration file and their storage layout.
type ociPeer struct {
	// key names the peer's rates in OCIRow.Rates; title its columns.
	key, title string
	// binary is the peer's executable in a configuration ("" leaves
	// the peer out); info where the results keep its version.
	binary func(*OCIConfig) string
	info   func(*OCIResults) *string
	// confName is the configuration file's name in the run's directory.
	confName string
	// config is the configuration serving storage root on addr
	// (host:port), over HTTPS with t's certificate when t is set.
	config func(root, addr string, t *TLS) ([]byte, error)
	// describe turns `BIN --version`'s output into the report's words
	// for the binary (nil: the output as it is).
	describe func(bin string, out []byte) string
	// writeTags writes tags bigTag(0..n-1) of repository repo, all
	// pointing to manifest d (pushed before), straight into the storage
	// under root, as the peer's own tag code lays them out: pushing
	// 100,000 tags one by one would take hours.
	writeTags func(root, repo, d string, n int) error
}

// distributionPeer is CNCF Distribution (`registry`), its access log off.
var distributionPeer = &ociPeer{
	key: "distribution", title: "Distribution", confName: "distribution.yml",
	binary: func(c *OCIConfig) string { return c.Distribution },
	info:   func(r *OCIResults) *string { return &r.DistributionInfo },
	config: func(root, addr string, t *TLS) ([]byte, error) {
		conf := fmt.Appendf(nil, "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", root, addr)
		if t != nil {
			conf = fmt.Appendf(conf, "  tls:\n    certificate: %s\n    key: %s\n", t.CertFile, t.KeyFile)
		}
		return conf, nil
	},
	writeTags: writeDistributionTags,
}

// zotPeer is zot (project-zot's OCI-native registry). Its storage
// keeps zot's defaults for a filesystem store, written out: dedupe on
// (a cache database of blob digests beside the store) and garbage
// collection on (its first pass, on the empty store at start, is the
// only one within an hour). Without auth zot keeps no metadata database.
var zotPeer = &ociPeer{
	key: "zot", title: "zot", confName: "zot.json",
	binary: func(c *OCIConfig) string { return c.Zot },
	info:   func(r *OCIResults) *string { return &r.ZotInfo },
	config: func(root, addr string, t *TLS) ([]byte, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		web := map[string]any{"address": host, "port": port}
		if t != nil {
			web["tls"] = map[string]any{"cert": t.CertFile, "key": t.KeyFile}
		}
		return json.MarshalIndent(map[string]any{
			"distSpecVersion": "1.1.1",
			"storage":         map[string]any{"rootDirectory": root, "dedupe": true, "gc": true},
			"http":            web,
			"log":             map[string]any{"level": "error"},
		}, "", "  ")
	},
	describe:  describeZot,
	writeTags: writeZotTags,
}

// runningPeer is a peer registry started by startPeer.
type runningPeer struct {
	*ociPeer
	// base is its URL (http://127.0.0.1:port), root its storage root,
	// info its binary and version for the report.
	base, root, info string
	// pid is its process id.
	pid  int
	stop func()
}

// startPeer starts peer's binary bin on a loopback port with filesystem
// storage under dir, over HTTPS with t's certificate when t is set, and
// waits until it answers /v2/.
func startPeer(ctx context.Context, peer *ociPeer, bin, dir string, t *TLS) (*runningPeer, error) {
	addr, err := FreeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, peer.key)
	conf := filepath.Join(dir, peer.confName)
	content, err := peer.config(root, addr, t)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(conf, content, 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, peer.key+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", peer.key, err)
	}
	p := &runningPeer{ociPeer: peer, base: t.URL(addr), root: root, pid: cmd.Process.Pid}
	p.stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() }
	if err := waitOK(ctx, p.base+"/v2/", t); err != nil {
		p.stop()
		log, _ := os.ReadFile(logf.Name()) // dir goes with the run
		return nil, fmt.Errorf("%s: %w; its log: %s", peer.key, err, log[max(0, len(log)-2000):])
	}
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err == nil {
		p.info = strings.TrimSpace(string(out))
		if peer.describe != nil {
			p.info = peer.describe(bin, out)
		}
	}
	return p, nil
}

// waitOK waits until a GET of u answers 200, for ten seconds; over
// HTTPS it trusts t's certificate.
func waitOK(ctx context.Context, u string, t *TLS) error {
	client := t.probeClient()
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("no 200 within 10s")
}

// writeDistributionTags writes tags 0..n-1 (bigTag) of repository name
// pointing to manifest d into Distribution's filesystem layout, as its
// tag service writes them (current/link and index/<alg>/<hex>/link).
func writeDistributionTags(root, name, d string, n int) error {
	alg, hex, _ := strings.Cut(d, ":")
	tags := filepath.Join(root, "docker", "registry", "v2", "repositories", filepath.FromSlash(name), "_manifests", "tags")
	for i := range n {
		dir := filepath.Join(tags, bigTag(i))
		for _, sub := range []string{filepath.Join(dir, "current"), filepath.Join(dir, "index", alg, hex)} {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(sub, "link"), []byte(d), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeZotTags writes tags 0..n-1 (bigTag) of repository name pointing
// to manifest d into the repository's index.json, zot's OCI image
// layout: one descriptor per tag, the one zot wrote when d was pushed,
// its tag in the org.opencontainers.image.ref.name annotation (what
// zot's tags/list reads, from the file, on every request). The file is
// replaced by a rename, so zot never reads half of it.
func writeZotTags(root, name, d string, n int) error {
	file := filepath.Join(root, filepath.FromSlash(name), "index.json")
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var index ocispec.Index
	if err := json.Unmarshal(raw, &index); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var pushed *ocispec.Descriptor
	others := index.Manifests[:0]
	for i, m := range index.Manifests {
		if m.Digest.String() != d {
			others = append(others, m)
		} else if pushed == nil {
			pushed = &index.Manifests[i]
		}
	}
	if pushed == nil {
		return fmt.Errorf("%s: no manifest %s", file, d)
	}
	tagged := make([]ocispec.Descriptor, n)
	for i := range tagged {
		tagged[i] = *pushed
		tagged[i].Annotations = maps.Clone(pushed.Annotations)
		if tagged[i].Annotations == nil {
			tagged[i].Annotations = map[string]string{}
		}
		tagged[i].Annotations[ocispec.AnnotationRefName] = bigTag(i)
	}
	index.Manifests = append(others, tagged...)
	out, err := json.Marshal(index)
	if err != nil {
		return err
	}
	tmp := file + ".ocibench"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// describeZot turns `zot --version`'s log line into "BIN zot COMMIT,
// BINARY-TYPE build, GO", BIN naming the binary as Distribution's line
// does (COMMIT is the release tag in a build of a release).
func describeZot(bin string, out []byte) string {
	for line := range strings.Lines(string(out)) {
		var v struct {
			Message    string `json:"message"`
			Commit     string `json:"commit"`
			BinaryType string `json:"binary-type"`
			Go         string `json:"go version"`
		}
		if json.Unmarshal([]byte(line), &v) != nil || v.Message != "version" {
			continue
		}
		parts := []string{bin + " zot " + cmp.Or(v.Commit, "(no version)")}
		if v.BinaryType != "" {
			parts = append(parts, v.BinaryType+" build")
		}
		if v.Go != "" {
			parts = append(parts, v.Go)
		}
		return strings.Join(parts, ", ")
	}
	return strings.TrimSpace(string(out))
}
