package serveconfig_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/chartctl/chartctl/internal/serveconfig"
)

// settings is a stand-in for the server's flags: a few of each kind.
type settings struct {
	Addr      string
	Data      string
	Overwrite bool
	Idle      time.Duration
	Domains   []string
	Database  string
	Token     string
	Retries   int
}

func newFlags(s *settings) *pflag.FlagSet {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&s.Addr, "addr", "127.0.0.1:8080", "")
	fs.StringVar(&s.Data, "data", "./chartctl-data", "")
	fs.BoolVar(&s.Overwrite, "allow-overwrite", false, "")
	fs.DurationVar(&s.Idle, "idle-timeout", time.Minute, "")
	fs.StringSliceVar(&s.Domains, "acme-domain", nil, "")
	fs.StringVar(&s.Database, "database", "bolt", "")
	fs.StringVar(&s.Token, "webhook-token", "", "")
	fs.IntVar(&s.Retries, "retries", 3, "")
	serveconfig.MarkSecret(fs, "webhook-token")
	serveconfig.AddFlags(fs)
	return fs
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, args []string, env map[string]string) (*settings, *serveconfig.Result, error) {
	t.Helper()
	s := &settings{}
	fs := newFlags(s)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	res, err := serveconfig.Load(fs, func(k string) string { return env[k] }, nil)
	return s, res, err
}

func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	path := writeFile(t, `# chartctl
addr: 0.0.0.0:9000
data: /srv/file
allow-overwrite: true
idle-timeout: 90s
acme-domain: [a.example.com, b.example.com]
`)
	s, res, err := load(t, []string{"--config", path, "--addr", "127.0.0.1:7000"}, map[string]string{
		"CHARTCTL_ADDR": "127.0.0.1:7500",
		"CHARTCTL_DATA": "/srv/env",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr != "127.0.0.1:7000" {
		t.Errorf("addr = %s, want the flag's value", s.Addr)
	}
	if s.Data != "/srv/env" {
		t.Errorf("data = %s, want the environment's value", s.Data)
	}
	if !s.Overwrite || s.Idle != 90*time.Second {
		t.Errorf("file values not applied: %+v", s)
	}
	if strings.Join(s.Domains, " ") != "a.example.com b.example.com" {
		t.Errorf("acme-domain = %v", s.Domains)
	}
	if s.Database != "bolt" || s.Retries != 3 {
		t.Errorf("defaults lost: %+v", s)
	}
	want := map[string]serveconfig.Source{"addr": "flag", "data": "env", "allow-overwrite": "file", "database": "default"}
	for k, v := range want {
		if res.Sources[k] != v {
			t.Errorf("source of %s = %s, want %s", k, res.Sources[k], v)
		}
	}
	if res.File != path {
		t.Errorf("file = %q", res.File)
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	path := writeFile(t, "retries: 7\n")
	s, _, err := load(t, nil, map[string]string{"CHARTCTL_CONFIG": path})
	if err != nil {
		t.Fatal(err)
	}
	if s.Retries != 7 {
		t.Errorf("retries = %d: CHARTCTL_CONFIG not read", s.Retries)
	}
}

func TestMissingExplicitFileIsAnError(t *testing.T) {
	_, _, err := load(t, []string{"--config", filepath.Join(t.TempDir(), "nope.yaml")}, nil)
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestEmptyFileSetsNothing(t *testing.T) {
	for _, content := range []string{"", "# only a comment\n", "~\n"} {
		s, _, err := load(t, []string{"--config", writeFile(t, content)}, nil)
		if err != nil || s.Addr != "127.0.0.1:8080" {
			t.Errorf("%q: %+v, %v", content, s, err)
		}
	}
}

func TestErrorsNameKeyAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		env           map[string]string
		args          []string
		want          []string
	}{
		{"unknown key", "addr: x:1\nadr: y\n", nil, nil, []string{":2:", `unknown key "adr"`, `did you mean "addr"`}},
		{"far unknown key", "frobnicate: 1\n", nil, nil, []string{":1:", `unknown key "frobnicate"`, "long flag names"}},
		{"bad bool", "data: d\n\nallow-overwrite: maybe\n", nil, nil, []string{":3:", `key "allow-overwrite"`, "maybe"}},
		{"bad duration", "idle-timeout: soon\n", nil, nil, []string{":1:", `key "idle-timeout"`}},
		{"bad int", "retries: three\n", nil, nil, []string{":1:", `key "retries"`}},
		{"overridden yet bad", "retries: three\n", nil, []string{"--retries", "4"}, []string{":1:", `key "retries"`}},
		{"overridden by env yet bad", "\nretries: three\n", map[string]string{"CHARTCTL_RETRIES": "5"}, nil, []string{":2:", `key "retries"`}},
		{"mapping value", "addr:\n  host: x\n", nil, nil, []string{":2:", `key "addr"`, "mapping"}},
		{"duplicate", "addr: a:1\naddr: b:2\n", nil, nil, []string{":2:", `"addr"`, "line 1"}},
		{"not a mapping", "- addr\n", nil, nil, []string{":1:", "mapping"}},
		{"yaml syntax", "addr: [\n", nil, nil, []string{"config.yaml", "line"}},
		{"config key inside file", "config: other.yaml\n", nil, nil, []string{":1:", `unknown key "config"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.content)
			_, _, err := load(t, append([]string{"--config", path}, tc.args...), tc.env)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestBadEnvironmentValueNamesVariable(t *testing.T) {
	_, _, err := load(t, nil, map[string]string{"CHARTCTL_ALLOW_OVERWRITE": "perhaps"})
	if err == nil || !strings.Contains(err.Error(), "CHARTCTL_ALLOW_OVERWRITE") {
		t.Fatalf("err = %v", err)
	}
}

func TestPrintRedactsSecretsAndRoundTrips(t *testing.T) {
	s := &settings{}
	fs := newFlags(s)
	if err := fs.Parse([]string{"--webhook-token", "hunter2", "--database", "postgres://app:s3cret@db:5432/charts?sslmode=require", "--acme-domain", "a.example,b.example"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := serveconfig.Print(&out, fs); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, secret := range []string{"hunter2", "s3cret"} {
		if strings.Contains(text, secret) {
			t.Errorf("printed configuration leaks %q:\n%s", secret, text)
		}
	}
	if strings.Contains(text, "print-config") || strings.Contains(text, "\nconfig:") {
		t.Errorf("printed configuration lists the loader's own flags:\n%s", text)
	}
	var m map[string]any
	if err := yaml.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("printed configuration is not YAML: %v\n%s", err, text)
	}
	if m["webhook-token"] != serveconfig.Redacted || m["allow-overwrite"] != false || m["retries"] != 3 {
		t.Errorf("printed = %v", m)
	}
	if db, _ := m["database"].(string); !strings.HasPrefix(db, "postgres://app:") || !strings.Contains(db, "db:5432/charts") {
		t.Errorf("database = %q", m["database"])
	}

	// What is printed (secrets aside) loads back to the same settings.
	var clean bytes.Buffer
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, serveconfig.Redacted) {
			clean.WriteString(line + "\n")
		}
	}
	s2 := &settings{}
	fs2 := newFlags(s2)
	_ = fs2.Parse([]string{"--config", writeFile(t, clean.String())})
	if _, err := serveconfig.Load(fs2, func(string) string { return "" }, nil); err != nil {
		t.Fatalf("printed configuration does not load: %v\n%s", err, clean.String())
	}
	if strings.Join(s2.Domains, ",") != "a.example,b.example" || s2.Idle != time.Minute {
		t.Errorf("round trip = %+v", s2)
	}
}
