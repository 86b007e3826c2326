package trust

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"helm.sh/helm/v4/pkg/provenance"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ParseKeyring reads an OpenPGP public keyring, armored (one block or
// several concatenated exports) or binary, as `helm verify --keyring`
// takes it.
func ParseKeyring(data []byte) (openpgp.EntityList, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("-----BEGIN ")) {
		ring, err := openpgp.ReadKeyRing(bytes.NewReader(data))
		if err == nil && len(ring) == 0 {
			err = errors.New("no keys found")
		}
		return ring, err
	}
	var ring openpgp.EntityList
	r := bytes.NewReader(data)
	for {
		block, err := armor.Decode(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if block.Type != openpgp.PublicKeyType {
			return nil, fmt.Errorf("expected a public key block, got %q", block.Type)
		}
		entities, err := openpgp.ReadKeyRing(block.Body)
		if err != nil {
			return nil, err
		}
		ring = append(ring, entities...)
	}
	if len(ring) == 0 {
		return nil, errors.New("no keys found")
	}
	return ring, nil
}

// verifyProvenance checks a Helm provenance file against a pgp entry with
// Helm's own provenance package: the signature by a key of the keyring,
// and the archive's SHA-256 in the signed message.
func verifyProvenance(e *chartctl.TrustEntry, archive []byte, archiveName string, prov []byte) (string, bool, string) {
	ring, err := ParseKeyring(e.Key)
	if err != nil {
		return "", false, fmt.Sprintf("trust entry %q holds no usable keyring: %v", e.Name, err)
	}
	name := archiveName
	// The provenance file names the archive it signs; a chart uploaded
	// under another file name is still that archive if the sums match.
	if block, _ := clearsign.Decode(prov); block != nil {
		var sums provenance.SumCollection
		var meta map[string]any
		if err := provenance.ParseMessageBlock(block.Plaintext, &meta, &sums); err == nil && len(sums.Files) == 1 {
			for n := range sums.Files {
				name = n
			}
		}
	}
	s := &provenance.Signatory{KeyRing: ring}
	ver, err := s.Verify(archive, prov, name)
	if err != nil {
		return "", false, "provenance: " + err.Error()
	}
	return entityIdentity(ver.SignedBy), true, ""
}

// entityIdentity names a PGP signer: its primary user ID, else its
// fingerprint.
func entityIdentity(en *openpgp.Entity) string {
	if en == nil {
		return ""
	}
	if id := en.PrimaryIdentity(); id != nil && id.Name != "" {
		return id.Name
	}
	for name := range en.Identities {
		return name
	}
	return strings.ToUpper(hex.EncodeToString(en.PrimaryKey.Fingerprint))
}
