// Package sandbox keeps warm child processes that do untrusted work (Helm's
// lint and rendering of uploaded charts, CONTRACT §18 decision 9) for the
// server: a Pool holds up to N long-lived workers, each a separate
// process with its own address-space limit, and hands one request at a
// time to each. A request goes to a worker's standard input and its
// answer comes back on its standard output, both as length-prefixed
// frames (Serve is the worker's side).
//
// A worker that passes a request's deadline is killed and a fresh one
// takes its place; a worker that dies (its memory bound, a crash, a kill
// from outside) is reaped and replaced on the next request. Close stops
// every worker and waits for them, so no process outlives the pool.
//
// A worker keeps its scratch files in a directory of its own
// (WorkerScratch); the pool removes it once the worker is reaped, so a
// worker killed at its deadline or while the server stops leaves nothing
// behind.
//
// Starting a chartctl-lint process costs about 100 ms of CPU (Helm's and
// Kubernetes' libraries initialise); a warm worker pays it once.
package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// MemoryEnv, set in a worker's environment, carries its address-space
// limit in bytes; the worker applies it to itself (SetMemoryLimit).
const MemoryEnv = "CHARTCTL_SANDBOX_MEMORY"

// Errors of Do that say what became of the worker.
var (
	// ErrTimeout: the request passed the pool's timeout; the worker was
	// killed.
	ErrTimeout = errors.New("sandbox: the request took too long")
	// ErrAnswerTooLarge: the worker answered more than Config.MaxAnswer
	// bytes; the worker was killed.
	ErrAnswerTooLarge = errors.New("sandbox: the answer is too large")
	// ErrClosed: the pool is closed.
	ErrClosed = errors.New("sandbox: the pool is closed")
)

// ExitError says the worker died during a request: it passed its memory
// bound, crashed, or was killed from outside.
type ExitError struct {
	// Code is the worker's exit status, -1 when a signal ended it.
	Code int
	// Stderr is the start of what the worker wrote to its standard error
	// (the Go runtime's "fatal error: runtime: out of memory" comes
	// first, before a long goroutine dump).
	Stderr string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("sandbox: the worker stopped (exit status %d)", e.Code)
}

// Config says how a Pool starts and bounds its workers.
type Config struct {
	// Args are the worker's program and arguments (chartctl-lint serve).
	Args []string
	// Workers is the most workers kept at once (default 2). Workers are
	// started on first use and then kept warm.
	Workers int
	// Timeout bounds one request (default 20 s).
	Timeout time.Duration
	// Memory is each worker's address-space limit in bytes, passed in
	// MemoryEnv (0: none).
	Memory int64
	// MaxAnswer bounds one answer in bytes (default 64 MiB).
	MaxAnswer int
	// Env is added to the worker's environment.
	Env []string
}

// Request names what a worker is asked to do with a payload.
type Request struct {
	// Mode selects the worker's handler ("lint", "render").
	Mode string `json:"mode"`
	// Flags are the handler's options ("skip-schema").
	Flags []string `json:"flags,omitempty"`
}

