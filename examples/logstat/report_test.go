package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// logstat runs the command as main would, and returns its exit status and
// output.
func logstat(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestReportMatchesGolden(t *testing.T) {
	code, got, stderr := logstat(t, "", "-top", "5", "-slow", "0.5", "testdata/sample.log")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	const golden = "testdata/sample.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (run go test -update to accept):\n%s", golden, got)
	}
}

func TestStandardInputGivesTheSameReportAsTheFile(t *testing.T) {
	data, err := os.ReadFile("testdata/sample.log")
	if err != nil {
		t.Fatal(err)
	}
	_, fromFile, _ := logstat(t, "", "testdata/sample.log")
	code, fromStdin, stderr := logstat(t, string(data), "-")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if fromStdin != fromFile {
		t.Errorf("stdin report differs from the file report:\n%s", fromStdin)
	}
}

func TestTwoFilesAreSummarisedTogether(t *testing.T) {
	_, out, _ := logstat(t, "", "testdata/sample.log", "testdata/sample.log")
	for _, want := range []string{"files      2\n", "requests   64\n", "malformed  4\n", "clients    5\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestEmptyInputReportsNoRequests(t *testing.T) {
	code, out, _ := logstat(t, "\n\n", "-")
	want := "files      1\nlines      0\nrequests   0\nmalformed  0\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, output %q; want exit 0 and %q", code, out, want)
	}
}

func TestAMissingFileExitsOne(t *testing.T) {
	code, _, stderr := logstat(t, "", "testdata/no-such.log")
	if code != 1 || !strings.Contains(stderr, "no-such.log") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming the file", code, stderr)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{}, {"-top", "0", "x.log"}, {"-bogus", "x.log"}} {
		if code, _, _ := logstat(t, "", args...); code != 2 {
			t.Errorf("logstat %q: exit %d, want 2", args, code)
		}
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	values := []float64{0.5, 0.1, 0.4, 0.2, 0.3}
	for p, want := range map[float64]float64{0: 0.1, 20: 0.1, 21: 0.2, 50: 0.3, 95: 0.5, 100: 0.5} {
		if got := percentile(values, p); got != want {
			t.Errorf("percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if values[0] != 0.5 {
		t.Errorf("percentile reordered its argument: %v", values)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0:             "0 B",
		1023:          "1023 B",
		1024:          "1.0 KiB",
		1536:          "1.5 KiB",
		38 << 20:      "38.0 MiB",
		5 * (1 << 30): "5.0 GiB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
