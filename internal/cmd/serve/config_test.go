package serve

import (
	"net"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func parse(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	c := DefaultConfig()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := c.BindEnv(fs, func(k string) string { return env[k] }); err != nil {
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
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" {
		t.Errorf("flag should win over env: %s", c.Addr)
	}
	if c.MaxChartSize != 2<<20 || !c.AllowOverwrite || c.RateLimitUpload.N != 5 || c.TrustedProxies != "10.0.0.0/8" {
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
