package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/sandbox"
)

// workerEnv makes this test binary a worker (TestMain) with test modes.
const workerEnv = "SANDBOX_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		err := sandbox.Serve(os.Stdin, os.Stdout, map[string]sandbox.Handler{
			"echo": func(req sandbox.Request, p []byte) ([]byte, error) {
				if req.Has("upper") {
					return bytes.ToUpper(p), nil
				}
				return p, nil
			},
			"pid": func(sandbox.Request, []byte) ([]byte, error) {
				return []byte(strings.TrimSpace(string(rune('0')) + itoa(os.Getpid()))), nil
			},
			// hang stands for a template that loops for ever.
			"hang": func(sandbox.Request, []byte) ([]byte, error) {
				for {
					time.Sleep(time.Hour)
				}
			},
			"crash": func(sandbox.Request, []byte) ([]byte, error) {
				os.Exit(3)
				return nil, nil
			},
			// alloc keeps allocating: the memory limit stops it.
			"alloc": func(sandbox.Request, []byte) ([]byte, error) {
				var keep [][]byte
				for {
					keep = append(keep, make([]byte, 64<<20))
					keep[len(keep)-1][0] = 1
				}
			},
			"big": func(sandbox.Request, []byte) ([]byte, error) { return make([]byte, 1<<20), nil },
		})
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func itoa(n int) string {
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func setupPool(tb testing.TB, cfg sandbox.Config) *sandbox.Pool {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Args = []string{exe}
	cfg.Env = append(cfg.Env, workerEnv+"=1")
	p := sandbox.New(cfg)
	tb.Cleanup(func() { p.Close() })
	return p
}

func mustDo(tb testing.TB, p *sandbox.Pool, mode string, payload string) string {
	tb.Helper()
	b, err := p.Do(context.Background(), sandbox.Request{Mode: mode}, []byte(payload))
	if err != nil {
		tb.Fatalf("%s: %v", mode, err)
	}
	return string(b)
}

// pidOf asks a worker its process id; with one worker it is always the
// same worker.
func pidOf(tb testing.TB, p *sandbox.Pool) string {
	tb.Helper()
	return strings.TrimPrefix(mustDo(tb, p, "pid", ""), "0")
}

// gone reports whether no process pid exists any more (reaped, not a
// zombie: a zombie still answers kill 0).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestPoolKeepsWorkersWarm(t *testing.T) {
	// Two places, requests one after another: the warm worker answers
	// them all, no second worker starts.
	p := setupPool(t, sandbox.Config{Workers: 2})
	if p.Running() != 0 {
		t.Fatalf("%d workers before the first request, want 0", p.Running())
	}
	first := pidOf(t, p)
	for i := 0; i < 5; i++ {
		if got := mustDo(t, p, "echo", "chart bytes"); got != "chart bytes" {
			t.Fatalf("echo answered %q", got)
		}
	}
	b, err := p.Do(context.Background(), sandbox.Request{Mode: "echo", Flags: []string{"upper"}}, []byte("abc"))
	if err != nil || string(b) != "ABC" {
		t.Fatalf("flags: %q %v", b, err)
	}
	// Empty and binary payloads cross the frames whole.
	bin := []byte{0, 1, 2, 0xff, '\n', 0}
	if b, err := p.Do(context.Background(), sandbox.Request{Mode: "echo"}, bin); err != nil || !bytes.Equal(b, bin) {
		t.Fatalf("binary payload: %v %v", b, err)
	}
	if got := mustDo(t, p, "echo", ""); got != "" {
		t.Fatalf("empty payload: %q", got)
	}
	if again := pidOf(t, p); again != first || len(p.PIDs()) != 1 {
		t.Fatalf("the worker changed from %s to %s between requests (workers %v)", first, again, p.PIDs())
	}
}

func TestPoolKillsWorkerPastDeadline(t *testing.T) {
	// Long enough for a fresh worker to start and answer on a loaded
	// machine: the hanging request never answers at all.
	p := setupPool(t, sandbox.Config{Workers: 1, Timeout: 5 * time.Second})
	before := p.PIDs()
	_ = pidOf(t, p)
	pids := p.PIDs()
	if len(before) != 0 || len(pids) != 1 {
		t.Fatalf("workers %v then %v", before, pids)
	}
	_, err := p.Do(context.Background(), sandbox.Request{Mode: "hang"}, nil)
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("a hanging request: %v, want ErrTimeout", err)
	}
	if !gone(pids[0]) {
		t.Fatalf("the hung worker %d is still there", pids[0])
	}
	if got := mustDo(t, p, "echo", "next"); got != "next" {
		t.Fatalf("the next request answered %q", got)
	}
	if now := p.PIDs(); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("workers after the timeout: %v (the hung one was %d)", now, pids[0])
	}
}

