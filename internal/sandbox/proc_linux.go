package sandbox

import (
	"os/exec"
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

// limitMemory caps this process's address space at n bytes.
func limitMemory(n uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n})
}
