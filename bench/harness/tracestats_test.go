package harness

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestReadTraceRoundTrip reads back what the tracer wrote.
func TestReadTraceRoundTrip(t *testing.T) {
	var b strings.Builder
	tr := &cpuTracer{w: &b}
	before := cpuSample{procs: map[string]int64{"chartctl": 100, "self": 50}, sys: []int64{1000, 0, 200, 500, 10, 0, 40, 0}}
	after := cpuSample{procs: map[string]int64{"chartctl": 190, "self": 150}, sys: []int64{1130, 0, 240, 520, 10, 0, 50, 0}}
	tr.line("manifest", 2, 0, "chartctl", 30000, time.Second, before, after)
	tr.line("raw-push", 2, 0, "zot", 7, 500*time.Millisecond, before, after)
	got, err := ReadTrace(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d slices, want 2", len(got))
	}
	s := got[0]
	if s.Round != 3 || s.Slice != 1 || s.Op != "manifest" || s.Server != "chartctl" || s.N != 30000 || s.ElapsedMS != 1000 || s.Rate != 30000 {
		t.Errorf("slice %+v", s)
	}
	if s.CPU["chartctl"] != 900 || s.CPU["self"] != 1000 || len(s.CPU) != 2 {
		t.Errorf("CPU %v, want chartctl 900 and self 1000 ms only", s.CPU)
	}
	if s.Busy != 1800 || s.Idle != 200 {
		t.Errorf("busy %d, idle %d ms, want 1800 and 200", s.Busy, s.Idle)
	}
	if c := s.clientCost(); math.Abs(c-1000.0/30) > 1e-9 {
		t.Errorf("client cost %.3f µs, want 33.333", c)
	}
	if srvs := Servers(got); len(srvs) != 2 || srvs[0] != "chartctl" || srvs[1] != "zot" {
		t.Errorf("servers %v, want chartctl, zot", srvs)
	}
	head := "# round\top\tslice\tserver\tn\trate\n"
	for _, bad := range []string{"1\tmanifest\n", head + "1\n", head + "1\tm\t1\tchartctl\tx\t1.0\n", "# Chartctl\n\nSome text.\n"} {
		if _, err := ReadTrace(strings.NewReader(bad)); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// TestPairTraceTakesOutTheWeather builds slices whose rates move with
// the machine's speed (and the client's cost per request with them) and
// checks that the pairs see the servers' own ratio once that is taken out.
func TestPairTraceTakesOutTheWeather(t *testing.T) {
	var tr []TraceSlice
	speeds := []float64{1, 0.7, 1.2, 0.9, 1.1, 0.8}
	for i, w := range speeds {
		// chartctl is 0.95 of bare; bare's slice runs at speed w, and
		// chartctl's, just after, at speed w·(1+e).
		e := 0.1 * math.Sin(float64(i))
		for _, srv := range []struct {
			name  string
			speed float64
			own   float64
		}{{"bare", w, 1}, {"chartctl", w * (1 + e), 0.95}} {
			rate := 3000 * srv.speed * srv.own
			n := int(rate)
			tr = append(tr, TraceSlice{Round: 1 + i/3, Slice: 1 + i%3, Op: "manifest", Server: srv.name, N: n, Rate: rate,
				CPU: map[string]int{"self": int(math.Round(float64(n) * 0.3 / srv.speed))}, Busy: 1900, Idle: 100})
		}
	}
	tr = append(tr, TraceSlice{Op: "raw-push", Server: "chartctl", N: 7, Rate: 7})
	pairs := PairTrace(tr, "bare")
	if len(pairs) != 1 || pairs[0].Op != "manifest" || pairs[0].Pairs != 6 {
		t.Fatalf("pairs %+v", pairs)
	}
	p := pairs[0]
	if p.ClientCorr < 0.99 {
		t.Errorf("correlation with the client's cost %.3f, want ≈ 1", p.ClientCorr)
	}
	if math.Abs(p.AdjustedMedian-0.95) > 0.002 || p.AdjustedSD > 0.002 {
		t.Errorf("adjusted ratio %.4f ± %.4f, want 0.95 ± 0", p.AdjustedMedian, p.AdjustedSD)
	}
	if p.RatioSD < 0.02 {
		t.Errorf("raw ratio SD %.4f: the weather should show in it", p.RatioSD)
	}
	w := Weather(tr, []int{1})
	if w.Slices != 12 || w.SD < 0.1 {
		t.Errorf("weather %+v", w)
	}
	if w.Other <= 0 {
		t.Errorf("other CPU %.3f, want > 0 (1900 ms busy, ~1000 traced)", w.Other)
	}
	if rep := TraceReport(tr, "bare"); !strings.Contains(rep, "| manifest | 6 |") {
		t.Errorf("report:\n%s", rep)
	}
}
