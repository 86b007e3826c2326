//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

func killProcess(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// limitMemory is a no-op where RLIMIT_AS is not applied: the worker runs
// with the time bound only (chartctl serve's lint runs on Linux).
func limitMemory(n uint64) error { return nil }
