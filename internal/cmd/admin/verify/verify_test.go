package verify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

func TestVerifyRun(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "r", "private")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	ts.Upload(t, "r", ts.AdminKey, archive, "")
	mk := func() (*client.Client, error) { return client.New(ts.URL, client.WithToken(ts.AdminKey)) }
	ios, _, out, errOut := iostreams.Test()

	if err := verifyRun(context.Background(), &VerifyOptions{IO: ios, Client: mk}); err != nil {
		t.Fatalf("server verify: %v %s", err, errOut)
	}
	if !strings.Contains(errOut.String(), "is in order: 1 repository, 1 chart version, 1 blob") {
		t.Errorf("stderr %q", errOut)
	}

	b := ts.Do(t, http.MethodGet, "/v1/admin/backup", ts.AdminKey, nil).Body
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.tar"), filepath.Join(dir, "bad.tar")
	os.WriteFile(good, b, 0o600)
	flipped := append([]byte(nil), b...)
	flipped[strings.Index(string(flipped), string(archive[:64]))+50] ^= 1
	os.WriteFile(bad, flipped, 0o600)

	out.Reset()
	if err := verifyRun(context.Background(), &VerifyOptions{IO: ios, JSON: true, File: good}); err != nil {
		t.Fatalf("verify good file: %v", err)
	}
	out.Reset()
	err := verifyRun(context.Background(), &VerifyOptions{IO: ios, JSON: true, File: bad})
	if !errors.Is(err, cmdutil.ErrSilent) {
		t.Fatalf("verify bad file: %v, want exit 1", err)
	}
	var res client.VerifyResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.OK || !strings.Contains(out.String(), `"kind": "blob_digest"`) {
		t.Fatalf("result %s", out)
	}
}
