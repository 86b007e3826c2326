package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// Made-up methods and paths must not become metric labels: each would be
// a time series kept for good (20,000 of them grew RSS by 110 MiB).
func TestMetricsLabelsAreBounded(t *testing.T) {
	s := testkit.StartServer(t)
	for i := range 300 {
		s.Do(t, fmt.Sprintf("M%04d", i), "/healthz", "", nil)
		s.Do(t, http.MethodGet, fmt.Sprintf("/no/such/path/%d", i), "", nil)
		s.Do(t, http.MethodGet, fmt.Sprintf("/v1/nothing-%d", i), "", nil)
	}
	r := s.Do(t, http.MethodGet, "/metrics", "", nil)
	if r.StatusCode != 200 {
		t.Fatalf("/metrics: %d", r.StatusCode)
	}
	body := string(r.Body)
	for _, bad := range []string{`method="M0001"`, "/no/such/path", "/v1/nothing-", `route="/*"`} {
		if strings.Contains(body, bad) {
			t.Errorf("/metrics holds a label from a client's request: %s", bad)
		}
	}
	if !strings.Contains(body, `method="OTHER"`) || !strings.Contains(body, `route="unmatched"`) {
		t.Errorf("unknown methods and routes should be counted as OTHER and unmatched")
	}
	series := strings.Count(body, "chartctl_http_requests_total{")
	if series > 20 {
		t.Errorf("%d request series after 900 hostile requests, want a handful", series)
	}
}
