// Package proc supervises a server process that a test starts (a
// PostgreSQL cluster, an S3 gateway): its output in a log file, a bounded
// wait until it answers, and a stop that escalates to a kill.
package proc

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Process is one supervised run at a time; the zero value is ready to use
// and may be started again after it stopped (a restart).
type Process struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts cmd with its output in logPath, then calls ready until it
// succeeds, for at most timeout. A process that exits first has failed:
// the error carries its log. A process not ready in time is stopped with
// stop.
func (p *Process) Start(cmd *exec.Cmd, logPath string, timeout time.Duration, ready func() error, stop os.Signal) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("%s exited: %s", cmd.Path, log)
		default:
		}
		err := ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			p.Stop(stop, 10*time.Second)
			return fmt.Errorf("%s did not answer: %w", cmd.Path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop sends sig and waits up to grace for the process to exit, then
// kills it. Stopping a process that is not running does nothing.
func (p *Process) Stop(sig os.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
	}
}
