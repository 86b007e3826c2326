package httpx

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/text"
)

// Upload bodies (chart uploads on /v1 and the ChartMuseum API, blob
// uploads and manifests on /v2) are bounded by a minimum transfer rate
// rather than one long deadline (CONTRACT §18, decision 18): a large
// upload over a slow but steady link lives as long as it keeps the rate,
// and a trickled one is cut within a window, with 408.

// MinRate is a minimum transfer rate: at least Bytes in every Window. The
// zero value is off. It is a pflag.Value ("16KiB/10s", "0").
type MinRate struct {
	Bytes  int64
	Window time.Duration
}

// DefaultUploadMinRate is --upload-min-rate's default, 16 KiB per 10 s.
var DefaultUploadMinRate = MinRate{Bytes: 16 << 10, Window: 10 * time.Second}

// Off reports whether the rate is off.
func (m MinRate) Off() bool { return m.Bytes <= 0 || m.Window <= 0 }

// ParseMinRate reads "SIZE/DURATION" ("16KiB/10s", "1MB/1m") or "0"
// (off).
func ParseMinRate(s string) (MinRate, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return MinRate{}, nil
	}
	size, window, ok := strings.Cut(s, "/")
	if !ok {
		return MinRate{}, fmt.Errorf("invalid rate %q: use SIZE/DURATION such as 16KiB/10s, or 0 to turn it off", s)
	}
	b, err := text.ParseBytes(size)
	if err != nil || b <= 0 {
		return MinRate{}, fmt.Errorf("invalid rate %q: the size must be positive, such as 16KiB", s)
	}
	d, err := text.ParseDuration(window)
	if err != nil || d < time.Second {
		return MinRate{}, fmt.Errorf("invalid rate %q: the window must be a duration of at least 1s, such as 10s", s)
	}
	return MinRate{Bytes: b, Window: d}, nil
}

// String formats the rate as ParseMinRate reads it.
func (m *MinRate) String() string {
	if m.Off() {
		return "0"
	}
	return text.ExactBytes(m.Bytes) + "/" + m.Window.String()
}

