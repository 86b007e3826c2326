package harness

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times (100
// on every Linux the bench runs on).
const clockTicks = 100

// cpuTracer writes, for each measured slice of the OCI side by side, a
// line of where the machine's CPU went during it: each server's process
// tree (the process, its live descendants, and the children it reaped),
// the load generator's own process, and the system's user, system,
// softirq, iowait and idle time. It shows what else ran while a server
// was measured. A nil tracer does nothing.
type cpuTracer struct {
	mu   sync.Mutex
	w    io.Writer
	pids map[string]int // server → root process id
	head bool
}

// newCPUTracer traces to w the process trees of pids (server → pid); w nil
// gives a nil tracer.
func newCPUTracer(w io.Writer, pids map[string]int) *cpuTracer {
	if w == nil {
		return nil
	}
	return &cpuTracer{w: w, pids: pids}
}

// cpuSample is one reading: per server (and "self") its process tree's
// CPU time in ticks, and /proc/stat's first line.
type cpuSample struct {
	procs map[string]int64
	sys   []int64 // user nice system idle iowait irq softirq steal
}

// sample reads the CPU times now.
func (t *cpuTracer) sample() cpuSample {
	s := cpuSample{procs: map[string]int64{}}
	for srv, pid := range t.pids {
		s.procs[srv] = procTreeTicks(pid)
	}
	s.procs["self"] = procTicks(os.Getpid(), true)
	s.sys = systemTicks()
	return s
}

// traceServers are the columns of a trace line, in order.
var traceServers = append(append([]string{}, ociServers...), "self")

// traceSys names systemTicks' fields as a trace line shows them.
var traceSys = []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// begin starts tracing a slice of op measured on srv in round and slice:
// it reads the CPU times now, and the function it returns, called with
// the slice's requests (or pushes) and time once it ends, reads them again
// and writes the slice's line. A nil tracer's is a no-op.
func (t *cpuTracer) begin(op string, round, slice int, srv string) (end func(n int, elapsed time.Duration)) {
	if t == nil {
		return func(int, time.Duration) {}
	}
	before := t.sample()
	return func(n int, elapsed time.Duration) { t.line(op, round, slice, srv, n, elapsed, before, t.sample()) }
}

// line writes the line of one slice: op measured on srv in round and
// slice, n requests (or pushes) in elapsed, and the CPU between before
// and after, in milliseconds.
func (t *cpuTracer) line(op string, round, slice int, srv string, n int, elapsed time.Duration, before, after cpuSample) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	if !t.head {
		t.head = true
		b.WriteString("# time\tround\top\tslice\tserver\tn\telapsed_ms\trate")
		for _, s := range traceServers {
			b.WriteString("\tcpu_" + s)
		}
		for _, s := range traceSys {
			b.WriteString("\t" + s)
		}
		b.WriteString("\n")
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(n) / elapsed.Seconds()
	}
	fmt.Fprintf(&b, "%s\t%d\t%s\t%d\t%s\t%d\t%d\t%.1f", time.Now().UTC().Format("15:04:05.000"), round+1, op, slice+1, srv, n, elapsed.Milliseconds(), rate)
	ms := func(ticks int64) int64 { return ticks * 1000 / clockTicks }
	for _, s := range traceServers {
		if _, ok := after.procs[s]; !ok {
			b.WriteString("\t-")
			continue
		}
		fmt.Fprintf(&b, "\t%d", ms(after.procs[s]-before.procs[s]))
	}
	for i := range traceSys {
		if i >= len(after.sys) || i >= len(before.sys) {
			b.WriteString("\t-")
			continue
		}
		fmt.Fprintf(&b, "\t%d", ms(after.sys[i]-before.sys[i]))
	}
	b.WriteString("\n")
	_, _ = io.WriteString(t.w, b.String())
}

// procTicks is pid's utime+stime (all its threads), plus the times of the
// children it has reaped when reaped is set; 0 when it is gone.
func procTicks(pid int, reaped bool) int64 {
	fs, err := procFS()
	if err != nil {
		return 0
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	n := int64(st.UTime + st.STime)
	if reaped {
		n += int64(st.CUTime + st.CSTime)
	}
	return n
}

// procTreeTicks is procTicks of pid with its reaped children's times, and
// of each live descendant without them (its reaped ones are counted
// there, once: a child reaped by pid is in pid's, not in any live one's).
func procTreeTicks(pid int) int64 {
	n := procTicks(pid, true)
	for _, c := range procChildren(pid) {
		n += procTreeTicks(c)
	}
	return n
}

// procChildren lists the live children of pid (of all its threads).
func procChildren(pid int) []int {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var out []int
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "children"))
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// procFS is the /proc the tracer reads, opened once: each slice reads it
// for every process of every server.
var procFS = sync.OnceValues(procfs.NewDefaultFS)

// systemTicks is /proc/stat's "cpu" line in ticks: user nice system idle
// iowait irq softirq steal, summed over every CPU (nil when unreadable).
func systemTicks() []int64 {
	fs, err := procFS()
	if err != nil {
		return nil
	}
	st, err := fs.Stat()
	if err != nil {
		return nil
	}
	c := st.CPUTotal // in seconds
	out := make([]int64, 0, 8)
	for _, v := range []float64{c.User, c.Nice, c.System, c.Idle, c.Iowait, c.IRQ, c.SoftIRQ, c.Steal} {
		out = append(out, int64(math.Round(v*clockTicks)))
	}
	return out
}
