package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ScratchEnv, set in a worker's environment, names the directory workers
// keep their scratch files in (charts unpacked for linting).
const ScratchEnv = "CHARTCTL_LINT_TMPDIR"

// workerPrefix names a worker's own scratch directory, followed by its
// process id.
const workerPrefix = "chartctl-lint-w"

// ScratchDir is where scratch files go: ScratchEnv, else /dev/shm (a
// memory file system on Linux, present in containers and under systemd's
// PrivateDevices), else the system's temporary directory. Unpacking
// onto a disk file system (directories made and removed per chart)
// measured three times the cost of the lint itself.
func ScratchDir() string {
	return scratchDir(os.Getenv(ScratchEnv))
}

func scratchDir(env string) string {
	if env != "" {
		return env
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && syscall.Access("/dev/shm", 2 /* W_OK */) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// WorkerScratch makes this worker's own scratch directory under
// ScratchDir and returns it. The pool removes it once it has reaped the
// worker, however the worker ended; this removes those of workers that
// no longer run, left by a server killed with its workers. When the
// directory cannot be made, ScratchDir itself is returned.
func WorkerScratch() string {
	base := ScratchDir()
	if entries, err := os.ReadDir(base); err == nil {
		for _, e := range entries {
			pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), workerPrefix))
			if !e.IsDir() || !strings.HasPrefix(e.Name(), workerPrefix) || err != nil || pid == os.Getpid() {
				continue
			}
			if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				_ = os.RemoveAll(filepath.Join(base, e.Name()))
			}
		}
	}
	dir := workerScratch(base, os.Getpid())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return base
	}
	return dir
}

func workerScratch(base string, pid int) string {
	return filepath.Join(base, workerPrefix+strconv.Itoa(pid))
}

// removeScratch removes the scratch directory of the worker with process
// id pid, started with the environment env.
func removeScratch(env []string, pid int) {
	base := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, ScratchEnv+"="); ok {
			base = v
		}
	}
	_ = os.RemoveAll(workerScratch(scratchDir(base), pid))
}
