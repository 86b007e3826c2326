package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the rules added after the first engines: user
// management, name reservations, content digests, SemVer-equal versions,
// the repository binding of uploads, and the OCI registry's store.

func wantMessage(tb testing.TB, err error, code, message string) {
	tb.Helper()
	var e *chartctl.Error
	if !errors.As(err, &e) || e.Code != code || e.Message != message {
		tb.Fatalf("error = %v, want %s %q", err, code, message)
	}
}

func mustAdmin(tb testing.TB, s Store, email string) *chartctl.User {
	tb.Helper()
	u := &chartctl.User{Email: email, Admin: true}
	must(tb, s.CreateUser(ctx, u))
	return u
}

func boolp(b bool) *bool { return &b }

// credentials gives the user one of each credential: an API key, a
// dashboard session, an unredeemed authorization code and a grant with
// tokens (from a redeemed code). The hashes start with tag.
func credentials(tb testing.TB, s Store, u *chartctl.User, tag string) {
	tb.Helper()
	must(tb, s.CreateAPIKey(ctx, &chartctl.APIKey{UserID: u.ID, Name: "ci", Hash: []byte(tag + "-key")}))
	must(tb, s.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte(tag + "-session"), UserID: u.ID, ExpiresAt: base.Add(time.Hour)}))
	for _, c := range []string{"-code", "-used-code"} {
		must(tb, s.CreateAuthorizationCode(ctx, &chartctl.AuthorizationCode{
			Hash: []byte(tag + c), ClientID: "cli_1", UserID: u.ID, RedirectURI: "http://127.0.0.1/cb",
			Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, GrantID: tag + "-grant", ExpiresAt: base.Add(time.Minute),
		}))
	}
	must(tb, s.RedeemAuthorizationCode(ctx, []byte(tag+"-used-code"), base, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return []*chartctl.OAuthToken{
			{Hash: []byte(tag + "-access"), Kind: chartctl.AccessToken, GrantID: tag + "-grant", ClientID: "cli_1", UserID: u.ID, ExpiresAt: base.Add(time.Hour)},
			{Hash: []byte(tag + "-refresh"), Kind: chartctl.RefreshToken, GrantID: tag + "-grant", ClientID: "cli_1", UserID: u.ID, ExpiresAt: base.Add(2 * time.Hour)},
		}, nil
	}))
}

// wantCredentials checks whether the user's credentials of credentials
// still work.
func wantCredentials(tb testing.TB, s Store, tag string, alive bool) {
	tb.Helper()
	_, err := s.APIKeyByHash(ctx, []byte(tag+"-key"))
	_, serr := s.WebSession(ctx, []byte(tag+"-session"), base)
	cerr := s.RedeemAuthorizationCode(ctx, []byte(tag+"-code"), base, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return nil, chartctl.Errorf(chartctl.EINVALID, "probe")
	})
	if alive {
		must(tb, err)
		must(tb, serr)
		wantCode(tb, cerr, chartctl.EINVALID) // found, and the probe refused it
	} else {
		wantCode(tb, err, chartctl.ENOTFOUND)
		wantCode(tb, serr, chartctl.ENOTFOUND)
		wantCode(tb, cerr, chartctl.ENOTFOUND)
	}
	for _, h := range []string{"-access", "-refresh"} {
		if tok := mustToken(tb, s, tag+h); tok.Revoked == alive {
			tb.Fatalf("token %s%s: Revoked = %v, want %v", tag, h, tok.Revoked, !alive)
		}
	}
}

func testUserManagement(t *testing.T, open Open) {
	s := open(t)
	users, err := s.Users(ctx)
	must(t, err)
	if len(users) != 0 {
		t.Fatalf("Users of an empty store = %d", len(users))
	}
	mustUser(t, s, "carol@example.com")
	ada := mustAdmin(t, s, "Ada@example.com")
	bob := mustUser(t, s, "bob@example.com")
	users, err = s.Users(ctx)
	must(t, err)
	var emails []string
	for _, u := range users {
		emails = append(emails, u.Email)
	}
	wantStrings(t, "Users", emails, []string{"Ada@example.com", "bob@example.com", "carol@example.com"})
	if !users[0].Admin || users[0].Disabled || users[0].LastSeenAt != nil {
		t.Fatalf("Users[0] = %+v", users[0])
	}

	// TouchUser records a time that never moves back.
	seen := base.Add(time.Hour)
	must(t, s.TouchUser(ctx, bob.ID, seen))
	must(t, s.TouchUser(ctx, bob.ID, base))
	must(t, s.TouchUser(ctx, "usr_missing", seen))
	got, err := s.User(ctx, bob.ID)
	must(t, err)
	if got.LastSeenAt == nil {
		t.Fatal("LastSeenAt not recorded")
	}
	wantTime(t, "LastSeenAt", *got.LastSeenAt, seen)

	// Updates.
	_, err = s.UpdateUser(ctx, "usr_missing", chartctl.UserUpdate{Admin: boolp(true)})
	wantCode(t, err, chartctl.ENOTFOUND)
	hash := "argon2id$new"
	got, err = s.UpdateUser(ctx, bob.ID, chartctl.UserUpdate{PasswordHash: &hash, Admin: boolp(true)})
	must(t, err)
	if got.PasswordHash != hash || !got.Admin || got.Disabled || got.Email != "bob@example.com" {
		t.Fatalf("UpdateUser = %+v", got)
	}
	got, err = s.UserByEmail(ctx, "BOB@example.com")
	must(t, err)
	if got.PasswordHash != hash || !got.Admin {
		t.Fatalf("stored user = %+v", got)
	}

	// Disabling ends every credential of the user, and only theirs.
	credentials(t, s, bob, "bob")
	credentials(t, s, ada, "ada")
	got, err = s.UpdateUser(ctx, bob.ID, chartctl.UserUpdate{Disabled: boolp(true)})
	must(t, err)
	if !got.Disabled {
		t.Fatalf("UpdateUser(disable) = %+v", got)
	}
	wantCredentials(t, s, "bob", false)
	wantCredentials(t, s, "ada", true)
	keys, err := s.APIKeys(ctx, bob.ID)
	must(t, err)
	if len(keys) != 0 {
		t.Fatalf("a disabled user has %d API keys", len(keys))
	}
	got, err = s.UpdateUser(ctx, bob.ID, chartctl.UserUpdate{Disabled: boolp(false)})
	must(t, err)
	if got.Disabled {
		t.Fatal("re-enabled user still disabled")
	}

	// Deleting removes the user, their memberships and credentials;
	// what they created stays.
	carol, err := s.UserByEmail(ctx, "carol@example.com")
	must(t, err)
	mustOrg(t, s, "acme", carol.ID)
	mustTeam(t, s, "devs", "acme")
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "Carol@example.com", Role: chartctl.RoleMember}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "ada@example.com", Role: chartctl.RoleMember}))
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "carols", OwnerID: carol.ID}))
	credentials(t, s, carol, "carol")
	must(t, s.DeleteUser(ctx, carol.ID))
	wantCode(t, s.DeleteUser(ctx, carol.ID), chartctl.ENOTFOUND)
	_, err = s.User(ctx, carol.ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.UserByEmail(ctx, "carol@example.com")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantCredentials(t, s, "carol", false)
	members, err := s.Members(ctx, "devs")
	must(t, err)
	if len(members) != 1 || members[0].Email != "ada@example.com" {
		t.Fatalf("members after deleting carol = %+v", members)
	}
	if _, err := s.Organization(ctx, "acme"); err != nil {
		t.Fatalf("organization of a deleted user: %v", err)
	}
	if _, err := s.Repository(ctx, "carols"); err != nil {
		t.Fatalf("repository of a deleted user: %v", err)
	}
	n, err := s.UserCount(ctx)
	must(t, err)
	if n != 2 {
		t.Fatalf("UserCount = %d, want 2", n)
	}
	// The email is free again.
	mustUser(t, s, "carol@example.com")
}

