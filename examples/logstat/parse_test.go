package main

import (
	"testing"
	"time"
)

func TestParseLineReadsEveryField(t *testing.T) {
	line := `198.51.100.23 - - [11/Mar/2024:09:59:40 +0100] "GET /products/1042?ref=home HTTP/1.1" 200 31877 "https://www.google.com/" "Mozilla/5.0 (X11; Linux x86_64)" 0.044`
	e, err := parseLine(line)
	if err != nil {
		t.Fatalf("parseLine: %v", err)
	}
	want := entry{
		Client:   "198.51.100.23",
		Time:     time.Date(2024, 3, 11, 8, 59, 40, 0, time.UTC),
		Method:   "GET",
		Target:   "/products/1042?ref=home",
		Status:   200,
		Bytes:    31877,
		Duration: 0.044,
	}
	if !e.Time.Equal(want.Time) {
		t.Errorf("Time = %v, want %v", e.Time, want.Time)
	}
	if e.Time.Hour() != 9 {
		t.Errorf("Time.Hour() = %d, want the hour in the log's own offset, 9", e.Time.Hour())
	}
	e.Time, want.Time = time.Time{}, time.Time{}
	if e != want {
		t.Errorf("parseLine = %+v, want %+v", e, want)
	}
}

func TestParseLineWithoutRequestTimeHasNoDuration(t *testing.T) {
	line := `66.249.66.1 - - [11/Mar/2024:10:07:02 +0000] "HEAD /products/1042 HTTP/1.1" 200 - "-" "Googlebot/2.1"`
	e, err := parseLine(line)
	if err != nil {
		t.Fatalf("parseLine: %v", err)
	}
	if e.Duration != -1 || e.Bytes != 0 || e.Method != "HEAD" {
		t.Errorf("parseLine = %+v, want HEAD with no bytes and Duration -1", e)
	}
}

func TestParseLineRejectsWhatIsNotARequest(t *testing.T) {
	for name, line := range map[string]string{
		"torn by rotation": `x; rv:123.0) Gecko/20100101 Firefox/123.0" 0.006`,
		"tls handshake":    `192.0.2.77 - - [11/Mar/2024:10:05:46 +0000] "\x16\x03\x01\x02\x00" 400 157 "-" "-" 0.001`,
		"request timeout":  `192.0.2.77 - - [11/Mar/2024:10:05:46 +0000] "-" 408 0 "-" "-" 60.001`,
		"bad timestamp":    `192.0.2.77 - - [11/Mrz/2024:10:05:46 +0000] "GET / HTTP/1.1" 200 1 "-" "-" 0.001`,
		"common format":    `192.0.2.77 - - [11/Mar/2024:10:05:46 +0000] "GET / HTTP/1.1" 200 1`,
	} {
		if e, err := parseLine(line); err == nil {
			t.Errorf("%s: parseLine = %+v, want an error", name, e)
		}
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	for target, want := range map[string]string{
		"/":                             "/",
		"/products/1042":                "/products/:id",
		"/products/1042/reviews?page=2": "/products/:id/reviews",
		"/search?q=tent":                "/search",
		"/checkout/confirm/65f1c0a2e4b0d91c3a7f2b18":       "/checkout/confirm/:id",
		"/v2/devices/3f2b9c1e-7d4a-4c2b-a1f0-9e8d7c6b5a41": "/v2/devices/:id",
		"/static/img/products/1042.jpg":                    "/static/img/products/1042.jpg",
		"/static/js/app.3f9c2e1b.js":                       "/static/js/app.3f9c2e1b.js",
		"/v2/users/27/followers?limit=50":                  "/v2/users/:id/followers",
		"/blog/2024/02/faster-builds":                      "/blog/:id/:id/faster-builds",
	} {
		if got := normalizeEndpoint(target); got != want {
			t.Errorf("normalizeEndpoint(%q) = %q, want %q", target, got, want)
		}
	}
}
