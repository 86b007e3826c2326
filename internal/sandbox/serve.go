package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
)

// Handler answers one request in a worker.
type Handler func(req Request, payload []byte) ([]byte, error)

// maxPayload bounds a request's payload a worker reads (chart archives
// are far smaller: the server's chart limits apply before).
const maxPayload = 1 << 30

// Serve is a worker's side of the pool: it applies the memory limit of
// MemoryEnv to this process, then answers requests read from in with
// handlers (by Request.Mode) on out until in ends. A handler's error ends
// the worker; a request a handler refuses is answered by the handler
// itself. After a request that left the process holding more than half
// its memory limit, Serve returns so the pool starts a fresh worker:
// Go keeps address space it once used.
func Serve(in io.Reader, out io.Writer, handlers map[string]Handler) error {
	var limit uint64
	if v := os.Getenv(MemoryEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", MemoryEnv, err)
		}
		if n > 0 {
			if err := limitMemory(n); err != nil {
				return fmt.Errorf("limit memory: %w", err)
			}
			limit = n
		}
	}
	for {
		header, err := readFrame(in, 64<<10)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read a request: %w", err)
		}
		var req Request
		if err := json.Unmarshal(header, &req); err != nil {
			return fmt.Errorf("read a request: %w", err)
		}
		payload, err := readFrame(in, maxPayload)
		if err != nil {
			return fmt.Errorf("read a request: %w", err)
		}
		h := handlers[req.Mode]
		if h == nil {
			return fmt.Errorf("unknown mode %q", req.Mode)
		}
		answer, err := h(req, payload)
		if err != nil {
			return err
		}
		if err := writeFrames(out, answer); err != nil {
			return fmt.Errorf("answer: %w", err)
		}
		if limit > 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.Sys > limit/2 {
				return nil
			}
		}
	}
}