func testLastAdmin(t *testing.T, open Open) {
	s := open(t)
	ada := mustAdmin(t, s, "ada@example.com")
	const last = "This is the last enabled server admin; make another user an admin first."
	_, err := s.UpdateUser(ctx, ada.ID, chartctl.UserUpdate{Disabled: boolp(true)})
	wantMessage(t, err, chartctl.ECONFLICT, last)
	_, err = s.UpdateUser(ctx, ada.ID, chartctl.UserUpdate{Admin: boolp(false)})
	wantCode(t, err, chartctl.ECONFLICT)
	wantCode(t, s.DeleteUser(ctx, ada.ID), chartctl.ECONFLICT)
	// A disabled admin does not count.
	bob := &chartctl.User{Email: "bob@example.com", Admin: true, Disabled: true}
	must(t, s.CreateUser(ctx, bob))
	_, err = s.UpdateUser(ctx, ada.ID, chartctl.UserUpdate{Disabled: boolp(true)})
	wantCode(t, err, chartctl.ECONFLICT)
	got, err := s.User(ctx, ada.ID)
	must(t, err)
	if got.Disabled || !got.Admin {
		t.Fatalf("a refused change was stored: %+v", got)
	}
	must(t, s.DeleteUser(ctx, bob.ID))

	// Two enabled admins disabling each other at once: one stays.
	for round := range 3 {
		x := mustAdmin(t, s, fmt.Sprintf("x%d@example.com", round))
		_, err := s.UpdateUser(ctx, ada.ID, chartctl.UserUpdate{Disabled: boolp(false)})
		must(t, err)
		ids := []string{ada.ID, x.ID}
		// Disable every other admin first, so that exactly ada and x are
		// the enabled admins.
		all, err := s.Users(ctx)
		must(t, err)
		for _, u := range all {
			if u.ID != ada.ID && u.ID != x.ID && u.Admin && !u.Disabled {
				_, err := s.UpdateUser(ctx, u.ID, chartctl.UserUpdate{Disabled: boolp(true)})
				must(t, err)
			}
		}
		errs := race(Racers, func(i int) error {
			_, err := s.UpdateUser(ctx, ids[i%2], chartctl.UserUpdate{Disabled: boolp(true)})
			return err
		})
		for _, err := range errs {
			if err != nil && chartctl.ErrorCode(err) != chartctl.ECONFLICT {
				t.Fatal(err)
			}
		}
		enabled := 0
		for _, id := range ids {
			u, err := s.User(ctx, id)
			must(t, err)
			if u.Admin && !u.Disabled {
				enabled++
			}
		}
		if enabled != 1 {
			t.Fatalf("round %d: %d enabled admins left, want 1", round, enabled)
		}
	}
}

func testNameReservation(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	bob := mustUser(t, s, "bob@example.com")
	mustOrg(t, s, "acme", ada.ID)
	notAvailable := func(name string) string { return fmt.Sprintf("The name %q is not available.", name) }

	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: ada.ID}))
	wantMessage(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: bob.ID}), chartctl.ECONFLICT, notAvailable("charts"))
	_, err := s.DeleteRepository(ctx, "charts")
	must(t, err)
	// Within the grace period another owner gets the same answer as for a
	// taken name; the owner gets the name back at once.
	wantMessage(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: bob.ID}), chartctl.ECONFLICT, notAvailable("charts"))
	wantMessage(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", Organization: "acme", OwnerID: ada.ID}), chartctl.ECONFLICT, notAvailable("charts"))
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: ada.ID}))

	// An organization's repository: any member of the organization may
	// take the name back, nobody else.
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "acme-charts", Organization: "acme", OwnerID: ada.ID}))
	_, err = s.DeleteRepository(ctx, "acme-charts")
	must(t, err)
	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "acme-charts", OwnerID: ada.ID}), chartctl.ECONFLICT)
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "acme-charts", Organization: "acme", OwnerID: bob.ID}))
	// Deleted again, it is reserved again.
	_, err = s.DeleteRepository(ctx, "acme-charts")
	must(t, err)
	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "acme-charts", OwnerID: bob.ID}), chartctl.ECONFLICT)
}

