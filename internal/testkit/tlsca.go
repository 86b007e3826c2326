package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a throwaway certificate authority for TLS tests.
type CA struct {
	// CertPEM is the CA certificate; CertFile holds it on disk.
	CertPEM  []byte
	CertFile string
	// Pool trusts the CA.
	Pool *x509.CertPool

	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	dir    string
	serial int64
}

// NewCA makes a CA whose files live in a temp dir of tb.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	ca, err := NewCAIn(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return ca
}

// NewCAIn makes a CA whose certificate is written into dir, for code
// outside a test (a benchmark command).
func NewCAIn(dir string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "chartctl test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, dir: dir, serial: 1, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	ca.CertFile = filepath.Join(ca.dir, "ca.pem")
	if err := os.WriteFile(ca.CertFile, ca.CertPEM, 0o600); err != nil {
		return nil, err
	}
	return ca, nil
}

// Issue returns a server certificate and key (PEM) for names, which may be
// DNS names or IP addresses, with a fresh serial number.
func (ca *CA) Issue(tb testing.TB, names ...string) (certPEM, keyPEM []byte, serial int64) {
	tb.Helper()
	certPEM, keyPEM, serial, err := ca.IssuePEM(names...)
	if err != nil {
		tb.Fatal(err)
	}
	return certPEM, keyPEM, serial
}

// IssuePEM is Issue for code outside a test.
func (ca *CA) IssuePEM(names ...string) (certPEM, keyPEM []byte, serial int64, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, 0, err
	}
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, 0, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, 0, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), ca.serial, nil
}

// WriteFileAtomic writes data to path through a rename, as certificate
// renewal tools do, so a reader never sees a half-written file.
func WriteFileAtomic(tb testing.TB, path string, data []byte) {
	tb.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}
