package chartdiff

import (
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"testing"
)

// TestKeptRenderingRoundTrip: a rendering kept for an archive reads back
// as its manifests, or the reason it is unrenderable; one whose
// compressed form passes MaxStoredRendering is kept as too large and
// reads as nil (render again), and bytes that are not a kept rendering
// are an error.
func TestKeptRenderingRoundTrip(t *testing.T) {
	in := &Rendering{Manifests: map[string]string{"templates/deployment.yaml": "kind: Deployment\n"}, Images: []string{"x"}, KubeVersion: "v1.31.0"}
	b, err := EncodeRendering(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeRendering(b)
	if err != nil || out == nil || !reflect.DeepEqual(out.Manifests, in.Manifests) || out.Unrenderable != "" {
		t.Fatalf("DecodeRendering = %+v, %v", out, err)
	}

	b, err = EncodeRendering(&Rendering{Unrenderable: "the chart looks up objects in a cluster (lookup)"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := DecodeRendering(b); err != nil || out == nil || out.Unrenderable != "the chart looks up objects in a cluster (lookup)" || out.Manifests != nil {
		t.Fatalf("unrenderable: %+v, %v", out, err)
	}

	// Random hex compresses about twofold: 20 MiB of it pass the bound.
	noise := make([]byte, 10<<20)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	b, err = EncodeRendering(&Rendering{Manifests: map[string]string{"templates/big.yaml": hex.EncodeToString(noise)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxStoredRendering {
		t.Fatalf("a too large rendering is kept as %d bytes", len(b))
	}
	if out, err := DecodeRendering(b); err != nil || out != nil {
		t.Fatalf("too large: %v, %v; want nil (render again)", out != nil, err)
	}

	if _, err := DecodeRendering([]byte("not gzip")); err == nil {
		t.Fatal("garbage decoded")
	}
}