// Set parses s (pflag.Value).
func (m *MinRate) Set(s string) error {
	v, err := ParseMinRate(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the flag's value type in help (pflag.Value).
func (m *MinRate) Type() string { return "rate" }

// rateBodyKey keeps a request's rateBody in its echo.Context.
const rateBodyKey = "httpx.rateBody"

// rateBody is a request body that must arrive at a minimum rate: every
// read sets the connection's read deadline to the end of the current
// window, and a window starts once the previous one received its bytes.
// One goroutine reads a request body; tripped is also read by the error
// writers (TooSlow), so it alone is atomic.
type rateBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	rate MinRate

	start   time.Time // of the current window; zero before the first read
	got     int64     // bytes received in it
	tripped atomic.Bool
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.tripped.Load() {
		return 0, tooSlow(b.rate)
	}
	now := time.Now()
	if b.start.IsZero() || b.got >= b.rate.Bytes {
		b.start, b.got = now, 0
	}
	end := b.start.Add(b.rate.Window)
	// An error means the server cannot set deadlines (a test recorder):
	// its own timeouts then apply. The write deadline moves with the
	// read one, so the answer to a long upload can still be written.
	_ = b.rc.SetReadDeadline(end)
	_ = b.rc.SetWriteDeadline(end.Add(5 * time.Minute))
	n, err := b.ReadCloser.Read(p)
	b.got += int64(n)
	if err == io.EOF {
		// The body is complete: net/http now reads the connection in
		// the background to notice a client going away, and a deadline
		// hit there would cancel the request's context while the
		// handler still stores the upload.
		_ = b.rc.SetReadDeadline(time.Time{})
	} else if err != nil && b.got < b.rate.Bytes && !time.Now().Before(end) {
		b.tripped.Store(true)
		return n, tooSlow(b.rate)
	}
	return n, err
}

// tooSlow is the error of a body cut for its rate.
func tooSlow(m MinRate) error {
	return chartctl.Errorf(chartctl.ETIMEOUT, "The request body arrived slower than the minimum upload rate (%s per %s), so it was cut off; retry over a faster connection, or ask the operator about --upload-min-rate.",
		text.ExactBytes(m.Bytes), m.Window)
}

// LimitRate makes the request's body (when it has one) arrive at rate
// at least; its first read starts the first window. Off does nothing.
func LimitRate(c echo.Context, rate MinRate) {
	req := c.Request()
	if rate.Off() || req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 {
		return
	}
	b := &rateBody{ReadCloser: req.Body, rc: http.NewResponseController(c.Response()), rate: rate}
	req.Body = b
	c.Set(rateBodyKey, b)
}

// TooSlow returns the ETIMEOUT error (answered 408) when the request's
// body was cut for its rate, else nil. Handlers map errors of the body's
// reads in many ways (a malformed archive, an incomplete blob); the error
// writers ask this first, so the client learns the real cause.
func TooSlow(c echo.Context) error {
	b, ok := c.Get(rateBodyKey).(*rateBody)
	if !ok || !b.tripped.Load() {
		return nil
	}
	return tooSlow(b.rate)
}

// trackedBodyKey keeps a request's trackedBody in its echo.Context.
const trackedBodyKey = "httpx.trackedBody"

// trackedBody remembers whether its body was read to the end.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// TrackBody lets ReleaseBody tell whether the request's body was read to
// its end. Call it before anything reads or wraps the body.
func TrackBody(c echo.Context) {
	req := c.Request()
	if req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody {
		return
	}
	b := &trackedBody{ReadCloser: req.Body}
	req.Body = b
	c.Set(trackedBodyKey, b)
}

// ReleaseBody bounds how long the server waits for what is left of a
// request's body (tracked with TrackBody) once its answer is an error:
// net/http reads (and discards) up to 256 KiB of it after the handler, so
// a client trickling a body it was refused (a 401 before any read) held
// the connection until the server's read timeout. It now waits
// releaseGrace at most, then closes the connection after the answer. The
// grace matters: a client still sending its body when the connection is
// closed gets a reset instead of the answer (a 401 seen as "connection
// reset by peer"), and an ordinary client's body arrives well within it.
// A body read to its end is left alone: the connection stays reusable
// (and its background read, which a deadline would break, undisturbed).
func ReleaseBody(c echo.Context) {
	b, ok := c.Get(trackedBodyKey).(*trackedBody)
	if !ok || b.eof.Load() || c.Response().Status < 400 {
		return
	}
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(releaseGrace))
}

// releaseGrace is how long a refused request's remaining body is waited
// for before its connection is closed.
const releaseGrace = 500 * time.Millisecond

// UploadGate bounds the uploads one credential runs at once.
type UploadGate interface {
	// TakeUpload reserves one of p's concurrent uploads, returning the
	// function that gives it back, or ERATELIMIT (with Retry-After set)
	// when p has as many running as it may.
	TakeUpload(c echo.Context, p *chartctl.Principal) (release func(), err error)
}

// UploadSlots counts the uploads running per credential, in this process
// (each replica counts its own). The zero value is unusable; use
// NewUploadSlots.
type UploadSlots struct {
	max     int
	mu      sync.Mutex
	running map[string]int
}

// NewUploadSlots allows max uploads at once per credential (0: no cap).
func NewUploadSlots(max int) *UploadSlots {
	return &UploadSlots{max: max, running: map[string]int{}}
}

// TakeUpload implements UploadGate.
func (s *UploadSlots) TakeUpload(c echo.Context, p *chartctl.Principal) (func(), error) {
	if s == nil || s.max <= 0 || p == nil {
		return func() {}, nil
	}
	k := p.CredentialID
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[k] >= s.max {
		// No window to wait for: a running upload ends when it ends, so
		// the client is told to try again shortly.
		SetRetryAfter(c, time.Second)
		return nil, chartctl.Errorf(chartctl.ERATELIMIT, "This credential already has %s running; retry when one has finished (--max-concurrent-uploads).",
			text.Count(int64(s.max), "upload", "uploads"))
	}
	s.running[k]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.running[k]--; s.running[k] <= 0 {
				delete(s.running, k)
			}
		})
	}, nil
}
