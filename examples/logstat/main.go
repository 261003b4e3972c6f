// Command logstat summarises web-server access logs.
//
// It reads logs in the combined log format written by nginx and Apache, with
// the request time in seconds appended as the last field (nginx's
// $request_time), and prints a plain-text report: status codes, methods, the
// busiest endpoints with their latency percentiles, the paths that sent the
// most bytes, requests per hour and the slowest requests.
//
// Usage:
//
//	logstat [-top N] [-slow SECONDS] FILE...
//
// A FILE of "-" reads standard input. Several files are summarised together,
// which is handy for a day split across rotated logs.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status, 0 on success,
// 1 when an input cannot be read and 2 for a usage error.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("logstat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	top := fs.Int("top", 10, "rows in the endpoint and path tables")
	slow := fs.Float64("slow", 1.0, "list requests that took longer than `seconds`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: logstat [-top N] [-slow SECONDS] FILE...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 || *top < 1 || *slow < 0 {
		fs.Usage()
		return 2
	}

	st := newStats(*slow)
	for _, name := range fs.Args() {
		if err := st.addFile(name, stdin); err != nil {
			fmt.Fprintf(stderr, "logstat: %v\n", err)
			return 1
		}
	}
	writeReport(stdout, st, *top)
	return 0
}