// Has reports whether r carries flag.
func (r Request) Has(flag string) bool {
	for _, f := range r.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// Pool is a set of warm workers. Its methods are safe for concurrent use.
type Pool struct {
	cfg Config
	// idle holds the warm workers waiting for a request, free a token
	// per place no worker fills: together, one entry per worker the
	// pool may have. A request takes a warm worker when there is one.
	idle   chan *worker
	free   chan struct{}
	mu     sync.Mutex
	closed bool
	all    map[*worker]struct{}
	reaped sync.WaitGroup
}

// New returns a pool for cfg; no worker starts until the first request.
func New(cfg Config) *Pool {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.MaxAnswer <= 0 {
		cfg.MaxAnswer = 64 << 20
	}
	p := &Pool{cfg: cfg, idle: make(chan *worker, cfg.Workers), free: make(chan struct{}, cfg.Workers), all: map[*worker]struct{}{}}
	for i := 0; i < cfg.Workers; i++ {
		p.free <- struct{}{}
	}
	return p
}

// Timeout is the bound of one request.
func (p *Pool) Timeout() time.Duration { return p.cfg.Timeout }

// Memory is each worker's address-space limit in bytes.
func (p *Pool) Memory() int64 { return p.cfg.Memory }

// Do sends payload to an idle worker (starting one if none is warm) and
// returns its answer. The worker is killed and replaced when the request
// passes the pool's timeout (ErrTimeout), when ctx ends first
// (ctx.Err()), or when the answer passes MaxAnswer (ErrAnswerTooLarge);
// a worker that dies during the request gives an *ExitError.
func (p *Pool) Do(ctx context.Context, req Request, payload []byte) ([]byte, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	var w *worker
	select {
	case w = <-p.idle:
	default:
		select {
		case w = <-p.idle:
		case <-p.free:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if w != nil && w.exited() {
		// Killed or crashed while idle: its place takes a fresh worker.
		w = nil
	}
	warm := w != nil
	if w == nil {
		var err error
		if w, err = p.start(); err != nil {
			p.free <- struct{}{}
			return nil, err
		}
	}
	answer, err := p.do(ctx, w, req, payload)
	var ee *ExitError
	if warm && errors.As(err, &ee) && ctx.Err() == nil {
		// A warm worker that died may have died while idle (killed from
		// outside) before the pool reaped it: the request goes once to a
		// fresh worker. A payload that kills workers kills two.
		w.kill()
		if w, err = p.start(); err != nil {
			p.free <- struct{}{}
			return nil, err
		}
		answer, err = p.do(ctx, w, req, payload)
	}
	if err != nil {
		w.kill()
		p.free <- struct{}{}
		return nil, err
	}
	p.mu.Lock()
	closed = p.closed
	p.mu.Unlock()
	if closed {
		w.kill()
		p.free <- struct{}{}
		return answer, nil
	}
	p.idle <- w
	return answer, nil
}

func (p *Pool) do(parent context.Context, w *worker, req Request, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, p.cfg.Timeout)
	defer cancel()
	type result struct {
		answer []byte
		err    error
	}
	done := make(chan result, 1)
	go func() {
		header, _ := json.Marshal(req)
		if err := writeFrames(w.stdin, header, payload); err != nil {
			done <- result{err: err}
			return
		}
		answer, err := readFrame(w.stdout, p.cfg.MaxAnswer)
		done <- result{answer, err}
	}()
	select {
	case r := <-done:
		if r.err == nil {
			return r.answer, nil
		}
		if errors.Is(r.err, errFrameTooLarge) {
			return nil, ErrAnswerTooLarge
		}
		// A broken pipe or a short answer: the worker died. Its exit
		// status tells how.
		w.kill()
		<-w.done
		return nil, &ExitError{Code: w.code, Stderr: w.stderr.String()}
	case <-ctx.Done():
		w.kill()
		<-w.done
		<-done
		if err := parent.Err(); err != nil {
			// The caller gave up (or its own deadline came first):
			// nothing is known about the payload.
			return nil, err
		}
		return nil, ErrTimeout
	case <-w.done:
		// The worker died on its own; the reader goroutine sees EOF.
		<-done
		return nil, &ExitError{Code: w.code, Stderr: w.stderr.String()}
	}
}

// Close stops every worker (an idle one sees its input close and exits;
// one still working is killed) and waits until all are reaped. Requests
// after Close fail with ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.reaped.Wait()
		return nil
	}
	p.closed = true
	ws := make([]*worker, 0, len(p.all))
	for w := range p.all {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		_ = w.stdin.Close()
	}
	grace := time.NewTimer(2 * time.Second)
	defer grace.Stop()
	for _, w := range ws {
		select {
		case <-w.done:
		case <-grace.C:
			w.kill()
		}
	}
	for _, w := range ws {
		w.kill()
	}
	p.reaped.Wait()
	return nil
}

// Running is the number of live workers (for tests and metrics).
func (p *Pool) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for w := range p.all {
		if !w.exited() {
			n++
		}
	}
	return n
}

// PIDs are the process ids of the live workers (for tests).
func (p *Pool) PIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for w := range p.all {
		if !w.exited() {
			out = append(out, w.cmd.Process.Pid)
		}
	}
	return out
}

type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *headBuffer
	done   chan struct{}
	code   int
	once   sync.Once
}

func (w *worker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *worker) kill() {
	w.once.Do(func() { killProcess(w.cmd) })
}

func (p *Pool) start() (*worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	cmd := exec.Command(p.cfg.Args[0], p.cfg.Args[1:]...)
	// One glibc malloc arena: a cgo-linked worker otherwise reserves 64 MiB
	// of address space per thread that calls malloc, which eats into its
	// limit as the runtime starts threads.
	cmd.Env = append(append(append(os.Environ(), "MALLOC_ARENA_MAX=1"), p.cfg.Env...), MemoryEnv+"="+strconv.FormatInt(p.cfg.Memory, 10))
	cmd.SysProcAttr = procAttr()
	w := &worker{cmd: cmd, stderr: &headBuffer{max: 4 << 10}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start a worker: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start a worker: %w", err)
	}
	w.stdout = stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start a worker: %w", err)
	}
	p.all[w] = struct{}{}
	p.reaped.Add(1)
	go func() {
		// Every worker is waited for, so none is left a zombie.
		defer p.reaped.Done()
		err := cmd.Wait()
		w.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			w.code = ee.ExitCode()
		} else if err != nil {
			w.code = -1
		}
		// The worker's scratch directory goes with it: one killed (its
		// timeout, the server stopping) could not remove it, and no
		// later worker may start to sweep it.
		removeScratch(cmd.Env, cmd.Process.Pid)
		p.mu.Lock()
		delete(p.all, w)
		p.mu.Unlock()
		close(w.done)
	}()
	return w, nil
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *headBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *headBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

var errFrameTooLarge = errors.New("frame too large")

// writeFrames writes each b as a 4-byte big-endian length and the bytes.
func writeFrames(w io.Writer, bs ...[]byte) error {
	for _, b := range bs {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		if _, err := w.Write(n[:]); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// readFrame reads one frame of at most max bytes; io.EOF when the stream
// ended before it.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if int64(size) > int64(max) {
		return nil, errFrameTooLarge
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}
