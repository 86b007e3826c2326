package serve

import (
	"bytes"
	"context"
	"io"
	iofs "io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/serveconfig"
)

func parse(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	c := DefaultConfig()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	serveconfig.AddFlags(fs)
	noFile := func(string) ([]byte, error) { return nil, iofs.ErrNotExist }
	if _, err := serveconfig.Load(fs, func(k string) string { return env[k] }, noFile); err != nil {
		return nil, err
	}
	return &c, c.Validate()
}

func TestConfigFlagsAndEnv(t *testing.T) {
	c, err := parse(t, []string{"--addr", "127.0.0.1:9999"}, map[string]string{
		"CHARTCTL_ADDR":              "0.0.0.0:1",
		"CHARTCTL_MAX_CHART_SIZE":    "2MiB",
		"CHARTCTL_RATE_LIMIT_UPLOAD": "5/1m",
		"CHARTCTL_ALLOW_OVERWRITE":   "true",
		"CHARTCTL_TRUSTED_PROXIES":   "10.0.0.0/8",
		"CHARTCTL_REPO_NAME_GRACE":   "2h",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" {
		t.Errorf("flag should win over env: %s", c.Addr)
	}
	if c.MaxChartSize != 2<<20 || !c.AllowOverwrite || c.RateLimitUpload.N != 5 || c.TrustedProxies != "10.0.0.0/8" || c.RepoNameGrace != 2*time.Hour {
		t.Errorf("config = %+v", c)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--addr", "nope"}, nil, "--addr"},
		{[]string{"--base-url", "ftp://x"}, nil, "--base-url"},
		{[]string{"--log-format", "xml"}, nil, "--log-format"},
		{[]string{"--debug-addr", "0.0.0.0:6060"}, nil, "loopback"},
		{[]string{"--trusted-proxies", "not-an-ip"}, nil, "--trusted-proxies"},
		{nil, map[string]string{"CHARTCTL_MAX_CHART_SIZE": "lots"}, "CHARTCTL_MAX_CHART_SIZE"},
		{[]string{"--max-chart-size", "10XB"}, nil, "invalid size"},
		{[]string{"--repo-name-grace", "-1h"}, nil, "--repo-name-grace"},
	} {
		_, err := parse(t, tc.args, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: err = %v, want mention of %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"10MiB": 10 << 20, "512KiB": 512 << 10, "1048576": 1 << 20, "10M": 10 << 20, "1GiB": 1 << 30} {
		var b ByteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v", in, b, err)
		}
	}
	b := ByteSize(10 << 20)
	if b.String() != "10MiB" {
		t.Errorf("String = %s", b.String())
	}
	if err := b.Set("0"); err == nil {
		t.Error("a size of 0 was accepted")
	}
	// --blob-cache-size 0 turns the cache off.
	for in, want := range map[string]int64{"0": 0, "0MiB": 0, " 0B": 0, "64MiB": 64 << 20} {
		var z ByteSizeOrZero
		if err := z.Set(in); err != nil || int64(z) != want {
			t.Errorf("ByteSizeOrZero.Set(%q) = %d, %v", in, z, err)
		}
	}
	for _, in := range []string{"-1", "x", "0x"} {
		var z ByteSizeOrZero
		if err := z.Set(in); err == nil {
			t.Errorf("ByteSizeOrZero.Set(%q) accepted", in)
		}
	}
	if z := ByteSizeOrZero(0); z.String() != "0" {
		t.Errorf("String of 0 = %q", z.String())
	}
}

// runServeCmd runs `chartctl serve ARGS` with the environment env (set
// with t.Setenv) and returns the options the server would have started
// with, or nil when it would not have started.
func runServeCmd(t *testing.T, args []string, env map[string]string) (*Options, string, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var got *Options
	cmd := NewCmdServe(io.Discard, nil, func(_ context.Context, o *Options) error { got = o; return nil })
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	cmd.SetContext(context.Background())
	err := cmd.Execute()
	return got, out.String(), err
}

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeReadsConfigFile(t *testing.T) {
	path := writeConfig(t, "addr: 127.0.0.1:9123\nmax-chart-size: 2MiB\nrate-limit-upload: 5/1m\nbase-url: https://charts.example.com\n")
	o, _, err := runServeCmd(t, []string{"--config", path}, map[string]string{"CHARTCTL_MAX_CHART_SIZE": "3MiB"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.Addr != "127.0.0.1:9123" || o.Config.MaxChartSize != 3<<20 || o.Config.RateLimitUpload.N != 5 || o.Config.BaseURL != "https://charts.example.com" {
		t.Errorf("config = %+v", o.Config)
	}
	if o.ConfigFile != path {
		t.Errorf("ConfigFile = %q", o.ConfigFile)
	}
}

func TestServeConfigErrors(t *testing.T) {
	for content, want := range map[string]string{
		"addr: 127.0.0.1:1\nmax-chart-size: huge\n": `:2: invalid value for key "max-chart-size"`,
		"adr: 127.0.0.1:1\n":                        `:1: unknown key "adr" (did you mean "addr"?)`,
		"rate-limit-upload: fast\n":                 `:1: invalid value for key "rate-limit-upload"`,
		"log-format: xml\n":                         "invalid --log-format",
	} {
		_, _, err := runServeCmd(t, []string{"--config", writeConfig(t, content)}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", content, err, want)
		}
	}
}

func TestServePrintConfig(t *testing.T) {
	path := writeConfig(t, "data: /var/lib/chartctl\n")
	o, out, err := runServeCmd(t, []string{"--config", path, "--print-config", "--allow-overwrite"}, map[string]string{"CHARTCTL_ADDR": "0.0.0.0:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if o != nil {
		t.Error("--print-config started the server")
	}
	for _, want := range []string{"addr: 0.0.0.0:8080\n", "data: /var/lib/chartctl\n", "allow-overwrite: true\n", "max-chart-size: 10MiB\n", "rate-limit-global: 1000/1h"} {
		if !strings.Contains(out, want) {
			t.Errorf("--print-config output lacks %q:\n%s", want, out)
		}
	}
}

func TestBaseURLWarning(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	if w := baseURLWarning("", loop); w != "" {
		t.Errorf("loopback without --base-url warned: %q", w)
	}
	if w := baseURLWarning("https://charts.example.com", any); w != "" {
		t.Errorf("with --base-url warned: %q", w)
	}
	if w := baseURLWarning("", any); !strings.Contains(w, "--base-url") || !strings.Contains(w, "Host header") {
		t.Errorf("0.0.0.0 without --base-url: %q, want a warning naming --base-url and the Host header", w)
	}
}

func TestPrintConfigLeavesOutGlobalFlags(t *testing.T) {
	root := &cobra.Command{Use: "chartctl"}
	root.PersistentFlags().String("token", "", "API key")
	serve := NewCmdServe(io.Discard, nil, func(context.Context, *Options) error { return nil })
	root.AddCommand(serve)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--token", "chartctl_secret", "serve", "--config", writeConfig(t, ""), "--print-config"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	// A key named token, not one containing the word (rate-limit-oidc-token).
	if strings.Contains("\n"+out.String(), "\ntoken:") || strings.Contains(out.String(), "chartctl_secret") || !strings.Contains(out.String(), "addr:") {
		t.Errorf("--print-config lists the CLI's global flags:\n%s", out.String())
	}
	root.SetArgs([]string{"serve", "--config", writeConfig(t, "token: x\n")})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `unknown key "token"`) {
		t.Errorf("a global flag is accepted as a key: %v", err)
	}
}

// CONTRACT §14: durations everywhere, flags and config included, take Go's
// form plus d for days.
func TestDurationsTakeDays(t *testing.T) {
	path := writeConfig(t, "idle-timeout: 1d\nwebhook-retry-base: 30s\n")
	o, _, err := runServeCmd(t, []string{"--config", path, "--gc-grace", "2d", "--webhook-timeout", "90s"},
		map[string]string{"CHARTCTL_REPO_NAME_GRACE": "7d"})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if c.GCGrace != 48*time.Hour || c.RepoNameGrace != 7*24*time.Hour || c.IdleTimeout != 24*time.Hour ||
		c.WebhookRetryBase != 30*time.Second || c.WebhookTimeout != 90*time.Second {
		t.Errorf("gc-grace %s, repo-name-grace %s, idle-timeout %s, webhook-retry-base %s, webhook-timeout %s",
			c.GCGrace, c.RepoNameGrace, c.IdleTimeout, c.WebhookRetryBase, c.WebhookTimeout)
	}
	// A value a flag overrides is still checked.
	_, _, err = runServeCmd(t, []string{"--config", writeConfig(t, "gc-grace: 2x\n"), "--gc-grace", "1h"}, nil)
	if err == nil || !strings.Contains(err.Error(), `:1: invalid value for key "gc-grace"`) {
		t.Errorf("a bad overridden duration: %v", err)
	}
	for _, bad := range []string{"d", "-1d", "1.5d", "soon"} {
		if _, _, err := runServeCmd(t, []string{"--gc-grace", bad}, nil); err == nil {
			t.Errorf("--gc-grace %q accepted", bad)
		}
	}
}

// What --print-config prints is a configuration file the server accepts,
// and --default-repository-quota 0 is the default it prints: unlimited.
func TestPrintConfigOutputIsAConfigFile(t *testing.T) {
	_, out, err := runServeCmd(t, []string{"--config", writeConfig(t, ""), "--print-config"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, again, err := runServeCmd(t, []string{"--config", writeConfig(t, out), "--print-config"}, nil)
	if err != nil {
		t.Fatalf("the printed configuration is refused: %v\n%s", err, out)
	}
	if o != nil || again != out {
		t.Errorf("printed again:\n%s\nfirst:\n%s", again, out)
	}
	o, _, err = runServeCmd(t, []string{"--config", writeConfig(t, ""), "--default-repository-quota", "0"}, nil)
	if err != nil || o.Config.DefaultRepoQuota != 0 {
		t.Fatalf("--default-repository-quota 0: %v", err)
	}
	o, _, err = runServeCmd(t, []string{"--config", writeConfig(t, ""), "--default-repository-quota", "1GiB"}, nil)
	if err != nil || o.Config.DefaultRepoQuota != 1<<30 {
		t.Fatalf("--default-repository-quota 1GiB: %v", err)
	}
}

// --upload-min-rate and --max-concurrent-uploads (decision 18): their
// defaults, the environment and the config file's sources, "0" turning the
// rate off, and refusals that say what to write.
func TestUploadFlags(t *testing.T) {
	c, err := parse(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.UploadMinRate != (httpx.MinRate{Bytes: 16 << 10, Window: 10 * time.Second}) || c.MaxConcurrentUploads != 8 {
		t.Fatalf("defaults: rate %+v, uploads %d", c.UploadMinRate, c.MaxConcurrentUploads)
	}
	if got := c.UploadMinRate.String(); got != "16KiB/10s" {
		t.Fatalf("default rate prints as %q", got)
	}
	c, err = parse(t, nil, map[string]string{"CHARTCTL_UPLOAD_MIN_RATE": "1MiB/1m", "CHARTCTL_MAX_CONCURRENT_UPLOADS": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if c.UploadMinRate != (httpx.MinRate{Bytes: 1 << 20, Window: time.Minute}) || c.MaxConcurrentUploads != 2 {
		t.Fatalf("from the environment: rate %+v, uploads %d", c.UploadMinRate, c.MaxConcurrentUploads)
	}
	c, err = parse(t, []string{"--upload-min-rate", "0", "--max-concurrent-uploads", "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.UploadMinRate.Off() || c.MaxConcurrentUploads != 0 {
		t.Fatalf("turned off: rate %+v, uploads %d", c.UploadMinRate, c.MaxConcurrentUploads)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--upload-min-rate", "16KiB"}},
		{[]string{"--upload-min-rate", "fast/10s"}},
		{[]string{"--upload-min-rate", "16KiB/10ms"}},
		{[]string{"--max-concurrent-uploads", "-1"}},
	} {
		if _, err := parse(t, tc.args, nil); err == nil || !strings.Contains(err.Error(), tc.args[0]) && !strings.Contains(err.Error(), "SIZE/DURATION") && !strings.Contains(err.Error(), "invalid rate") {
			t.Errorf("%v: err = %v", tc.args, err)
		}
	}
}

// TestUpstreamIndexMaxSize: --upstream-index-max-size defaults to 64MiB,
// reads sizes as the other size flags do, and is also an environment
// variable and a key of the configuration file.
func TestUpstreamIndexMaxSize(t *testing.T) {
	c, err := parse(t, nil, nil)
	if err != nil || c.UpstreamIndexMaxSize != 64<<20 {
		t.Fatalf("default = %v, %v", c.UpstreamIndexMaxSize, err)
	}
	c, err = parse(t, nil, map[string]string{"CHARTCTL_UPSTREAM_INDEX_MAX_SIZE": "1.5GiB"})
	if err != nil || c.UpstreamIndexMaxSize != 3<<29 {
		t.Fatalf("from the environment = %v, %v", c.UpstreamIndexMaxSize, err)
	}
	if _, err := parse(t, []string{"--upstream-index-max-size", "0"}, nil); err == nil {
		t.Error("a limit of 0 was accepted")
	}
	o, _, err := runServeCmd(t, []string{"--config", writeConfig(t, "upstream-index-max-size: 128MiB\n")}, nil)
	if err != nil || o.Config.UpstreamIndexMaxSize != 128<<20 {
		t.Fatalf("from the file: %v", err)
	}
}

// TestServeFederationFlagsFromFileAndEnv: the federation flags are read
// from the config file in the form the Helm chart writes them (quoted
// strings, comma lists) and from CHARTCTL_* variables.
func TestServeFederationFlagsFromFileAndEnv(t *testing.T) {
	path := writeConfig(t, "allow-private-upstreams: \"10.20.0.0/16,fd00::/8\"\nplain-http-upstreams: \"charts.internal:8080,nexus.internal:8081\"\nupstream-timeout: \"20s\"\nupstream-index-max-size: \"128MiB\"\n")
	o, _, err := runServeCmd(t, []string{"--config", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if c.AllowPrivateUpstreams.All || len(c.AllowPrivateUpstreams.Ranges) != 2 || c.UpstreamTimeout != 20*time.Second ||
		int64(c.UpstreamIndexMaxSize) != 128<<20 || strings.Join(c.PlainHTTPUpstreams, ",") != "charts.internal:8080,nexus.internal:8081" {
		t.Errorf("from the file: %+v %v %v %v %v", c.AllowPrivateUpstreams, c.PlainHTTPUpstreams, c.UpstreamTimeout, c.UpstreamIndexMaxSize, c.AllowPrivateUpstreams.Ranges)
	}
	o, _, err = runServeCmd(t, nil, map[string]string{"CHARTCTL_ALLOW_PRIVATE_UPSTREAMS": "true", "CHARTCTL_PLAIN_HTTP_UPSTREAMS": "a.internal:80",
		"CHARTCTL_UPSTREAM_TIMEOUT": "3s", "CHARTCTL_UPSTREAM_INDEX_MAX_SIZE": "1MiB"})
	if err != nil {
		t.Fatal(err)
	}
	c = o.Config
	if !c.AllowPrivateUpstreams.All || c.UpstreamTimeout != 3*time.Second || int64(c.UpstreamIndexMaxSize) != 1<<20 || strings.Join(c.PlainHTTPUpstreams, ",") != "a.internal:80" {
		t.Errorf("from the environment: %+v %v %v %v", c.AllowPrivateUpstreams, c.PlainHTTPUpstreams, c.UpstreamTimeout, c.UpstreamIndexMaxSize)
	}
}
