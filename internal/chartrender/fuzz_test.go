package chartrender_test

import (
	"testing"

	"github.com/chartctl/chartctl/internal/chartrender"
)

// FuzzMarkdown checks that whatever the README, the HTML is safe to put
// into a page.
func FuzzMarkdown(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Add("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n```go\nfunc main() {}\n```\n")
	f.Fuzz(func(t *testing.T, src string) {
		checkSafe(t, src, chartrender.Markdown([]byte(src)))
	})
}

// FuzzSchemaTable checks that no values.schema.json makes the table panic
// or exceed its cap.
func FuzzSchemaTable(f *testing.F) {
	f.Add(demoSchema)
	f.Add(`{"properties":{"a":{"items":{"properties":{"b":{"type":["x",1]}}}}}}`)
	f.Fuzz(func(t *testing.T, src string) {
		rows, _, _ := chartrender.SchemaTable([]byte(src))
		if len(rows) > chartrender.MaxSchemaRows {
			t.Fatalf("%d rows", len(rows))
		}
	})
}
