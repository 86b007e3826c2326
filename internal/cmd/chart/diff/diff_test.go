package diff

import (
	"context"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestColourOnTerminal runs the command against a real server with
// colour on, as on a terminal: added lines green, removed red, hunks
// cyan; and with a file whose text carries terminal escapes, which never
// reach the terminal.
func TestColourOnTerminal(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "")
	evil := "x: \x1b]0;pwned\x07\n"
	for _, v := range []struct{ version, values string }{{"1.0.0", "x: 1\n"}, {"1.1.0", evil}} {
		a := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: v.version, Files: map[string]string{"values.yaml": v.values}})
		if r := ts.Upload(t, "stable", ts.AdminKey, a, ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(true)
	opts := &DiffOptions{IO: ios, Name: "web", From: "1.0.0", To: "1.1.0", Repo: "stable",
		Client: func() (*client.Client, error) { return client.New(ts.URL, client.WithToken(ts.AdminKey)) }}
	if err := diffRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"\x1b[31m-x: 1\x1b[0m", "\x1b[36m@@ -1 +1 @@\x1b[0m"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	if strings.Contains(got, "\x1b]0;") || strings.Contains(got, "\x07") {
		t.Errorf("a chart's escape reached the terminal: %q", got)
	}
}
