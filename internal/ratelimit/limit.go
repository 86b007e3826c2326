// Package ratelimit implements the fixed-window rate limits of the HTTP
// contract (§7): named buckets ("global", "upload", "search") whose windows
// open at a key's first request and reset one window later, taken
// all-or-nothing so a request refused by one bucket consumes none, and a
// Throttle for failed authentication attempts.
//
// Everything is in memory, guarded by one mutex per Set or Throttle, exact
// under concurrency, with an injectable clock and amortized sweeping of
// expired windows (no background goroutines).
package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit is a budget of N requests per fixed Window. A Limit with N <= 0 or
// Window <= 0 is disabled: it never refuses. The zero Limit is disabled.
//
// *Limit implements flag.Value (and pflag's Type), so it can be bound to a
// command-line flag directly, and encoding.TextUnmarshaler for environment
// variables and configuration files.
type Limit struct {
	// N is the number of requests allowed per window.
	N int
	// Window is the length of a window, counted from a key's first request.
	Window time.Duration
}

// ParseLimit parses "N/DURATION" such as "1000/1h", "100/30s" or "5/1m".
// DURATION is a Go duration ("90s", "1h30m"), a bare unit meaning one of it
// ("h" = "1h"), or a whole number of days ("1d"). "0" (or any N of 0, as in
// "0/1h") disables the limit. Surrounding spaces are ignored.
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return Limit{}, nil
	}
	num, win, ok := strings.Cut(s, "/")
	if !ok {
		return Limit{}, fmt.Errorf("rate limit %q: want N/DURATION such as 1000/1h, or 0 to disable", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 0 {
		return Limit{}, fmt.Errorf("rate limit %q: %q is not a whole number of requests ≥ 0", s, strings.TrimSpace(num))
	}
	d, err := parseWindow(strings.TrimSpace(win))
	if err != nil {
		return Limit{}, fmt.Errorf("rate limit %q: %w", s, err)
	}
	if n == 0 {
		return Limit{}, nil
	}
	return Limit{N: n, Window: d}, nil
}

// parseWindow parses the DURATION part of a limit.
func parseWindow(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("missing window duration (such as 1h)")
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if days == "" {
			days = "1"
		}
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 && n <= 365 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
		return 0, fmt.Errorf("window %q: want a whole number of days between 1 and 365", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		// A bare unit ("h", "m", "s") means one of it.
		if d1, err1 := time.ParseDuration("1" + s); err1 == nil && s[0] >= 'a' && s[0] <= 'z' {
			d, err = d1, nil
		}
	}
	if err != nil {
		return 0, fmt.Errorf("window %q is not a duration such as 30s, 5m or 1h", s)
	}
	if d < time.Second {
		return 0, fmt.Errorf("window %q: must be at least 1s", s)
	}
	return d, nil
}

// Disabled reports whether the limit never refuses (N or Window not positive).
func (l Limit) Disabled() bool { return l.N <= 0 || l.Window <= 0 }

// String formats the limit so that ParseLimit reads it back: "0" when
// disabled, otherwise "N/DURATION" with the shortest whole unit ("1000/1h",
// "100/30s", "5/90m").
func (l Limit) String() string {
	if l.Disabled() {
		return "0"
	}
	return strconv.Itoa(l.N) + "/" + formatWindow(l.Window)
}

// formatWindow writes d in the largest unit that divides it exactly.
func formatWindow(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	default:
		return d.String()
	}
}

// Set parses s with ParseLimit into l (flag.Value).
func (l *Limit) Set(s string) error {
	v, err := ParseLimit(s)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Type names the flag's value type in help output (pflag.Value).
func (l *Limit) Type() string { return "limit" }

// MarshalText formats the limit as String does (encoding.TextMarshaler).
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses text with ParseLimit (encoding.TextUnmarshaler).
func (l *Limit) UnmarshalText(text []byte) error { return l.Set(string(text)) }
