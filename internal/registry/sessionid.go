package registry

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Upload session IDs.
//
// Without Registry.SessionKey, a session ID is 16 random bytes in hex and
// POST stores the session's record at once.
//
// With a SessionKey, POST stores nothing: the ID carries when the session
// started and a MAC of that, a random part and the name, so the registry
// (this replica after a restart, or another replica with the same key)
// knows it for a session of that name at offset 0. The push every OCI
// client makes — POST, then one PUT of the whole blob (oras-go, so Helm,
// and crane) — then costs one durable write, the blob's, as a monolithic
// POST does; before, the session's record was stored at the POST and
// deleted at the PUT, two more store commits per blob.
//
// A keyed session gets its record when there is something to keep: its
// first chunk (PATCH, or a PUT with Content-Range), its cancel, or the end
// of a chunked upload. A record of offset -1 (chartctl.OCIUpload) closes
// the ID: it is refused until garbage collection removes the record after
// the session expiry, by which time the ID has expired as well. A keyed
// session that ended with one whole-blob PUT leaves no record: its URL
// takes the same PUT again until it expires, which stores the same blob
// (a client's retry of a PUT whose answer it lost succeeds).

const (
	keyedIDRandom = 12
	keyedIDMAC    = 16
	keyedIDBytes  = 8 + keyedIDRandom + keyedIDMAC
	keyedIDLen    = (keyedIDBytes*8 + 5) / 6 // base64url without padding
	plainIDLen    = 32
)

// newID returns a new unguessable identifier for an unkeyed session.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// validID reports whether id has a form newID or newKeyedID gives (so it
// is safe as a file name and an object key).
func validID(id string) bool {
	switch len(id) {
	case plainIDLen:
		_, err := hex.DecodeString(id)
		return err == nil
	case keyedIDLen:
		_, err := base64.RawURLEncoding.DecodeString(id)
		return err == nil
	}
	return false
}

// keyedID reports whether id is of the keyed form (its record, if any,
// closes it rather than being deleted).
func keyedID(id string) bool { return len(id) == keyedIDLen }

// sessionMAC is the MAC of a keyed ID's first bytes for name in the
// repository repoID: the ID stands for a session of that repository only,
// so one deleted and re-created under the same name (another ID) does not
// continue the sessions of the first (CONTRACT §18 decision 2).
func (r *Registry) sessionMAC(name, repoID string, head []byte) []byte {
	m := hmac.New(sha256.New, r.SessionKey)
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write([]byte(repoID))
	m.Write([]byte{0})
	m.Write(head)
	return m.Sum(nil)[:keyedIDMAC]
}

// newKeyedID returns the ID of a new keyed session of name in the
// repository repoID, started now.
func (r *Registry) newKeyedID(name, repoID string, now time.Time) (string, error) {
	var b [keyedIDBytes]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixNano()))
	if _, err := rand.Read(b[8 : 8+keyedIDRandom]); err != nil {
		return "", err
	}
	copy(b[8+keyedIDRandom:], r.sessionMAC(name, repoID, b[:8+keyedIDRandom]))
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// keyedSession returns the session a keyed ID without a record stands
// for — name's in repository repoID, at offset 0, started when the ID
// says — or nil when id is not a keyed ID this registry's key made for
// name in that repository.
func (r *Registry) keyedSession(name, repoID, id string) *chartctl.OCIUpload {
	if len(r.SessionKey) == 0 || !keyedID(id) {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(b) != keyedIDBytes {
		return nil
	}
	head := b[:8+keyedIDRandom]
	if !hmac.Equal(b[8+keyedIDRandom:], r.sessionMAC(name, repoID, head)) {
		return nil
	}
	started := time.Unix(0, int64(binary.BigEndian.Uint64(b[:8]))).UTC()
	return &chartctl.OCIUpload{ID: id, Name: name, RepositoryID: repoID, CreatedAt: started, UpdatedAt: started}
}
