package helm_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

// TestScaleOutModeServes runs what the chart's scale-out mode renders:
// every replica the Deployment asks for, as a process of the real binary
// started with the container's arguments, its environment (values and the
// Secret keys it references) and its mounted files (the ConfigMap's config
// file, the Secrets' files), on a real PostgreSQL database and a real S3
// bucket (versitygw). Only the pod's network and its emptyDir are the test
// machine's own: each process listens on a loopback port (CHARTCTL_ADDR,
// which wins over the file's addr, as the environment does in the pod) and
// gets a temp dir as its data volume. The replicas then act as one server:
// the admin from the Secret signs in on one, creates an API key on
// another, and a chart pushed through a third is pulled by Helm from the
// first.
func TestScaleOutModeServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs PostgreSQL, versitygw and Helm")
	}
	h := testkit.NewHelm(t).With(t)
	chart, _ := filepath.Abs(chartDir)
	r := render(t, h, chart, "-f", filepath.Join(chart, "ci", "scale-out-values.yaml"))
	pg := pgtest.Start(t)
	s3 := s3test.Start(t)
	bin := buildChartctl(t)

	const adminPassword = "correct horse battery"
	secrets := map[string]map[string]string{
		"chartctl-admin": {"password": adminPassword},
		"chartctl-storage": {
			"database":              pg.NewDatabase(t),
			"blob-store":            s3.NewBucket(t),
			"secrets-key":           strings.Repeat("s", 32),
			"AWS_ACCESS_KEY_ID":     s3test.AccessKey,
			"AWS_SECRET_ACCESS_KEY": s3test.SecretKey,
		},
	}
	pod := r.deployment.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	n := int(*r.deployment.Spec.Replicas)
	urls := make([]string, n)
	for i := range n {
		urls[i] = runContainer(t, bin, pod, r.configMap, secrets)
	}
	for i, u := range urls {
		waitReady(t, u, i)
	}

	// The admin of the Secret signs in on replica 0 and creates an API key
	// on replica 1: sessions and CSRF tokens are shared.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	signIn := page(t, browser, urls[0]+"/signin")
	form(t, browser, urls[0]+"/signin", url.Values{"csrf_token": {csrf(t, signIn)},
		"email": {"admin@localhost"}, "password": {adminPassword}})
	for _, u := range urls[1:] {
		// The session cookie is the first replica's; the jar sends it to
		// the same host on another port.
		jar.SetCookies(mustURL(t, u), jar.Cookies(mustURL(t, urls[0])))
	}
	newKey := page(t, browser, urls[1]+"/settings/api-keys/new")
	created := form(t, browser, urls[1]+"/settings/api-keys", url.Values{"csrf_token": {csrf(t, newKey)},
		"name": {"ci"}, "scopes": {"repo:read", "repo:write"}, "expiry": {"never"}})
	m := regexp.MustCompile(`id="new-key" type="text" readonly value="([^"]+)"`).FindStringSubmatch(created)
	if m == nil {
		t.Fatalf("the key page of replica 1 shows no key:\n%s", created)
	}
	key := m[1]

	// The key works on replica 2: a repository and a chart pushed there.
	api(t, "POST", urls[2]+"/v1/repositories", key, "application/json", []byte(`{"name":"apps","visibility":"private"}`))
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.3"})})
	api(t, "POST", urls[2]+"/v1/repositories/apps/charts", key, ctype, body)

	// Helm pulls it from replica 0.
	h.Must("repo", "add", "apps", urls[0]+"/helm/apps", "--username", "admin@localhost", "--password", key)
	dest := t.TempDir()
	h.Must("pull", "apps/web", "--version", "1.2.3", "--destination", dest)
	if _, err := os.Stat(filepath.Join(dest, "web-1.2.3.tgz")); err != nil {
		t.Fatalf("helm pull through replica 0: %v", err)
	}
}

// runContainer starts the container of pod as a process and returns its
// URL.
func runContainer(t *testing.T, bin string, pod corev1.PodSpec, cm *corev1.ConfigMap, secrets map[string]map[string]string) string {
	t.Helper()
	c := pod.Containers[0]
	root := t.TempDir()
	// Each mount path becomes a directory holding the volume's files.
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		dir := filepath.Join(root, vm.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		mounts[vm.MountPath] = dir
		for _, v := range pod.Volumes {
			if v.Name != vm.Name {
				continue
			}
			switch {
			case v.ConfigMap != nil:
				if v.ConfigMap.Name != cm.Name {
					t.Fatalf("volume %s mounts ConfigMap %s, not the rendered %s", v.Name, v.ConfigMap.Name, cm.Name)
				}
				for k, data := range cm.Data {
					writeFile(t, filepath.Join(dir, k), data)
				}
			case v.Secret != nil:
				s, ok := secrets[v.Secret.SecretName]
				if !ok {
					t.Fatalf("volume %s mounts Secret %s, which the test does not provide", v.Name, v.Secret.SecretName)
				}
				for _, it := range v.Secret.Items {
					data, ok := s[it.Key]
					if !ok {
						t.Fatalf("Secret %s has no key %s", v.Secret.SecretName, it.Key)
					}
					writeFile(t, filepath.Join(dir, it.Path), data)
				}
			}
		}
	}
	// A path in the pod is the same path under its mount's directory.
	local := func(p string) string {
		for mp, dir := range mounts {
			if rest, ok := strings.CutPrefix(p, mp+"/"); ok {
				return filepath.Join(dir, rest)
			}
		}
		return p
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+local(e.Value))
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secrets[ref.Name][ref.Key]
			if !ok {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				t.Fatalf("env %s needs key %s of Secret %s", e.Name, ref.Key, ref.Name)
			}
			env = append(env, e.Name+"="+v)
		default:
			t.Fatalf("env %s: a source the test does not provide", e.Name)
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	env = append(env, "CHARTCTL_ADDR="+addr, "CHARTCTL_DATA="+mounts["/var/lib/chartctl"])
	args := append(append([]string{}, c.Command...), c.Args...)
	for i, a := range args {
		args[i] = local(a)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("replica on %s:\n%s", addr, logs.String())
		}
	})
	return "http://" + addr
}

// waitReady waits for the replica's /readyz.
func waitReady(t *testing.T, u string, i int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(u + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %d at %s never became ready (%v)", i, u, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// page GETs a dashboard page and returns its HTML.
func page(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}

// form posts a dashboard form, follows its redirect and returns the
// resulting page.
func form(t *testing.T, c *http.Client, u string, v url.Values) string {
	t.Helper()
	resp, err := c.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}

// csrf returns the CSRF token of a page's form.
func csrf(t *testing.T, html string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF token in:\n%s", html)
	}
	return m[1]
}

// api makes a /v1 request with an API key and fails unless it is a 200.
func api(t *testing.T, method, u, key, ctype string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, u, resp.StatusCode, b)
	}
}

// buildChartctl builds the binary once for the package's tests.
func buildChartctl(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chartctl")
	out, err := exec.Command("go", "build", "-o", path, "github.com/chartctl/chartctl/cmd/chartctl").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return path
}
