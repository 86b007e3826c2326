// Package stats summarizes benchmark samples: percentiles, medians of the
// head and tail of a sequence, and rates.
package stats

import (
	"math"
	"slices"
	"time"
)

// Summary describes a set of latency samples.
type Summary struct {
	// Count is the number of samples.
	Count int
	// Total is their sum.
	Total time.Duration
	// Min, Mean, Median, P90, P99 and Max describe the distribution; all
	// are zero for an empty set.
	Min, Mean, Median, P90, P99, Max time.Duration
}

// Summarize describes samples without modifying the slice.
func Summarize(samples []time.Duration) Summary {
	s := Summary{Count: len(samples)}
	if len(samples) == 0 {
		return s
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	for _, d := range sorted {
		s.Total += d
	}
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Mean = s.Total / time.Duration(len(sorted))
	s.Median = medianSorted(sorted)
	s.P90 = Percentile(sorted, 90)
	s.P99 = Percentile(sorted, 99)
	return s
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted samples by
// the nearest-rank method: the smallest sample with at least p % of the
// samples at or below it. p is clamped to [0, 100]; an empty slice yields 0.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if math.IsNaN(p) || p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return sorted[max(rank, 1)-1]
}

// Median returns the median of samples (the mean of the two middle ones
// for an even count), without modifying the slice; 0 when empty.
func Median(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return medianSorted(sorted)
}

func medianSorted(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return sorted[n/2-1] + (sorted[n/2]-sorted[n/2-1])/2
}

// HeadTail returns the medians of the first and of the last fraction of
// samples taken in order (fraction 0.1: the first and the last 10 %, at
// least one sample each). Their ratio tail/head shows whether latency grows
// as the data set grows.
func HeadTail(samples []time.Duration, fraction float64) (head, tail time.Duration) {
	n := len(samples)
	if n == 0 {
		return 0, 0
	}
	k := int(math.Ceil(fraction * float64(n)))
	k = min(max(k, 1), n)
	return Median(samples[:k]), Median(samples[n-k:])
}

// Rate is count per second over elapsed; 0 when elapsed is not positive.
func Rate(count int, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(count) / elapsed.Seconds()
}

// Ratio is a / b, or 0 when b is 0 (a missing measurement, not infinity).
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
