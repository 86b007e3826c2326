// Command chartctl is the chart repository server, its command line client
// and its terminal browser, in one binary.
package main

import (
	"os"

	"github.com/chartctl/chartctl/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
