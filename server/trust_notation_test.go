package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestNotationEntryTrustedIdentity: a notation entry takes its signers'
// trusted identity in subject (an x509 subject Notation accepts); one
// Notation would refuse, an issuer, or a certificate file without
// certificates is refused with invalid_parameter naming the field.
func TestNotationEntryTrustedIdentity(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Acme root"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "prod", "")

	r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey,
		client.TrustRequest{Name: "notary", Kind: "notation", Key: cert, Subject: "C=US, ST=WA, O=Acme"})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("add notation entry: %d %s", r.StatusCode, r.Body)
	}
	var got struct {
		Data struct{ Kind, Subject string } `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil || got.Data.Kind != "notation" || got.Data.Subject != "C=US, ST=WA, O=Acme" {
		t.Fatalf("added entry: %v %s", err, r.Body)
	}
	for name, c := range map[string]struct {
		req   client.TrustRequest
		param string
	}{
		"identity without C and ST": {client.TrustRequest{Name: "n1", Kind: "notation", Key: cert, Subject: "O=Acme"}, "subject"},
		"issuer":                    {client.TrustRequest{Name: "n2", Kind: "notation", Key: cert, Issuer: "https://issuer.example.com"}, "issuer"},
		"no certificate":            {client.TrustRequest{Name: "n3", Kind: "notation", Key: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"}, "key"},
	} {
		r := ts.DoJSON(t, http.MethodPost, "/v1/repositories/prod/trust", ts.AdminKey, c.req)
		if r.StatusCode != http.StatusBadRequest || r.ErrorCode() != "invalid_parameter" || !strings.Contains(string(r.Body), `"parameter":"`+c.param+`"`) {
			t.Errorf("%s: %d %s", name, r.StatusCode, r.Body)
		}
	}
}
