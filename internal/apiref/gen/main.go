// Command gen writes the API reference page from the server's OpenAPI
// document: go run ./internal/apiref/gen -o docs/api-reference.md.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/chartctl/chartctl/internal/apiref"
	"github.com/chartctl/chartctl/server"
)

func main() {
	out := flag.String("o", "docs/api-reference.md", "file to write")
	flag.Parse()
	b, err := apiref.Render(server.OpenAPIDocument())
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiref:", err)
		os.Exit(1)
	}
}
