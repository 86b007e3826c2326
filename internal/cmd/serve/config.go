package serve

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// Config is the server's configuration (CONTRACT §9): one struct with
// defaults, bound to flags and to CHARTCTL_* environment variables, checked
// by Validate.
type Config struct {
	Addr            string
	Data            string
	BaseURL         string
	AuthURL         string
	MaxChartSize    ByteSize
	AllowOverwrite  bool
	RateLimitGlobal ratelimit.Limit
	RateLimitUpload ratelimit.Limit
	RateLimitSearch ratelimit.Limit
	RateLimitKeys   ratelimit.Limit
	MaxAPIKeys      int
	MaxConnsPerIP   int
	TrustedProxies  string
	CORSOrigins     []string
	AdminEmail      string
	LogFormat       string
	LogLevel        string
	DebugAddr       string
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		Data:            "./chartctl-data",
		MaxChartSize:    10 << 20,
		RateLimitGlobal: ratelimit.Limit{N: 1000, Window: 3600e9},
		RateLimitUpload: ratelimit.Limit{N: 100, Window: 3600e9},
		RateLimitSearch: ratelimit.Limit{N: 300, Window: 3600e9},
		RateLimitKeys:   ratelimit.Limit{N: 50, Window: 3600e9},
		MaxAPIKeys:      100,
		AdminEmail:      "admin@localhost",
		LogFormat:       "text",
		LogLevel:        "info",
	}
}

// AddFlags binds the configuration to flags.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (host:port)")
	fs.StringVar(&c.Data, "data", c.Data, "data directory: the metadata database and chart blobs")
	fs.StringVar(&c.BaseURL, "base-url", c.BaseURL, "external URL of the server, e.g. https://charts.example.com (default: derived from each request)")
	fs.StringVar(&c.AuthURL, "auth-url", c.AuthURL, "external URL of the OAuth authorization server (default: the base URL)")
	fs.Var(&c.MaxChartSize, "max-chart-size", "largest chart archive accepted (e.g. 10MiB)")
	fs.BoolVar(&c.AllowOverwrite, "allow-overwrite", c.AllowOverwrite, "let uploads with ?force=true replace a stored chart version")
	fs.Var(&c.RateLimitGlobal, "rate-limit-global", "requests per credential per window, e.g. 1000/1h (0 disables)")
	fs.Var(&c.RateLimitUpload, "rate-limit-upload", "chart uploads per repository per window, e.g. 100/1h (0 disables)")
	fs.Var(&c.RateLimitSearch, "rate-limit-search", "searches per client IP per window, e.g. 300/1h (0 disables)")
	fs.Var(&c.RateLimitKeys, "rate-limit-keys", "API keys a user may create per window, e.g. 50/1h (0 disables)")
	fs.IntVar(&c.MaxAPIKeys, "max-api-keys", c.MaxAPIKeys, "most API keys one user may hold (0: no cap)")
	fs.IntVar(&c.MaxConnsPerIP, "max-conns-per-ip", c.MaxConnsPerIP, "most concurrent connections from one client address (0: no cap; leave off behind a load balancer)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", c.TrustedProxies, "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed")
	fs.StringSliceVar(&c.CORSOrigins, "cors-origins", c.CORSOrigins, "comma-separated browser origins allowed to call /v1, e.g. https://editor.swagger.io (default none)")
	fs.StringVar(&c.AdminEmail, "admin-email", c.AdminEmail, "email of the admin user created on first start")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "loopback address for pprof (off when empty), e.g. 127.0.0.1:6060")
}

// BindEnv sets every flag not given on the command line from its
// CHARTCTL_* variable (--max-chart-size ← CHARTCTL_MAX_CHART_SIZE).
func (c *Config) BindEnv(fs *pflag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		name := "CHARTCTL_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("invalid %s: %w", name, e)
			}
		}
	})
	return err
}

// Validate checks the configuration and returns the first problem, said
// so that the operator knows what to change.
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("invalid --addr %q: use host:port, e.g. 127.0.0.1:8080", c.Addr)
	}
	if c.Data == "" {
		return fmt.Errorf("--data must name a directory")
	}
	for flag, v := range map[string]string{"--base-url": c.BaseURL, "--auth-url": c.AuthURL} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("invalid %s %q: use an absolute http(s) URL", flag, v)
		}
	}
	if c.MaxChartSize < 1024 {
		return fmt.Errorf("--max-chart-size must be at least 1KiB")
	}
	if _, err := clientip.ParseTrusted(c.TrustedProxies); err != nil {
		return fmt.Errorf("invalid --trusted-proxies: %w", err)
	}
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("invalid --cors-origins entry %q: use an origin such as https://editor.example.com (scheme and host, no path), or *", o)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("invalid --log-format %q: use text or json", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid --log-level %q: use debug, info, warn or error", c.LogLevel)
	}
	if c.DebugAddr != "" {
		host, _, err := net.SplitHostPort(c.DebugAddr)
		ip := net.ParseIP(host)
		if err != nil || !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return fmt.Errorf("invalid --debug-addr %q: it must be a loopback address such as 127.0.0.1:6060", c.DebugAddr)
		}
	}
	return nil
}

// ByteSize is a size in bytes that parses "10MiB", "512KiB", "10M", "1048576".
type ByteSize int64

// String formats the size with a binary unit when exact.
func (b *ByteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Set parses a size.
func (b *ByteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.size
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return fmt.Errorf("invalid size %q: use e.g. 10MiB, 512KiB or a number of bytes", s)
	}
	*b = ByteSize(n * mult)
	return nil
}

// Type names the flag's value type in help.
func (b *ByteSize) Type() string { return "size" }