func TestPoolReplacesWorkerKilledFromOutside(t *testing.T) {
	p := setupPool(t, sandbox.Config{Workers: 1})
	_ = pidOf(t, p)
	pid := p.PIDs()[0]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The pool notices (it reaps the worker) before or at the next
	// request; either way the request is answered by a fresh worker.
	if got := mustDo(t, p, "echo", "still here"); got != "still here" {
		t.Fatalf("after the kill: %q", got)
	}
	if now := p.PIDs(); len(now) != 1 || now[0] == pid || !gone(pid) {
		t.Fatalf("workers %v after killing %d", now, pid)
	}
}

func TestPoolWorkerDyingMidRequest(t *testing.T) {
	// A Go program holds over a gigabyte of address space from its start
	// (more under -race): the limit leaves room above that.
	p := setupPool(t, sandbox.Config{Workers: 1, Memory: 3 << 30})
	_, err := p.Do(context.Background(), sandbox.Request{Mode: "crash"}, nil)
	var ee *sandbox.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("a crash: %v, want exit status 3", err)
	}
	// Past the memory limit the Go runtime gives up ("fatal error: out of
	// memory", exit status 2), or under -race the race detector does (exit
	// status 66): the worker dies.
	_, err = p.Do(context.Background(), sandbox.Request{Mode: "alloc"}, nil)
	goDied := errors.As(err, &ee) && ee.Code == 2 && strings.Contains(ee.Stderr, "fatal error:")
	raceDied := errors.As(err, &ee) && ee.Code == 66 && strings.Contains(ee.Stderr, "ThreadSanitizer failed to allocate")
	if !goDied && !raceDied {
		t.Fatalf("allocating past the limit: %v (%q)", err, ee.Stderr)
	}
	if got := mustDo(t, p, "echo", "ok"); got != "ok" {
		t.Fatalf("after the crashes: %q", got)
	}
}

func TestPoolRefusesALimitBelowTheStart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the address-space limit applies on Linux")
	}
	p := setupPool(t, sandbox.Config{Workers: 1, Memory: 64 << 20})
	_, err := p.Do(context.Background(), sandbox.Request{Mode: "echo"}, []byte("x"))
	var ee *sandbox.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(ee.Stderr, "the limit of 64 MiB is below the") {
		t.Fatalf("a 64 MiB limit: %v (%q)", err, ee.Stderr)
	}
}

func TestPoolCutsLargeAnswers(t *testing.T) {
	p := setupPool(t, sandbox.Config{Workers: 1, MaxAnswer: 1 << 10})
	_ = pidOf(t, p)
	pid := p.PIDs()[0]
	if _, err := p.Do(context.Background(), sandbox.Request{Mode: "big"}, nil); !errors.Is(err, sandbox.ErrAnswerTooLarge) {
		t.Fatalf("a 1 MiB answer: %v", err)
	}
	if got := mustDo(t, p, "echo", "ok"); got != "ok" || slices.Contains(p.PIDs(), pid) {
		t.Fatalf("after the large answer: %q, workers %v (was %d)", got, p.PIDs(), pid)
	}
}

func TestPoolCallerGivesUp(t *testing.T) {
	p := setupPool(t, sandbox.Config{Workers: 1, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the hanging request is with the worker.
		for len(p.PIDs()) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	if _, err := p.Do(ctx, sandbox.Request{Mode: "hang"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled request: %v", err)
	}
	if got := mustDo(t, p, "echo", "ok"); got != "ok" {
		t.Fatalf("after the cancel: %q", got)
	}
}

func TestPoolCloseStopsEveryWorker(t *testing.T) {
	p := setupPool(t, sandbox.Config{Workers: 3})
	done := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			_, err := p.Do(context.Background(), sandbox.Request{Mode: "echo"}, []byte("x"))
			done <- err
		}()
	}
	for i := 0; i < 3; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	pids := p.PIDs()
	if len(pids) == 0 {
		t.Fatal("no workers")
	}
	// A request still running when the pool closes is killed with it.
	hung := make(chan error, 1)
	go func() {
		_, err := p.Do(context.Background(), sandbox.Request{Mode: "hang"}, nil)
		hung <- err
	}()
	for len(p.PIDs()) == len(pids) && len(pids) < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-hung; err == nil {
		t.Fatal("the hanging request answered after Close")
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("worker %d outlived Close", pid)
		}
	}
	if p.Running() != 0 {
		t.Errorf("%d workers after Close", p.Running())
	}
	if _, err := p.Do(context.Background(), sandbox.Request{Mode: "echo"}, nil); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("a request after Close: %v", err)
	}
}

// TestWorkerWithoutPool: a worker whose input ends exits cleanly; an
// unknown mode ends it with the mode named.
func TestWorkerWithoutPool(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a worker with no requests: %v %s", err, out)
	}
	p := setupPool(t, sandbox.Config{Workers: 1})
	_, err := p.Do(context.Background(), sandbox.Request{Mode: "nope"}, nil)
	var ee *sandbox.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, `unknown mode "nope"`) {
		t.Fatalf("unknown mode: %v %+v", err, ee)
	}
}
