package server_test

import (
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// An outsider who cannot see a private repository must not spend its
// upload budget (blocking its CI) nor read its remaining count from the
// headers: the upload bucket is charged only once the caller may write.
func TestUploadBudgetChargedOnlyAfterAuthorization(t *testing.T) {
	s := testkit.StartServer(t, withLimits("1000/1h", "3/1h", "300/1h"))
	owner := s.MustUser(t, "owner@example.test", false)
	ownerKey := s.MustKey(t, owner, chartctl.AllScopes...)
	outsider := s.MustKey(t, s.MustUser(t, "eve@example.test", false), chartctl.AllScopes...)
	if r := s.DoJSON(t, "POST", "/v1/repositories", ownerKey, map[string]string{"name": "secret"}); r.StatusCode != 200 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	for i := range 5 {
		r := s.Upload(t, "secret", outsider, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "1.0.0"}), "")
		if r.StatusCode != http.StatusNotFound {
			t.Fatalf("outsider upload %d: %d %s", i, r.StatusCode, r.Body)
		}
		if res := r.Header.Get("X-RateLimit-Resource"); res != "global" {
			t.Fatalf("outsider sees the %q bucket, want only its own global one", res)
		}
	}
	// The owner still has the whole budget of 3.
	var rl struct {
		Data client.RateLimits `json:"data"`
	}
	s.Do(t, "GET", "/v1/rate-limit?repository=secret", ownerKey, nil).JSON(t, &rl)
	if up := rl.Data.Resources["upload"]; up.Used != 0 || up.Remaining != 3 {
		t.Fatalf("upload bucket after refused uploads: %+v, want used 0 of 3", up)
	}
	for i := range 3 {
		r := s.Upload(t, "secret", ownerKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "1.0." + string(rune('0'+i))}), "")
		if r.StatusCode != 200 {
			t.Fatalf("owner upload %d: %d %s", i, r.StatusCode, r.Body)
		}
	}
	if r := s.Upload(t, "secret", ownerKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "1.0.9"}), ""); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th owner upload: %d, want 429", r.StatusCode)
	}
}
