package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// procAttr puts a worker in its own process group (so a kill reaches
// anything it started) and has the kernel kill it if the server dies
// first.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killProcess(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// limitMemory caps this process's address space at n bytes. A cap at or
// below what the process already holds would fail its next mapping (a Go
// program reserves over a gigabyte of address space at start), so that is
// refused with both sizes rather than applied. Without /proc (a bare
// chroot) the cap is applied unchecked.
func limitMemory(n uint64) error {
	if held, err := addressSpace(); err == nil && held >= n {
		return fmt.Errorf("the limit of %d MiB is below the %d MiB of address space the worker holds at start", n>>20, held>>20)
	}
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n})
}

// addressSpace is this process's address space in bytes (VmSize).
func addressSpace() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read the address space: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmSize:")); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read the address space: VmSize %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read the address space: no VmSize in /proc/self/status")
}
