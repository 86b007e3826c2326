package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcTreeTicksCountsChildren checks that a process tree's CPU time
// includes a busy child's, while it runs and after the parent reaped it,
// and that the parent's own time does not.
func TestProcTreeTicksCountsChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc here")
	}
	// sh starts a child sh that is busy for about 0.4 s, waits for it,
	// then starts sleep: once sleep runs, the busy child's time is among
	// the parent's reaped children's.
	cmd := exec.Command("sh", "-c", `sh -c 'end=$(($(date +%s%N)+400000000)); while [ $(date +%s%N) -lt $end ]; do :; done' & wait; exec sleep 5`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	var live int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shell did not get to its sleep within 5 s")
		}
		if comm(pid) == "sleep" {
			break
		}
		live = max(live, procTreeTicks(pid))
	}
	if live < 10 {
		t.Errorf("while the child was busy the tree counted at most %d ticks, want ≥ 10 (0.1 s)", live)
	}
	if after := procTreeTicks(pid); after < live {
		t.Errorf("after the child was reaped the tree counts %d ticks, fewer than the %d while it ran", after, live)
	}
	if own := procTicks(pid, false); own > 10 {
		t.Errorf("the parent's own time is %d ticks: its child's time was counted as its own", own)
	}
}

// TestCPUTracerLine checks a trace's header and a line's columns.
func TestCPUTracerLine(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc here")
	}
	var b strings.Builder
	tr := newCPUTracer(&b, map[string]int{"chartctl": os.Getpid()})
	end := tr.begin("manifest", 0, 1, "chartctl")
	for until := time.Now().Add(150 * time.Millisecond); time.Now().Before(until); {
	}
	end(300, 150*time.Millisecond)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "# time\tround\top") {
		t.Fatalf("trace:\n%s", b.String())
	}
	head, cols := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	if len(head) != len(cols) {
		t.Fatalf("%d columns under %d headings:\n%s", len(cols), len(head), b.String())
	}
	col := func(name string) string {
		for i, h := range head {
			if h == name {
				return cols[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	if col("round") != "1" || col("slice") != "2" || col("server") != "chartctl" || col("rate") != "2000.0" {
		t.Errorf("line %q", lines[1])
	}
	if ms, _ := strconv.Atoi(col("cpu_chartctl")); ms < 50 {
		t.Errorf("cpu_chartctl = %s ms for a 150 ms busy loop", col("cpu_chartctl"))
	}
	if col("cpu_zot") != "-" {
		t.Errorf("cpu_zot = %q for a server not traced, want -", col("cpu_zot"))
	}
	if newCPUTracer(nil, nil) != nil {
		t.Error("no writer must give a nil tracer")
	}
	(*cpuTracer)(nil).begin("x", 0, 0, "chartctl")(1, time.Second) // a nil tracer traces nothing, and does not fail
}

// comm is pid's command name.
func comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}
