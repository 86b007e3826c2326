package chart

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"sigs.k8s.io/yaml"
)

// TestMetadataMirrorsHelm checks that the copied types have exactly Helm's
// JSON fields, in Helm's order, with the same Go types (recursively).
func TestMetadataMirrorsHelm(t *testing.T) {
	sameShape(t, reflect.TypeFor[Metadata](), reflect.TypeFor[helmchart.Metadata]())
}

func sameShape(t *testing.T, ours, helms reflect.Type) {
	t.Helper()
	if ours.Kind() != helms.Kind() {
		t.Fatalf("%v is a %v, Helm's %v a %v", ours, ours.Kind(), helms, helms.Kind())
	}
	switch ours.Kind() {
	case reflect.Pointer, reflect.Slice:
		sameShape(t, ours.Elem(), helms.Elem())
	case reflect.Map:
		sameShape(t, ours.Key(), helms.Key())
		sameShape(t, ours.Elem(), helms.Elem())
	case reflect.Struct:
		if ours.NumField() != helms.NumField() {
			t.Fatalf("%v has %d fields, Helm's %v %d", ours, ours.NumField(), helms, helms.NumField())
		}
		for i := range ours.NumField() {
			o, h := ours.Field(i), helms.Field(i)
			if o.Name != h.Name || o.Tag.Get("json") != h.Tag.Get("json") {
				t.Errorf("%v field %d is %s `json:%q`, Helm's is %s `json:%q`", ours, i, o.Name, o.Tag.Get("json"), h.Name, h.Tag.Get("json"))
			}
			sameShape(t, o.Type, h.Type)
		}
	default:
		if ours != helms {
			t.Errorf("type %v, Helm's %v", ours, helms)
		}
	}
}

// compareWithHelm parses doc as Helm's loader does, into both types, and
// fails if validation or the recorded JSON differ.
func compareWithHelm(t *testing.T, doc []byte) {
	ours, helms := new(Metadata), new(helmchart.Metadata)
	oerr := yaml.Unmarshal(doc, ours)
	herr := yaml.Unmarshal(doc, helms)
	if (oerr == nil) != (herr == nil) {
		t.Fatalf("parse: ours %v, Helm's %v", oerr, herr)
	}
	if oerr != nil {
		return
	}
	if ours.APIVersion == "" {
		ours.APIVersion = APIVersionV1
	}
	if helms.APIVersion == "" {
		helms.APIVersion = helmchart.APIVersionV1
	}
	oerr, herr = ours.Validate(), helms.Validate()
	if (oerr == nil) != (herr == nil) || (oerr != nil && "validation: "+oerr.Error() != herr.Error()) {
		t.Fatalf("validate: ours %v, Helm's %v", oerr, herr)
	}
	oj, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	hj, err := json.Marshal(helms)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(oj, hj) {
		t.Fatalf("JSON differs:\n ours %s\nHelm's %s", oj, hj)
	}
}

var chartYAMLSeeds = []string{
	"apiVersion: v2\nname: c\nversion: 1.0.0\n",
	"name: c\nversion: 1\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\nmaintainers: [null]\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies: [~]\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: a\n- name: a\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: a\n  alias: b/c\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\ntype: library\nkubeVersion: '>=1.20'\ndeprecated: true\n",
	"apiVersion: v2\nname: \"c\\td\"\nversion: 1.0.0\ndescription: \"a\\nb\\u0001c\"\n",
	"apiVersion: v2\nname: ../c\nversion: 1.0.0\n",
	"apiVersion: v2\nname: c\nversion: x\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\ntype: plugin\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\nannotations: {a: 1}\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\nkeywords: [a, 1, true]\nsources: [\"s\\u0085\"]\n",
	"apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: a\n  import-values: [x, {child: a, parent: b}]\n  tags: [\"t\\u200b\"]\n",
	"null",
	"- a",
}

func TestMetadataAgreesWithHelm(t *testing.T) {
	for _, doc := range chartYAMLSeeds {
		t.Run(strings.SplitN(doc, "\n", 4)[len(strings.SplitN(doc, "\n", 4))-1], func(t *testing.T) {
			compareWithHelm(t, []byte(doc))
		})
	}
}

// FuzzMetadata compares our copy of Helm's metadata rules with Helm's own
// on arbitrary Chart.yaml documents.
func FuzzMetadata(f *testing.F) {
	for _, doc := range chartYAMLSeeds {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 4096 {
			return
		}
		compareWithHelm(t, doc)
	})
}
