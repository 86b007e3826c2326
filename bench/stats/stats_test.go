package stats

import (
	"slices"
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p0", ms(1, 2, 3), 0, time.Millisecond},
		{"p100", ms(1, 2, 3), 100, 3 * time.Millisecond},
		{"over 100 clamps", ms(1, 2, 3), 150, 3 * time.Millisecond},
		{"negative clamps", ms(1, 2, 3), -5, time.Millisecond},
		{"p50 of 4 is the 2nd", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p90 of 100", hundred, 90, 90 * time.Millisecond},
		{"p99.9 of 100", hundred, 99.9, 100 * time.Millisecond},
		{"p1 of 100", hundred, 1, time.Millisecond},
		{"p99 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(5), 5 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 2500 * time.Microsecond},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("Median reordered its input")
		}
	}
}

func TestSummarize(t *testing.T) {
	in := ms(30, 10, 20, 40)
	s := Summarize(in)
	want := Summary{
		Count: 4, Total: 100 * time.Millisecond, Min: 10 * time.Millisecond, Max: 40 * time.Millisecond,
		Mean: 25 * time.Millisecond, Median: 25 * time.Millisecond, P90: 40 * time.Millisecond, P99: 40 * time.Millisecond,
	}
	if s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	if in[0] != 30*time.Millisecond {
		t.Fatal("Summarize sorted its input")
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty summary not zero")
	}
}

func TestHeadTail(t *testing.T) {
	// Latency growing linearly: 1..20 ms.
	var in []time.Duration
	for i := 1; i <= 20; i++ {
		in = append(in, time.Duration(i)*time.Millisecond)
	}
	head, tail := HeadTail(in, 0.1) // first 2, last 2
	if head != 1500*time.Microsecond || tail != 19500*time.Microsecond {
		t.Fatalf("HeadTail = %v, %v", head, tail)
	}
	head, tail = HeadTail(ms(3, 8), 0.1) // at least one sample each
	if head != 3*time.Millisecond || tail != 8*time.Millisecond {
		t.Fatalf("small HeadTail = %v, %v", head, tail)
	}
	if h, tl := HeadTail(nil, 0.1); h != 0 || tl != 0 {
		t.Fatal("empty HeadTail")
	}
	if h, tl := HeadTail(ms(1, 2, 3), 5); h != 2*time.Millisecond || tl != 2*time.Millisecond {
		t.Fatalf("fraction over 1: %v %v", h, tl)
	}
}

func TestRateAndRatio(t *testing.T) {
	if got := Rate(500, 2*time.Second); got != 250 {
		t.Fatalf("Rate = %v", got)
	}
	if Rate(5, 0) != 0 || Ratio(1, 0) != 0 {
		t.Fatal("zero denominators")
	}
	if Ratio(3, 2) != 1.5 {
		t.Fatal("Ratio")
	}
}
