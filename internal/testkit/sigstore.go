package testkit

import (
	"encoding/base64"
	"encoding/hex"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/proto"
)

// Sigstore is sigstore-go's in-memory Sigstore (Fulcio, Rekor, a CT log
// and a timestamp authority, made by the library itself), for keyless
// signatures where the public Sigstore cannot be reached.
type Sigstore struct {
	vs *ca.VirtualSigstore
}

// NewSigstore starts a virtual Sigstore.
func NewSigstore(tb testing.TB) *Sigstore {
	tb.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		tb.Fatal(err)
	}
	return &Sigstore{vs: vs}
}

// TrustedRootJSON returns the Sigstore's trusted root as the
// trusted_root.json an operator gives `serve --sigstore-trusted-root`.
func (s *Sigstore) TrustedRootJSON(tb testing.TB) []byte {
	tb.Helper()
	// The virtual logs are keyed by the hex of their key IDs but carry
	// that hex text as the ID itself; the JSON keeps IDs as bytes, so
	// they are decoded first for the file to name the logs as entries do.
	fix := func(logs map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
		for k, l := range logs {
			id, err := hex.DecodeString(k)
			if err != nil {
				tb.Fatal(err)
			}
			l.ID = id
		}
		return logs
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.vs.FulcioCertificateAuthorities(), fix(s.vs.CTLogs()),
		s.vs.TimestampingAuthorities(), fix(s.vs.RekorLogs()))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// SignBundle signs artifact (for a cosign signature of an OCI manifest:
// the manifest's bytes) as the keyless signer identity of OIDC issuer
// issuer would, and returns the Sigstore bundle (v0.3 JSON) cosign
// attaches as a referrer: a Fulcio certificate, a Rekor entry and an
// RFC 3161 timestamp.
func (s *Sigstore) SignBundle(tb testing.TB, identity, issuer string, artifact []byte) []byte {
	tb.Helper()
	e, err := s.vs.Sign(identity, issuer, artifact)
	if err != nil {
		tb.Fatal(err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		tb.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		tb.Fatal(err)
	}
	ms := sc.MessageSignatureContent().(*bundle.MessageSignature)
	entries, err := e.TlogEntries()
	if err != nil {
		tb.Fatal(err)
	}
	timestamps, err := e.Timestamps()
	if err != nil {
		tb.Fatal(err)
	}
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TimestampVerificationData: &protobundle.TimestampVerificationData{},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: ms.Digest()},
			Signature:     ms.Signature(),
		}},
	}
	for _, t := range entries {
		// The library's entry keeps its kind and its signed entry
		// timestamp (the inclusion promise) outside the proto it gives
		// out; a bundle carries both, so they are filled in: the kind of
		// every entry Sign makes, and a promise signed again by the
		// virtual Rekor over the same payload.
		tle := proto.Clone(t.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		tle.KindVersion = &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.1"}
		set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
		if err != nil {
			tb.Fatal(err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		// Bundles from v0.2 on carry an inclusion proof too: the virtual
		// Rekor's, in a log holding this entry alone.
		ip, err := s.vs.GetInclusionProof(tle.CanonicalizedBody)
		if err != nil {
			tb.Fatal(err)
		}
		rootHash, err := hex.DecodeString(*ip.RootHash)
		if err != nil {
			tb.Fatal(err)
		}
		tle.InclusionProof = &protorekor.InclusionProof{LogIndex: *ip.LogIndex, RootHash: rootHash, TreeSize: *ip.TreeSize,
			Hashes: [][]byte{}, Checkpoint: &protorekor.Checkpoint{Envelope: *ip.Checkpoint}}
		pb.VerificationMaterial.TlogEntries = append(pb.VerificationMaterial.TlogEntries, tle)
	}
	for _, t := range timestamps {
		pb.VerificationMaterial.TimestampVerificationData.Rfc3161Timestamps = append(pb.VerificationMaterial.TimestampVerificationData.Rfc3161Timestamps,
			&protocommon.RFC3161SignedTimestamp{SignedTimestamp: t})
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := b.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
