package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// WrkInstallHint says how to get the load generator of the side-by-side
// bench.
const WrkInstallHint = "install wrk (apt-get install -y wrk), or pass --load go for the built-in generator"

// Wrk runs the wrk HTTP benchmarking tool: a C load generator that costs
// the server far less CPU than a Go client on the same machine.
type Wrk struct {
	// Binary is the wrk executable ("wrk" from PATH when empty).
	Binary string
	// Threads and Conns are wrk's -t and -c.
	Threads, Conns int
	// Duration is wrk's -d (whole seconds).
	Duration time.Duration
}

// WrkResult is what one wrk run reported.
type WrkResult struct {
	// Requests is the number of responses read.
	Requests int64
	// RPS is wrk's Requests/sec.
	RPS float64
	// Errors counts socket errors and responses outside 2xx and 3xx.
	Errors int64
	// Output is wrk's report, for the log.
	Output string
}

// Run puts load on url with the given request headers ("Name: value").
func (w Wrk) Run(ctx context.Context, url string, headers []string) (WrkResult, error) {
	if _, err := CheckLoopback(url); err != nil {
		return WrkResult{}, err
	}
	bin := w.Binary
	if bin == "" {
		bin = "wrk"
	}
	secs := max(int(w.Duration/time.Second), 1)
	args := []string{"-t", strconv.Itoa(max(w.Threads, 1)), "-c", strconv.Itoa(max(w.Conns, 1)), "-d", strconv.Itoa(secs) + "s", "--timeout", "10s"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	args = append(args, url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return WrkResult{}, fmt.Errorf("wrk not found: %s", WrkInstallHint)
		}
		return WrkResult{}, fmt.Errorf("wrk %s: %w: %s", url, err, strings.TrimSpace(out.String()))
	}
	return ParseWrk(out.String())
}

// ParseWrk reads the request count, rate and errors from wrk's report.
func ParseWrk(out string) (WrkResult, error) {
	r := WrkResult{Output: out}
	var haveRate bool
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Requests/sec:"):
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
			if err != nil {
				return r, fmt.Errorf("wrk: bad rate line %q", line)
			}
			r.RPS, haveRate = v, true
		case strings.Contains(line, " requests in "):
			f := strings.Fields(line)
			r.Requests, _ = strconv.ParseInt(f[0], 10, 64)
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
			r.Errors += n
		case strings.HasPrefix(line, "Socket errors:"):
			// "Socket errors: connect 0, read 0, write 0, timeout 0"
			for _, part := range strings.Split(strings.TrimPrefix(line, "Socket errors:"), ",") {
				f := strings.Fields(part)
				if len(f) == 2 {
					n, _ := strconv.ParseInt(f[1], 10, 64)
					r.Errors += n
				}
			}
		}
	}
	if !haveRate {
		return r, fmt.Errorf("wrk: no Requests/sec in its output: %s", strings.TrimSpace(out))
	}
	return r, nil
}
