package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// TestSignInThrottleHoldsUnderParallelGuesses sends a burst of parallel
// wrong-password sign-ins for one account from one address. The throttle
// allows 10 failures per window; every attempt past those must be refused
// without a password check, however the attempts overlap. (Checking the
// throttle, comparing the password and counting the failure as three
// separate steps let every attempt of a burst pass the check before the
// first failure was counted: a password guess per connection instead of
// 10 per window.)
func TestSignInThrottleHoldsUnderParallelGuesses(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "victim@example.com", "correct horse battery", false)
	b := env.NewBrowser(t)
	csrf := b.Get(t, "/signin").CSRF(t)

	const burst = 30
	statuses := make([]int, burst)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			form := url.Values{"csrf_token": {csrf}, "email": {"victim@example.com"}, "password": {"guess-" + strconv.Itoa(i)}}
			req, err := http.NewRequest(http.MethodPost, env.URL+"/signin", strings.NewReader(form.Encode()))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := b.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()

	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != burst-10 {
		t.Fatalf("a burst of %d wrong passwords got %v; want exactly 10 checked (401) and the rest refused (429)", burst, counts)
	}
	page := b.Get(t, "/signin")
	if r := b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"victim@example.com"}, "password": {"correct horse battery"}}); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the right password after the burst got %d, want 429", r.StatusCode)
	}
}