func testNeutralNameConflicts(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	mustOrg(t, s, "acme", ada.ID)
	mustTeam(t, s, "devs", "acme")
	mustRepo(t, s, "charts", "")
	wantMessage(t, s.CreateOrganization(ctx, &chartctl.Organization{Name: "acme"}), chartctl.ECONFLICT, `The name "acme" is not available.`)
	wantMessage(t, s.CreateTeam(ctx, &chartctl.Team{Name: "devs", Organization: "acme"}), chartctl.ECONFLICT, `The name "devs" is not available.`)
	wantMessage(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts"}), chartctl.ECONFLICT, `The name "charts" is not available.`)
}

func testContentDigest(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	first := chart("charts", "web", "1.0.0")
	first.ContentDigest = Digest("files")
	stored := mustPut(t, s, first)
	if stored.ContentDigest != first.ContentDigest {
		t.Fatalf("stored content digest = %q", stored.ContentDigest)
	}
	got, err := s.ChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if got.ContentDigest != first.ContentDigest {
		t.Fatalf("read content digest = %q", got.ContentDigest)
	}

	// The same files in other archive bytes: the stored record, not
	// created.
	again := chart("charts", "web", "1.0.0")
	again.Digest, again.ContentDigest = Digest("repacked"), Digest("files")
	got, created, orphans, err := s.PutChartVersion(ctx, again, chartctl.PutVersionOptions{})
	must(t, err)
	if created || len(orphans) != 0 || got.Digest != first.Digest || got.ContentDigest != first.ContentDigest {
		t.Fatalf("PutChartVersion(same content) = %+v created=%v orphans=%v", got, created, orphans)
	}
	// ... but with a provenance file, which signs the other bytes: conflict.
	signed := chart("charts", "web", "1.0.0")
	signed.Digest, signed.ContentDigest, signed.ProvDigest = Digest("repacked"), Digest("files"), Digest("repacked.prov")
	_, _, _, err = s.PutChartVersion(ctx, signed, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	// Other content: conflict, with a neutral message.
	other := chart("charts", "web", "1.0.0")
	other.Digest, other.ContentDigest = Digest("other"), Digest("other files")
	_, _, _, err = s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{})
	wantMessage(t, err, chartctl.ECONFLICT, "Chart web version 1.0.0 already exists with different content.")
	// Overwrite replaces it.
	got, created, orphans, err = s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if !created || got.Digest != other.Digest || got.ContentDigest != other.ContentDigest {
		t.Fatalf("overwrite = %+v created=%v", got, created)
	}
	wantStrings(t, "orphans", orphans, []string{first.Digest})

	// A version stored without a content digest is compared by digest.
	old := chart("charts", "api", "1.0.0")
	mustPut(t, s, old)
	same := chart("charts", "api", "1.0.0")
	same.ContentDigest = Digest("api files")
	if _, created, _, err := s.PutChartVersion(ctx, same, chartctl.PutVersionOptions{}); err != nil || created {
		t.Fatalf("same digest, new content digest: created=%v err=%v", created, err)
	}
	repacked := chart("charts", "api", "1.0.0")
	repacked.Digest, repacked.ContentDigest = Digest("api repacked"), Digest("api files")
	_, _, _, err = s.PutChartVersion(ctx, repacked, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
}

func testSemVerEqual(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	mustRepo(t, s, "other", "")
	mustPut(t, s, chart("charts", "web", "1.0.0"))
	want := func(version string) string {
		return fmt.Sprintf("Chart web version 1.0.0 already exists, and version %s is the same SemVer version (a leading \"v\" and build metadata after \"+\" do not make a new version). Use a new version number.", version)
	}
	for _, v := range []string{"v1.0.0", "1.0.0+build.7", "1.0", "v1"} {
		for _, overwrite := range []bool{false, true} {
			_, _, _, err := s.PutChartVersion(ctx, chart("charts", "web", v), chartctl.PutVersionOptions{Overwrite: overwrite})
			wantMessage(t, err, chartctl.ECONFLICT, want(v))
		}
	}
	// Not equal: a pre-release, another chart, another repository, and a
	// version that is not SemVer.
	mustPut(t, s, chart("charts", "web", "1.0.0-rc.1"))
	mustPut(t, s, chart("charts", "api", "v1.0.0"))
	mustPut(t, s, chart("other", "web", "v1.0.0"))
	mustPut(t, s, chart("charts", "web", "latest"))
	// After deleting the stored version, an equal one may take its place.
	_, _, err := s.DeleteChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	mustPut(t, s, chart("charts", "web", "v1.0.0"))
	_, _, _, err = s.PutChartVersion(ctx, chart("charts", "web", "1.0.0"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	// Deleting the repository forgets its versions.
	_, err = s.DeleteRepository(ctx, "other")
	must(t, err)
	mustRepo(t, s, "other", "")
	mustPut(t, s, chart("other", "web", "1.0.0"))

	// Racing SemVer-equal versions: exactly one is stored.
	variants := []string{"2.0.0", "v2.0.0", "2.0.0+a", "2.0.0+b", "v2.0.0+c"}
	errs := race(Racers, func(i int) error {
		_, _, _, err := s.PutChartVersion(ctx, chart("charts", "race", variants[i%len(variants)]), chartctl.PutVersionOptions{})
		return err
	})
	cvs, err := s.ChartVersions(ctx, "charts", chartctl.ChartFilter{Name: "race"})
	must(t, err)
	if len(cvs) != 1 {
		t.Fatalf("racing SemVer-equal versions stored %v", versionsOf(cvs))
	}
	for i, err := range errs {
		v := variants[i%len(variants)]
		if v == cvs[0].Version {
			must(t, err)
		} else {
			wantCode(t, err, chartctl.ECONFLICT)
		}
	}
}

func testRepositoryBinding(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	old := &chartctl.Repository{Name: "charts", OwnerID: ada.ID}
	must(t, s.CreateRepository(ctx, old))
	cv := chart("charts", "web", "1.0.0")
	cv.RepositoryID = old.ID
	stored := mustPut(t, s, cv)
	if stored.RepositoryID != "" {
		t.Fatalf("stored record keeps RepositoryID %q", stored.RepositoryID)
	}
	_, err := s.DeleteRepository(ctx, "charts")
	must(t, err)
	current := &chartctl.Repository{Name: "charts", OwnerID: ada.ID}
	must(t, s.CreateRepository(ctx, current))
	late := chart("charts", "web", "2.0.0")
	late.RepositoryID = old.ID
	_, _, _, err = s.PutChartVersion(ctx, late, chartctl.PutVersionOptions{})
	wantMessage(t, err, chartctl.ENOTFOUND, `Repository "charts" was deleted while the chart was being uploaded; nothing was stored.`)
	cvs, err := s.ChartVersions(ctx, "charts", chartctl.ChartFilter{})
	must(t, err)
	if len(cvs) != 0 {
		t.Fatalf("stored %v in the new repository", versionsOf(cvs))
	}
	late.RepositoryID = current.ID
	mustPut(t, s, late)
}

// manifest returns a manifest of name referring to blobs, with content
// derived from its arguments.
func manifest(name string, blobs ...string) *chartctl.OCIManifest {
	content := []byte(`{"schemaVersion":2,"layers":"` + strings.Join(blobs, ",") + `","name":"` + name + `"}`)
	return &chartctl.OCIManifest{
		Name: name, Digest: Digest(string(content)), MediaType: "application/vnd.oci.image.manifest.v1+json",
		ArtifactType: "application/vnd.example", Blobs: blobs, Content: content,
	}
}

func testOCIBlobLinks(t *testing.T, open Open) {
	s := open(t)
	d1, d2 := Digest("layer1"), Digest("layer2")
	_, err := s.BlobLink(ctx, "charts/web", d1)
	wantCode(t, err, chartctl.ENOTFOUND)
	must(t, s.LinkBlob(ctx, "charts/web", d1, 10))
	must(t, s.LinkBlob(ctx, "charts/api", d1, 10))
	must(t, s.LinkBlob(ctx, "charts/web", d2, 20))
	l, err := s.BlobLink(ctx, "charts/web", d2)
	must(t, err)
	if l.Name != "charts/web" || l.Digest != d2 || l.Size != 20 || l.LinkedAt.IsZero() {
		t.Fatalf("BlobLink = %+v", l)
	}
	names, err := s.BlobNames(ctx, d1)
	must(t, err)
	wantStrings(t, "BlobNames", names, []string{"charts/api", "charts/web"})
	for _, d := range []string{d1, d2} {
		ok, err := s.BlobReferenced(ctx, d)
		must(t, err)
		if !ok {
			t.Fatalf("linked blob %s not referenced", d)
		}
	}
	all, err := s.Names(ctx)
	must(t, err)
	wantStrings(t, "Names", all, []string{"charts/api", "charts/web"})
	// LinkBlobs links several at once, the same link twice included.
	d3 := Digest("layer3")
	must(t, s.LinkBlobs(ctx, []chartctl.OCIBlobLink{
		{Name: "charts/db", Digest: d3, Size: 30}, {Name: "charts/web", Digest: d3, Size: 30}, {Name: "charts/db", Digest: d3, Size: 30}}))
	names, err = s.BlobNames(ctx, d3)
	must(t, err)
	wantStrings(t, "BlobNames after LinkBlobs", names, []string{"charts/db", "charts/web"})
	if l, err := s.BlobLink(ctx, "charts/db", d3); err != nil || l.Size != 30 || l.LinkedAt.IsZero() {
		t.Fatalf("BlobLink after LinkBlobs = %+v, %v", l, err)
	}
	must(t, s.UnlinkBlob(ctx, "charts/db", d3))
	must(t, s.UnlinkBlob(ctx, "charts/web", d3))

	// A manifest's blobs are not garbage; the others are, once old enough.
	m := manifest("charts/web", d1)
	must(t, s.PutManifest(ctx, m, ""))
	links, err := s.UnreferencedLinks(ctx, time.Now().Add(time.Hour))
	must(t, err)
	var got []string
	for _, l := range links {
		got = append(got, l.Name+"@"+l.Digest)
	}
	slicesSort(got)
	want := []string{"charts/api@" + d1, "charts/web@" + d2}
	slicesSort(want)
	wantStrings(t, "UnreferencedLinks", got, want)
	links, err = s.UnreferencedLinks(ctx, time.Now().Add(-time.Hour))
	must(t, err)
	if len(links) != 0 {
		t.Fatalf("UnreferencedLinks before the links were made = %d", len(links))
	}

	wantCode(t, s.UnlinkBlob(ctx, "charts/none", d1), chartctl.ENOTFOUND)
	must(t, s.UnlinkBlob(ctx, "charts/api", d1))
	must(t, s.UnlinkBlob(ctx, "charts/web", d2))
	wantCode(t, s.UnlinkBlob(ctx, "charts/web", d2), chartctl.ENOTFOUND)
	ok, err := s.BlobReferenced(ctx, d2)
	must(t, err)
	if ok {
		t.Fatal("unlinked blob still referenced")
	}
	names, err = s.BlobNames(ctx, d2)
	must(t, err)
	if len(names) != 0 {
		t.Fatalf("BlobNames of an unlinked blob = %v", names)
	}
}

func testOCIManifests(t *testing.T, open Open) {
	s := open(t)
	cfg, layer := Digest("config"), Digest("layer")
	m := manifest("charts/web", cfg, layer)
	var unknown *chartctl.UnknownReferenceError
	if err := s.PutManifest(ctx, m, "v1"); !errors.As(err, &unknown) || unknown.Digest != cfg || unknown.Manifest {
		t.Fatalf("PutManifest without blobs = %v", err)
	}
	must(t, s.LinkBlob(ctx, "charts/web", cfg, 2))
	if err := s.PutManifest(ctx, m, "v1"); !errors.As(err, &unknown) || unknown.Digest != layer {
		t.Fatalf("PutManifest without its layer = %v", err)
	}
	must(t, s.LinkBlob(ctx, "charts/web", layer, 5))
	// A blob linked in another name does not count.
	other := manifest("charts/api", cfg)
	if err := s.PutManifest(ctx, other, ""); !errors.As(err, &unknown) {
		t.Fatalf("PutManifest with a blob of another name = %v", err)
	}
	m.Annotations = map[string]string{"org.opencontainers.image.title": "web"}
	must(t, s.PutManifest(ctx, m, "v1"))
	if m.CreatedAt.IsZero() {
		t.Fatal("PutManifest did not fill CreatedAt")
	}
	first := m.CreatedAt
	got, err := s.Manifest(ctx, "charts/web", m.Digest)
	must(t, err)
	if got.Name != m.Name || got.Digest != m.Digest || got.MediaType != m.MediaType || got.ArtifactType != m.ArtifactType ||
		string(got.Content) != string(m.Content) || got.Size() != int64(len(m.Content)) || got.Chart != nil || got.Subject != "" ||
		got.Annotations["org.opencontainers.image.title"] != "web" || len(got.Annotations) != 1 {
		t.Fatalf("Manifest = %+v", got)
	}
	wantStrings(t, "Blobs", got.Blobs, []string{cfg, layer})
	wantTime(t, "CreatedAt", got.CreatedAt, first)
	_, err = s.Manifest(ctx, "charts/api", m.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)

	// Storing it again keeps the record and moves or adds tags.
	again := manifest("charts/web", cfg, layer)
	again.CreatedAt = first.Add(time.Hour)
	must(t, s.PutManifest(ctx, again, "latest"))
	wantTime(t, "CreatedAt of a re-push", again.CreatedAt, first)
	for _, tag := range []string{"v1", "latest"} {
		d, err := s.Tag(ctx, "charts/web", tag)
		must(t, err)
		if d != m.Digest {
			t.Fatalf("Tag(%s) = %s", tag, d)
		}
	}
	_, err = s.Tag(ctx, "charts/web", "v9")
	wantCode(t, err, chartctl.ENOTFOUND)
	// TaggedManifest reads the tag and its manifest at once.
	wantTagged := func(name, tag string, want *chartctl.OCIManifest) {
		t.Helper()
		got, err := s.TaggedManifest(ctx, name, tag)
		if want == nil {
			wantCode(t, err, chartctl.ENOTFOUND)
			return
		}
		must(t, err)
		if got.Name != want.Name || got.Digest != want.Digest || got.MediaType != want.MediaType || string(got.Content) != string(want.Content) {
			t.Fatalf("TaggedManifest(%s, %s) = %+v, want %s", name, tag, got, want.Digest)
		}
		wantStrings(t, "TaggedManifest's blobs", got.Blobs, want.Blobs)
	}
	wantTagged("charts/web", "v1", m)
	wantTagged("charts/web", "latest", m)
	wantTagged("charts/web", "v9", nil)
	wantTagged("charts/api", "v1", nil)

	// Tags list in lexical order, paginated.
	m2 := manifest("charts/web", cfg)
	for _, tag := range []string{"a", "b", "c"} {
		must(t, s.PutManifest(ctx, m2, tag))
	}
	wantTagged("charts/web", "c", m2)
	// A moved tag reads its new manifest.
	must(t, s.PutManifest(ctx, m, "c"))
	wantTagged("charts/web", "c", m)
	must(t, s.PutManifest(ctx, m2, "c"))
	wantTagged("charts/web", "c", m2)
	tags, more, err := s.Tags(ctx, "charts/web", "", -1)
	must(t, err)
	wantStrings(t, "Tags", tags, []string{"a", "b", "c", "latest", "v1"})
	if more {
		t.Fatal("more = true for all tags")
	}
	tags, more, err = s.Tags(ctx, "charts/web", "", 2)
	must(t, err)
	wantStrings(t, "Tags(n=2)", tags, []string{"a", "b"})
	if !more {
		t.Fatal("more = false with tags left")
	}
	tags, more, err = s.Tags(ctx, "charts/web", "b", 2)
	must(t, err)
	wantStrings(t, "Tags(last=b)", tags, []string{"c", "latest"})
	if !more {
		t.Fatal("more = false with v1 left")
	}
	tags, more, err = s.Tags(ctx, "charts/web", "latest", 5)
	must(t, err)
	wantStrings(t, "Tags(last=latest)", tags, []string{"v1"})
	if more {
		t.Fatal("more = true at the end")
	}
	tags, _, err = s.Tags(ctx, "charts/none", "", -1)
	must(t, err)
	if tags == nil || len(tags) != 0 {
		t.Fatalf("Tags of an unknown name = %#v, want empty", tags)
	}
	wantCode(t, s.DeleteTag(ctx, "charts/web", "nope"), chartctl.ENOTFOUND)
	must(t, s.DeleteTag(ctx, "charts/web", "a"))
	wantTagged("charts/web", "a", nil)
	_, err = s.Manifest(ctx, "charts/web", m2.Digest)
	must(t, err)

	// Referrers: manifests whose subject is a manifest, by digest.
	var refs []*chartctl.OCIManifest
	for i := range 3 {
		r := manifest("charts/web", cfg)
		r.Content = append(r.Content, byte('0'+i))
		r.Digest = Digest(string(r.Content))
		r.Subject = m.Digest
		r.ArtifactType = fmt.Sprintf("application/vnd.sig.%d", i)
		must(t, s.PutManifest(ctx, r, ""))
		refs = append(refs, r)
	}
	got2, err := s.Referrers(ctx, "charts/web", m.Digest)
	must(t, err)
	var gotDigests, wantDigests []string
	for _, r := range got2 {
		gotDigests = append(gotDigests, r.Digest)
		if r.Subject != m.Digest {
			t.Fatalf("referrer subject = %s", r.Subject)
		}
	}
	for _, r := range refs {
		wantDigests = append(wantDigests, r.Digest)
	}
	slicesSort(wantDigests)
	wantStrings(t, "Referrers", gotDigests, wantDigests)
	got2, err = s.Referrers(ctx, "charts/api", m.Digest)
	must(t, err)
	if len(got2) != 0 {
		t.Fatalf("referrers in another name = %d", len(got2))
	}

	// An index refers to manifests of its name.
	idx := &chartctl.OCIManifest{Name: "charts/web", Digest: Digest("index"), MediaType: "application/vnd.oci.image.index.v1+json",
		Manifests: []string{m.Digest, Digest("missing manifest")}, Content: []byte("index")}
	if err := s.PutManifest(ctx, idx, ""); !errors.As(err, &unknown) || !unknown.Manifest || unknown.Digest != Digest("missing manifest") {
		t.Fatalf("PutManifest(index with a missing manifest) = %v", err)
	}
	idx.Manifests = []string{m.Digest, m2.Digest}
	must(t, s.PutManifest(ctx, idx, "multi"))
	got, err = s.Manifest(ctx, "charts/web", idx.Digest)
	must(t, err)
	wantStrings(t, "Manifests", got.Manifests, idx.Manifests)

	// Deleting a manifest deletes its tags and frees its blobs for
	// garbage collection.
	_, err = s.DeleteManifest(ctx, "charts/web", Digest("nope"))
	wantCode(t, err, chartctl.ENOTFOUND)
	del, err := s.DeleteManifest(ctx, "charts/web", m.Digest)
	must(t, err)
	if del.Digest != m.Digest || string(del.Content) != string(m.Content) {
		t.Fatalf("DeleteManifest = %+v", del)
	}
	_, err = s.Manifest(ctx, "charts/web", m.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
	for _, tag := range []string{"v1", "latest"} {
		_, err = s.Tag(ctx, "charts/web", tag)
		wantCode(t, err, chartctl.ENOTFOUND)
		wantTagged("charts/web", tag, nil)
	}
	// A tag moved away from the deleted manifest and back stays.
	wantTagged("charts/web", "c", m2)
	d, err := s.Tag(ctx, "charts/web", "b")
	must(t, err)
	if d != m2.Digest {
		t.Fatalf("Tag(b) = %s", d)
	}
	links, err := s.UnreferencedLinks(ctx, time.Now().Add(time.Hour))
	must(t, err)
	if len(links) != 1 || links[0].Digest != layer {
		t.Fatalf("UnreferencedLinks after deleting the manifest = %+v", links)
	}
	names, err := s.Names(ctx)
	must(t, err)
	wantStrings(t, "Names", names, []string{"charts/web"})
}

func slicesSort(ss []string) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j] < ss[j-1]; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

func testOCIChartManifests(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	cv := chart("charts", "web", "1.0.0")
	mustPut(t, s, cv)
	cfg := Digest("chart config")
	must(t, s.LinkBlob(ctx, "charts/web", cfg, 3))
	must(t, s.LinkBlob(ctx, "charts/web", cv.Digest, cv.Size))
	m := manifest("charts/web", cfg, cv.Digest)
	m.Chart = &chartctl.OCIChartRef{Repository: "charts", Name: "web", Version: "1.0.0"}
	must(t, s.PutManifest(ctx, m, "1.0.0"))
	got, err := s.ChartManifest(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if got.Digest != m.Digest || got.Chart == nil || *got.Chart != *m.Chart {
		t.Fatalf("ChartManifest = %+v", got)
	}
	_, err = s.ChartManifest(ctx, "charts", "web", "2.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)

	// A new manifest for the same version replaces the old one.
	m2 := manifest("charts/web", cv.Digest)
	m2.Chart = m.Chart
	must(t, s.PutManifest(ctx, m2, "1.0.0"))
	wantManifestReplaced(t, s, "1.0.0", m.Digest, m2.Digest)

	// Replacing the version's archive deletes its manifest.
	repl := chart("charts", "web", "1.0.0")
	repl.Digest = Digest("replacement")
	_, _, _, err = s.PutChartVersion(ctx, repl, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	_, err = s.ChartManifest(ctx, "charts", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Manifest(ctx, "charts/web", m2.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Tag(ctx, "charts/web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)

	// Deleting the version deletes its manifest in the same transaction;
	// the blob stays referenced while the name holds it.
	m3 := manifest("charts/web", cv.Digest, cfg)
	m3.Chart = m.Chart
	must(t, s.PutManifest(ctx, m3, "1.0.0"))
	_, orphans, err := s.DeleteChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	wantStrings(t, "orphans", orphans, []string{repl.Digest})
	_, err = s.ChartManifest(ctx, "charts", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Manifest(ctx, "charts/web", m3.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
	ok, err := s.BlobReferenced(ctx, cv.Digest)
	must(t, err)
	if !ok {
		t.Fatal("a blob still linked in an OCI name is not referenced")
	}
}

// testOCIChartAlternateManifest: a chart version may hold a second
// manifest beside its first (decision 10: Helm's, pushed for a version
// uploaded by /v1). The alternate is found by its digest, not as the
// version's manifest; a first manifest stored later does not replace it;
// it is exported with its mark; and deleting the version deletes it.
func testOCIChartAlternateManifest(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	cv := chart("charts", "web", "1.0.0")
	mustPut(t, s, cv)
	cfg := Digest("alternate config")
	must(t, s.LinkBlob(ctx, "charts/web", cfg, 3))
	must(t, s.LinkBlob(ctx, "charts/web", cv.Digest, cv.Size))
	ref := &chartctl.OCIChartRef{Repository: "charts", Name: "web", Version: "1.0.0"}
	alt := manifest("charts/web", cfg, cv.Digest)
	alt.Chart, alt.Alternate = ref, true
	must(t, s.PutManifest(ctx, alt, ""))
	_, err := s.ChartManifest(ctx, "charts", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	got, err := s.Manifest(ctx, "charts/web", alt.Digest)
	must(t, err)
	if !got.Alternate || got.Chart == nil || *got.Chart != *ref {
		t.Fatalf("alternate manifest = %+v", got)
	}
	// A first manifest goes beside it.
	first := manifest("charts/web", cv.Digest)
	first.Chart = ref
	must(t, s.PutManifest(ctx, first, "1.0.0"))
	got, err = s.ChartManifest(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if got.Digest != first.Digest || got.Alternate {
		t.Fatalf("ChartManifest = %+v, want the first", got)
	}
	_, err = s.Manifest(ctx, "charts/web", alt.Digest)
	must(t, err)
	if ex, ok := s.(chartctl.Exporter); ok {
		var exported bool
		must(t, ex.Export(ctx, nil, func(r chartctl.DumpRecord) error {
			if m := r.OCIManifest; m != nil && m.Digest == alt.Digest {
				exported = m.Alternate && m.Chart != nil
			}
			return nil
		}))
		if !exported {
			t.Fatal("the export lacks the alternate manifest or its mark")
		}
	}
	// Deleting the version deletes both.
	_, _, err = s.DeleteChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	for _, d := range []string{alt.Digest, first.Digest} {
		_, err = s.Manifest(ctx, "charts/web", d)
		wantCode(t, err, chartctl.ENOTFOUND)
	}
}

// testOCIChartPushedWithManifest: a chart version put with its OCI
// manifest stores both in one transaction, or neither.
func testOCIChartPushedWithManifest(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	cv := chart("charts", "web", "1.0.0+build.1")
	cfg := Digest("chart config")
	must(t, s.LinkBlob(ctx, "charts/web", cv.Digest, cv.Size))

	// The config blob is not linked: neither the version nor the manifest.
	m := manifest("charts/web", cfg, cv.Digest)
	_, _, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{Manifest: m, Tag: "1.0.0_build.1"})
	var ue *chartctl.UnknownReferenceError
	if !errors.As(err, &ue) || ue.Digest != cfg {
		t.Fatalf("put with a manifest of an unlinked blob: %v, want an UnknownReferenceError for %s", err, cfg)
	}
	_, err = s.ChartVersion(ctx, "charts", "web", "1.0.0+build.1")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Manifest(ctx, "charts/web", m.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)

	must(t, s.LinkBlob(ctx, "charts/web", cfg, 3))
	stored, created, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{Manifest: m, Tag: "1.0.0_build.1"})
	must(t, err)
	if !created || stored.Version != "1.0.0+build.1" {
		t.Fatalf("put = %+v created=%v", stored, created)
	}
	want := chartctl.OCIChartRef{Repository: "charts", Name: "web", Version: "1.0.0+build.1"}
	got, err := s.ChartManifest(ctx, "charts", "web", "1.0.0+build.1")
	must(t, err)
	if got.Digest != m.Digest || got.Chart == nil || *got.Chart != want {
		t.Fatalf("ChartManifest = %+v", got)
	}
	if d, err := s.Tag(ctx, "charts/web", "1.0.0_build.1"); err != nil || d != m.Digest {
		t.Fatalf("Tag = %q, %v; want %s", d, err, m.Digest)
	}

	// The same content again with another manifest (other annotations):
	// the version stays, the new manifest replaces the old one.
	m2 := manifest("charts/web", cv.Digest, cfg)
	_, created, _, err = s.PutChartVersion(ctx, chart("charts", "web", "1.0.0+build.1"), chartctl.PutVersionOptions{Manifest: m2, Tag: "1.0.0_build.1"})
	must(t, err)
	if created {
		t.Fatal("the same content again was created")
	}
	wantManifestReplaced(t, s, "1.0.0+build.1", m.Digest, m2.Digest)

	// A conflict stores no manifest either.
	other := chart("charts", "web", "1.0.0+build.1")
	other.Digest, other.ContentDigest = Digest("other"), Digest("other content")
	m3 := manifest("charts/web", cv.Digest)
	_, _, _, err = s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{Manifest: m3, Tag: "1.0.0_build.1"})
	wantCode(t, err, chartctl.ECONFLICT)
	_, err = s.Manifest(ctx, "charts/web", m3.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
}

// testOCIChartPushWritesItsChange: a new chart version put with its OCI
// manifest writes, in its transaction, the change it carries (the audit
// entry, the event and a delivery to each webhook that wants it) and
// counts against the quota; past the quota it stores nothing at all.
func testOCIChartPushWritesItsChange(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	must(t, s.SetQuota(ctx, chartctl.QuotaRepository, "charts", chartctl.Quota{MaxVersions: ptr(int64(1))}))
	hook := mustWebhook(t, s, &chartctl.Webhook{Repository: "charts", URL: "https://hooks.example.com", Events: []string{"chart.pushed"}, Active: true})
	put := func(version, event string) (*chartctl.OCIManifest, error) {
		cv := chart("charts", "web", version)
		cfg := Digest("config of " + version)
		must(t, s.LinkBlob(ctx, "charts/web", cv.Digest, cv.Size))
		must(t, s.LinkBlob(ctx, "charts/web", cfg, 3))
		m := manifest("charts/web", cfg, cv.Digest)
		_, _, _, err := s.PutChartVersion(withChange("chart.push", "charts/web/"+version, chartctl.EventChartPushed, event, "charts"),
			cv, chartctl.PutVersionOptions{Manifest: m, Tag: version})
		return m, err
	}
	m, err := put("1.0.0", "evt_first")
	must(t, err)
	if d, err := s.Tag(ctx, "charts/web", "1.0.0"); err != nil || d != m.Digest {
		t.Fatalf("Tag = %q, %v; want %s", d, err, m.Digest)
	}
	wantStrings(t, "deliveries", eventIDs(deliveries(t, s, hook.ID)), []string{"evt_first"})
	wantStrings(t, "audit actions", auditActions(t, s), []string{"chart.push"})
	_, u, err := s.Quota(ctx, chartctl.QuotaRepository, "charts")
	must(t, err)
	if u.Versions != 1 {
		t.Fatalf("usage = %+v, want 1 version", u)
	}

	// Past the quota: no version, manifest, tag, entry, event or delivery.
	m2, err := put("1.0.1", "evt_second")
	wantCode(t, err, chartctl.EQUOTA)
	_, err = s.ChartVersion(ctx, "charts", "web", "1.0.1")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Manifest(ctx, "charts/web", m2.Digest)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Tag(ctx, "charts/web", "1.0.1")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantStrings(t, "deliveries", eventIDs(deliveries(t, s, hook.ID)), []string{"evt_first"})
	wantStrings(t, "audit actions", auditActions(t, s), []string{"chart.push"})
	if _, u, err := s.Quota(ctx, chartctl.QuotaRepository, "charts"); err != nil || u.Versions != 1 {
		t.Fatalf("usage = %+v, %v; want 1 version", u, err)
	}
}

func testOCIUploads(t *testing.T, open Open) {
	s := open(t)
	_, err := s.Upload(ctx, "up1")
	wantCode(t, err, chartctl.ENOTFOUND)
	u1 := &chartctl.OCIUpload{ID: "up1", Name: "charts/web", CreatedAt: base}
	must(t, s.CreateUpload(ctx, u1))
	u2 := &chartctl.OCIUpload{ID: "up2", Name: "charts/api", CreatedAt: base.Add(-time.Minute)}
	must(t, s.CreateUpload(ctx, u2))
	if u1.UpdatedAt.IsZero() {
		t.Fatal("CreateUpload did not fill UpdatedAt")
	}
	got, err := s.Upload(ctx, "up1")
	must(t, err)
	if got.ID != "up1" || got.Name != "charts/web" || got.Offset != 0 {
		t.Fatalf("Upload = %+v", got)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, base)
	must(t, s.AdvanceUpload(ctx, "up1", 0, 100))
	wantCode(t, s.AdvanceUpload(ctx, "up1", 0, 50), chartctl.ECONFLICT)
	wantCode(t, s.AdvanceUpload(ctx, "nope", 0, 50), chartctl.ENOTFOUND)
	got, err = s.Upload(ctx, "up1")
	must(t, err)
	if got.Offset != 100 {
		t.Fatalf("Offset = %d, want 100", got.Offset)
	}
	// Concurrent chunks at one offset: one advances it.
	errs := race(Racers, func(i int) error { return s.AdvanceUpload(ctx, "up1", 100, int64(200+i)) })
	wantWinner(t, errs, chartctl.ECONFLICT)

	ups, err := s.Uploads(ctx)
	must(t, err)
	if len(ups) != 2 || ups[0].ID != "up2" || ups[1].ID != "up1" {
		t.Fatalf("Uploads = %+v", ups)
	}
	must(t, s.DeleteUpload(ctx, "up1"))
	wantCode(t, s.DeleteUpload(ctx, "up1"), chartctl.ENOTFOUND)
	ups, err = s.Uploads(ctx)
	must(t, err)
	if len(ups) != 1 {
		t.Fatalf("Uploads after a delete = %d", len(ups))
	}
}

func testOCIDeleteRepository(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	mustRepo(t, s, "charts2", "")
	shared, own, other := Digest("shared layer"), Digest("own layer"), Digest("other layer")
	must(t, s.LinkBlob(ctx, "charts/web", shared, 1))
	must(t, s.LinkBlob(ctx, "charts", own, 1))
	must(t, s.LinkBlob(ctx, "charts2/web", shared, 1))
	must(t, s.LinkBlob(ctx, "charts2/web", other, 1))
	must(t, s.PutManifest(ctx, manifest("charts/web", shared), "v1"))
	must(t, s.PutManifest(ctx, manifest("charts2/web", shared, other), "v1"))
	orphans, err := s.DeleteRepository(ctx, "charts")
	must(t, err)
	wantStrings(t, "orphans", orphans, []string{own})
	names, err := s.Names(ctx)
	must(t, err)
	wantStrings(t, "Names", names, []string{"charts2/web"})
	_, err = s.Tag(ctx, "charts/web", "v1")
	wantCode(t, err, chartctl.ENOTFOUND)
	ok, err := s.BlobReferenced(ctx, shared)
	must(t, err)
	if !ok {
		t.Fatal("a blob another repository holds is not referenced")
	}
	ok, err = s.BlobReferenced(ctx, own)
	must(t, err)
	if ok {
		t.Fatal("a blob of the deleted repository is still referenced")
	}
	if _, err := s.Tag(ctx, "charts2/web", "v1"); err != nil {
		t.Fatalf("tag of the other repository: %v", err)
	}
}

func testOCIConcurrency(t *testing.T, open Open) {
	s := open(t)
	cfg := Digest("cfg")
	must(t, s.LinkBlob(ctx, "charts/web", cfg, 1))
	// The same manifest pushed at once under many tags: one record, every
	// tag.
	m := manifest("charts/web", cfg)
	errs := race(Racers, func(i int) error {
		mi := *m
		return s.PutManifest(ctx, &mi, fmt.Sprintf("t%02d", i))
	})
	for _, err := range errs {
		must(t, err)
	}
	tags, _, err := s.Tags(ctx, "charts/web", "", -1)
	must(t, err)
	if len(tags) != Racers {
		t.Fatalf("%d tags, want %d", len(tags), Racers)
	}
	// Links at once, of one blob to many names and many blobs to one.
	errs = race(Racers, func(i int) error {
		if i%2 == 0 {
			return s.LinkBlob(ctx, fmt.Sprintf("charts/n%02d", i), cfg, 1)
		}
		return s.LinkBlob(ctx, "charts/web", Digest(fmt.Sprint(i)), 1)
	})
	for _, err := range errs {
		must(t, err)
	}
	names, err := s.BlobNames(ctx, cfg)
	must(t, err)
	if len(names) != Racers/2+1 {
		t.Fatalf("BlobNames = %d names, want %d", len(names), Racers/2+1)
	}
}

// wantManifestReplaced checks that version of chart charts/web has the
// manifest now and that the manifest old it replaced is gone.
func wantManifestReplaced(t *testing.T, s Store, version, old, now string) {
	t.Helper()
	got, err := s.ChartManifest(ctx, "charts", "web", version)
	must(t, err)
	if got.Digest != now {
		t.Fatalf("ChartManifest after a re-push = %s, want %s", got.Digest, now)
	}
	_, err = s.Manifest(ctx, "charts/web", old)
	wantCode(t, err, chartctl.ENOTFOUND)
}
