package harness

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// TraceSlice is one line of an ocibench trace (cputrace.go): a slice of a
// read or push measured on one server, and the CPU the machine spent
// meanwhile, in milliseconds.
type TraceSlice struct {
	Round, Slice int
	Op, Server   string
	N            int
	ElapsedMS    int
	Rate         float64
	// CPU is each traced process tree's CPU time ("self" is the load
	// generator); a server not traced is absent.
	CPU map[string]int
	// Busy is the system's user, nice, system, irq and softirq time, Idle
	// its idle and iowait time (over every CPU).
	Busy, Idle int
}

// Servers lists the servers of a trace's slices, in the order they first
// appear.
func Servers(tr []TraceSlice) []string {
	var out []string
	for _, s := range tr {
		if !slices.Contains(out, s.Server) {
			out = append(out, s.Server)
		}
	}
	return out
}

// ReadTrace parses a trace written by ocibench --trace.
func ReadTrace(r io.Reader) ([]TraceSlice, error) {
	sc := bufio.NewScanner(r)
	var head []string
	var out []TraceSlice
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "# ") {
			head = strings.Split(strings.TrimPrefix(text, "# "), "\t")
			for _, want := range []string{"round", "op", "slice", "server", "n", "rate"} {
				if !slices.Contains(head, want) {
					return nil, fmt.Errorf("line %d: the heading has no %q column: is this an ocibench --trace file?", line, want)
				}
			}
			continue
		}
		if text == "" {
			continue
		}
		if head == nil {
			return nil, fmt.Errorf("line %d: no heading line before it: is this an ocibench --trace file?", line)
		}
		f := strings.Split(text, "\t")
		if len(f) != len(head) {
			return nil, fmt.Errorf("line %d: %d columns under %d headings", line, len(f), len(head))
		}
		s := TraceSlice{CPU: map[string]int{}}
		var err error
		num := func(v string) int {
			n, e := strconv.Atoi(v)
			if e != nil && err == nil {
				err = fmt.Errorf("line %d: %q is not a number", line, v)
			}
			return n
		}
		for i, h := range head {
			v := f[i]
			switch {
			case h == "round":
				s.Round = num(v)
			case h == "slice":
				s.Slice = num(v)
			case h == "op":
				s.Op = v
			case h == "server":
				s.Server = v
			case h == "n":
				s.N = num(v)
			case h == "elapsed_ms":
				s.ElapsedMS = num(v)
			case h == "rate":
				rate, e := strconv.ParseFloat(v, 64)
				if e != nil && err == nil {
					err = fmt.Errorf("line %d: rate %q is not a number", line, v)
				}
				s.Rate = rate
			case strings.HasPrefix(h, "cpu_"):
				if v != "-" {
					s.CPU[strings.TrimPrefix(h, "cpu_")] = num(v)
				}
			case h == "user" || h == "nice" || h == "system" || h == "irq" || h == "softirq":
				s.Busy += num(v)
			case h == "idle" || h == "iowait":
				s.Idle += num(v)
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// clientCost is the load generator's CPU per request of s, in
// microseconds (0 without requests or without the load generator's
// column).
func (s TraceSlice) clientCost() float64 {
	self, ok := s.CPU["self"]
	if !ok || s.N == 0 {
		return 0
	}
	return float64(self) * 1000 / float64(s.N)
}

// TracePairs is, for one read, how chartctl's slices compare with the
// reference server's slices of the same round and slice number (taken
// one after the other, the order turning).
type TracePairs struct {
	Op    string
	Pairs int
	// Ratio summarizes chartctl's rate over the reference's, pair by pair.
	RatioMedian, RatioSD float64
	// ClientCorr is the correlation, over the pairs, of the log of that
	// ratio with the log of the reference's client cost (load generator
	// CPU per request) over chartctl's: near 1 when what moves the ratio
	// is how fast the machine ran each slice, not the servers.
	ClientCorr float64
	// AdjustedMedian and AdjustedSD summarize the ratio times chartctl's
	// client cost over the reference's: the ratio with the machine's
	// speed in each slice taken out (valid where the two servers cost the
	// client alike per request, as two servers sending the same bytes
	// with the same headers do).
	AdjustedMedian, AdjustedSD float64
}

// PairTrace compares chartctl with ref in each read of the trace.
func PairTrace(tr []TraceSlice, ref string) []TracePairs {
	type key struct {
		op, srv      string
		round, slice int
	}
	by := map[key]TraceSlice{}
	var ops []string
	for _, s := range tr {
		if strings.HasSuffix(s.Op, "push") {
			continue
		}
		if !slices.Contains(ops, s.Op) {
			ops = append(ops, s.Op)
		}
		by[key{s.Op, s.Server, s.Round, s.Slice}] = s
	}
	var out []TracePairs
	for _, op := range ops {
		var ratios, adjusted, x, y []float64
		for k, c := range by {
			if k.op != op || k.srv != "chartctl" {
				continue
			}
			r, ok := by[key{op, ref, k.round, k.slice}]
			if !ok || c.Rate <= 0 || r.Rate <= 0 {
				continue
			}
			ratio := c.Rate / r.Rate
			ratios = append(ratios, ratio)
			cc, rc := c.clientCost(), r.clientCost()
			if cc > 0 && rc > 0 {
				adjusted = append(adjusted, ratio*cc/rc)
				x, y = append(x, math.Log(ratio)), append(y, math.Log(rc/cc))
			}
		}
		if len(ratios) == 0 {
			continue
		}
		p := TracePairs{Op: op, Pairs: len(ratios), RatioMedian: median(ratios), RatioSD: stddev(ratios), ClientCorr: correlation(x, y)}
		if len(adjusted) > 0 {
			p.AdjustedMedian, p.AdjustedSD = median(adjusted), stddev(adjusted)
		}
		out = append(out, p)
	}
	return out
}

// TraceWeather describes how the machine's speed moved during a run: the
// load generator's CPU per request in each read slice of at least
// weatherMinRequests requests (fewer leave the count of 10 ms CPU ticks
// too coarse), as a share of its
// median for that read and server (the same work, so any change is the
// machine's), its spread and how alike it stays from one slice to the
// next, and the next but one, and so on.
type TraceWeather struct {
	Slices int
	// SD is the standard deviation of the log of that share.
	SD float64
	// Autocorr maps a lag in slices (in the order measured) to the
	// correlation of the share with the share that many slices later.
	Autocorr map[int]float64
	// Other is the CPU spent outside the traced processes, as a share of
	// all busy CPU (the kernel's own threads, other processes).
	Other float64
}

// weatherMinRequests is the fewest requests of a slice Weather uses.
const weatherMinRequests = 1000

// Weather computes the trace's weather at lags.
func Weather(tr []TraceSlice, lags []int) TraceWeather {
	costs := map[[2]string][]float64{}
	var reads []TraceSlice
	for _, s := range tr {
		if strings.HasSuffix(s.Op, "push") || s.N < weatherMinRequests || s.clientCost() == 0 {
			continue
		}
		reads = append(reads, s)
		k := [2]string{s.Op, s.Server}
		costs[k] = append(costs[k], s.clientCost())
	}
	meds := map[[2]string]float64{}
	for k, v := range costs {
		meds[k] = median(v)
	}
	series := make([]float64, len(reads))
	var busy, traced int
	for i, s := range reads {
		series[i] = math.Log(s.clientCost() / meds[[2]string{s.Op, s.Server}])
		busy += s.Busy
		for _, ms := range s.CPU {
			traced += ms
		}
	}
	w := TraceWeather{Slices: len(series), SD: stddev(series), Autocorr: map[int]float64{}}
	for _, lag := range lags {
		if lag < len(series) {
			w.Autocorr[lag] = correlation(series[:len(series)-lag], series[lag:])
		}
	}
	if busy > 0 {
		w.Other = float64(busy-traced) / float64(busy)
	}
	return w
}

// TraceReport is the Markdown summary of a trace: PairTrace against ref
// and Weather.
func TraceReport(tr []TraceSlice, ref string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "chartctl ÷ %s, slice by slice (a slice of each, same round and slice number):\n\n", ref)
	b.WriteString("| read | pairs | ratio, median | ratio, SD | corr. with the client's cost | ratio × client cost, median | … SD |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range PairTrace(tr, ref) {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.2f | %.3f | %.3f |\n", p.Op, p.Pairs, p.RatioMedian, p.RatioSD, p.ClientCorr, p.AdjustedMedian, p.AdjustedSD)
	}
	lags := []int{1, 2, 5, 10, 20}
	w := Weather(tr, lags)
	fmt.Fprintf(&b, "\nThe machine's speed: the load generator's CPU per request over %d read slices, against its median for the same read and server: SD of its log %.3f; correlation with the slice", w.Slices, w.SD)
	var parts []string
	for _, lag := range lags {
		if c, ok := w.Autocorr[lag]; ok {
			parts = append(parts, fmt.Sprintf("%d later %.2f", lag, c))
		}
	}
	fmt.Fprintf(&b, " %s. CPU outside the traced processes: %.1f %% of the busy time.\n", strings.Join(parts, ", "), 100*w.Other)
	return b.String()
}

// stddev is the sample standard deviation of v (0 for fewer than two).
func stddev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

// correlation is Pearson's correlation of x and y (0 when either is
// constant or they are shorter than two).
func correlation(x, y []float64) float64 {
	n := min(len(x), len(y))
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := range n {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := x[i]-mx, y[i]-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
