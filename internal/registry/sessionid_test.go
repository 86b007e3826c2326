package registry_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// uploads returns the stored upload session records.
func (e *env) uploads(t *testing.T) []*chartctl.OCIUpload {
	t.Helper()
	us, err := e.Reg.OCI.Uploads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return us
}

// startUpload opens an upload session of name and returns its URL path.
func (e *env) startUpload(t *testing.T, name string) string {
	t.Helper()
	r := e.do(t, "POST", "/v2/"+name+"/blobs/uploads/", e.AdminKey, nil)
	if r.StatusCode != 202 || r.Header.Get("Location") == "" {
		t.Fatalf("POST: %d %s", r.StatusCode, r.Body)
	}
	return r.Header.Get("Location")
}

func wantUnknown(t *testing.T, what string, r *testkit.Response) {
	t.Helper()
	if r.StatusCode != 404 || ociCode(r) != "BLOB_UPLOAD_UNKNOWN" {
		t.Fatalf("%s: %d %s, want 404 BLOB_UPLOAD_UNKNOWN", what, r.StatusCode, r.Body)
	}
}

// TestKeyedUploadSessions: with a session key, POST stores nothing; the
// session is known from its ID alone until its first chunk; cancel and
// the end of a chunked upload close the ID; an ID of another name, key or
// altered is unknown, as is one past the session expiry.
func TestKeyedUploadSessions(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "keyed", "private")
	mustRepoIn(t, e, "other", "private")
	blob := []byte("one whole blob")
	d := digest.FromBytes(blob)

	loc := e.startUpload(t, "keyed/app")
	if us := e.uploads(t); len(us) != 0 {
		t.Fatalf("POST stored a session: %+v", us[0])
	}
	if entries, _ := os.ReadDir(e.Reg.Config.UploadDir); len(entries) != 0 {
		t.Fatalf("POST created session data: %v", entries)
	}
	if r := e.do(t, "GET", loc, e.AdminKey, nil); r.StatusCode != 204 || r.Header.Get("Range") != "0-0" {
		t.Fatalf("status: %d %q", r.StatusCode, r.Header.Get("Range"))
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	wantUnknown(t, "the ID under another name", e.do(t, "GET", "/v2/other/app/blobs/uploads/"+id, e.AdminKey, nil))
	altered := []byte(id)
	altered[5] ^= 1
	if altered[5] == '-' || altered[5] == '_' {
		altered[5] = 'A'
	}
	wantUnknown(t, "an altered ID", e.do(t, "GET", "/v2/keyed/app/blobs/uploads/"+string(altered), e.AdminKey, nil))
	key := e.Reg.SessionKey
	e.Reg.SessionKey = []byte("another replica's key, not shared")
	wantUnknown(t, "the ID under another key", e.do(t, "GET", loc, e.AdminKey, nil))
	e.Reg.SessionKey = key

	put := func(loc string, body []byte, hdr ...string) *testkit.Response {
		return e.do(t, "PUT", loc+"?digest="+digest.FromBytes(body).String(), e.AdminKey, body, hdr...)
	}
	if r := put(loc, blob); r.StatusCode != 201 {
		t.Fatalf("PUT: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/keyed/app/blobs/"+d.String(), e.AdminKey, nil); r.StatusCode != 200 || string(r.Body) != string(blob) {
		t.Fatalf("pull: %d %q", r.StatusCode, r.Body)
	}
	if us := e.uploads(t); len(us) != 0 {
		t.Fatalf("a whole-blob PUT stored a session: %+v", us[0])
	}
	if r := put(loc, blob); r.StatusCode != 201 {
		t.Fatalf("the same PUT again (a retry): %d %s", r.StatusCode, r.Body)
	}

	// Chunked: the first chunk stores the session; its end closes the ID.
	loc = e.startUpload(t, "keyed/app")
	if r := e.do(t, "PATCH", loc, e.AdminKey, []byte("hello "), "Content-Range", "0-5"); r.StatusCode != 202 || r.Header.Get("Range") != "0-5" {
		t.Fatalf("PATCH: %d %s", r.StatusCode, r.Body)
	}
	if us := e.uploads(t); len(us) != 1 || us[0].Offset != 6 || us[0].Name != "keyed/app" {
		t.Fatalf("after the first chunk: %+v", us)
	}
	if r := e.do(t, "PATCH", loc, e.AdminKey, []byte("again"), "Content-Range", "0-4"); r.StatusCode != 416 {
		t.Fatalf("chunk out of order: %d %s", r.StatusCode, r.Body)
	}
	whole := []byte("hello world")
	if r := e.do(t, "PUT", loc+"?digest="+digest.FromBytes(whole).String(), e.AdminKey, []byte("world"), "Content-Range", "6-10"); r.StatusCode != 201 {
		t.Fatalf("complete: %d %s", r.StatusCode, r.Body)
	}
	wantUnknown(t, "a completed chunked session", e.do(t, "GET", loc, e.AdminKey, nil))
	wantUnknown(t, "PUT to a completed chunked session", put(loc, whole))
	if entries, _ := os.ReadDir(e.Reg.Config.UploadDir); len(entries) != 0 {
		t.Fatalf("session data left: %v", entries)
	}

	// A PUT with Content-Range to a session without a record.
	loc = e.startUpload(t, "keyed/app")
	if r := put(loc, whole, "Content-Range", "0-10"); r.StatusCode != 201 {
		t.Fatalf("one ranged PUT: %d %s", r.StatusCode, r.Body)
	}
	wantUnknown(t, "after one ranged PUT", e.do(t, "GET", loc, e.AdminKey, nil))

	// Cancel, before and after a chunk.
	for _, chunk := range []bool{false, true} {
		loc = e.startUpload(t, "keyed/app")
		if chunk {
			if r := e.do(t, "PATCH", loc, e.AdminKey, []byte("x")); r.StatusCode != 202 {
				t.Fatalf("PATCH: %d", r.StatusCode)
			}
		}
		if r := e.do(t, "DELETE", loc, e.AdminKey, nil); r.StatusCode != 204 {
			t.Fatalf("cancel: %d %s", r.StatusCode, r.Body)
		}
		wantUnknown(t, "GET of a cancelled session", e.do(t, "GET", loc, e.AdminKey, nil))
		wantUnknown(t, "PUT to a cancelled session", put(loc, blob))
		wantUnknown(t, "PATCH to a cancelled session", e.do(t, "PATCH", loc, e.AdminKey, []byte("x")))
	}

	// Expiry; garbage collection removes the records that close IDs.
	loc = e.startUpload(t, "keyed/app")
	later := time.Now().Add(e.Reg.Config.UploadExpiry + time.Minute)
	e.Reg.Now = func() time.Time { return later }
	wantUnknown(t, "an expired session", e.do(t, "GET", loc, e.AdminKey, nil))
	if _, err := e.Reg.CollectGarbage(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if us := e.uploads(t); len(us) != 0 {
		t.Fatalf("records left after the expiry: %+v", us)
	}
}

// TestUnkeyedUploadSessions: without a session key every session is
// stored when it starts and deleted when it ends.
func TestUnkeyedUploadSessions(t *testing.T) {
	e := setup(t, unkeyedSessions)
	mustRepoIn(t, e, "plain", "private")
	loc := e.startUpload(t, "plain/app")
	if us := e.uploads(t); len(us) != 1 || len(us[0].ID) != 32 || us[0].Offset != 0 {
		t.Fatalf("after POST: %+v", us)
	}
	blob := []byte("a blob")
	if r := e.do(t, "PUT", loc+"?digest="+digest.FromBytes(blob).String(), e.AdminKey, blob); r.StatusCode != 201 {
		t.Fatalf("PUT: %d %s", r.StatusCode, r.Body)
	}
	if us := e.uploads(t); len(us) != 0 {
		t.Fatalf("after PUT: %+v", us)
	}
	wantUnknown(t, "a completed session", e.do(t, "GET", loc, e.AdminKey, nil))
	loc = e.startUpload(t, "plain/app")
	if r := e.do(t, "DELETE", loc, e.AdminKey, nil); r.StatusCode != 204 {
		t.Fatalf("cancel: %d", r.StatusCode)
	}
	wantUnknown(t, "a cancelled session", e.do(t, "GET", loc, e.AdminKey, nil))
	if us := e.uploads(t); len(us) != 0 {
		t.Fatalf("after cancel: %+v", us)
	}
}

// TestUploadSessionsEndWithTheirRepository: an upload session is bound to
// its repository's ID (CONTRACT §18 decision 2). Deleting the repository
// deletes the sessions' records, and none of its sessions — stored,
// keyed without a record yet, or keyed with a chunk — continues in a
// repository created afterwards under the same name.
func TestUploadSessionsEndWithTheirRepository(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []regOption
	}{{"keyed", nil}, {"unkeyed", []regOption{unkeyedSessions}}} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, c.opts...)
			mustRepoIn(t, e, "doomed", "private")
			fresh := e.startUpload(t, "doomed/app")
			chunked := e.startUpload(t, "doomed/app")
			if r := e.do(t, "PATCH", chunked, e.AdminKey, []byte("hello"), "Content-Type", "application/octet-stream", "Content-Range", "0-4"); r.StatusCode != 202 {
				t.Fatalf("PATCH: %d %s", r.StatusCode, r.Body)
			}
			if us := e.uploads(t); len(us) == 0 {
				t.Fatal("no session record after a chunk")
			}
			if r := e.Do(t, "DELETE", "/v1/repositories/doomed", e.AdminKey, nil); r.StatusCode != 200 {
				t.Fatalf("delete repository: %d %s", r.StatusCode, r.Body)
			}
			if us := e.uploads(t); len(us) != 0 {
				t.Fatalf("session records outlived their repository: %+v", us)
			}
			mustRepoIn(t, e, "doomed", "private")
			blob := []byte("hello world")
			for _, loc := range []string{fresh, chunked} {
				wantUnknown(t, "GET on a session of the deleted repository", e.do(t, "GET", loc, e.AdminKey, nil))
				wantUnknown(t, "PATCH on a session of the deleted repository",
					e.do(t, "PATCH", loc, e.AdminKey, []byte(" world"), "Content-Type", "application/octet-stream"))
				wantUnknown(t, "PUT on a session of the deleted repository",
					e.do(t, "PUT", loc+"?digest="+digest.FromBytes(blob).String(), e.AdminKey, blob))
			}
			// The new repository's own sessions work.
			loc := e.startUpload(t, "doomed/app")
			if r := e.do(t, "PUT", loc+"?digest="+digest.FromBytes(blob).String(), e.AdminKey, blob); r.StatusCode != 201 {
				t.Fatalf("PUT in the new repository: %d %s", r.StatusCode, r.Body)
			}
		})
	}
}
