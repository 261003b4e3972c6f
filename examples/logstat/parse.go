package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// timeLayout is the timestamp between the square brackets, e.g.
// 10/Oct/2023:13:55:36 -0700.
const timeLayout = "02/Jan/2006:15:04:05 -0700"

// linePattern matches one line of the combined log format followed by an
// optional request time: host ident user [time] "method target proto" status
// bytes "referer" "user agent" seconds.
var linePattern = regexp.MustCompile(
	`^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\d+|-) "[^"]*" "[^"]*"(?: (\d+\.\d+|-))?$`)

// entry is one request from the log.
type entry struct {
	Client   string
	Time     time.Time
	Method   string
	Target   string // path and query string, as requested
	Status   int
	Bytes    int64
	Duration float64 // seconds; -1 when the log does not say
}

// parseLine parses one log line. Lines that are cut short by log rotation or
// hold a request that is not HTTP (scanners send all sorts) give an error.
func parseLine(line string) (entry, error) {
	m := linePattern.FindStringSubmatch(line)
	if m == nil {
		return entry{}, fmt.Errorf("not a combined log line")
	}
	t, err := time.Parse(timeLayout, m[2])
	if err != nil {
		return entry{}, fmt.Errorf("bad timestamp %q", m[2])
	}
	status, _ := strconv.Atoi(m[5])
	var size int64
	if m[6] != "-" {
		size, err = strconv.ParseInt(m[6], 10, 64)
		if err != nil {
			return entry{}, fmt.Errorf("bad size %q", m[6])
		}
	}
	duration := -1.0
	if m[7] != "" && m[7] != "-" {
		duration, err = strconv.ParseFloat(m[7], 64)
		if err != nil {
			return entry{}, fmt.Errorf("bad request time %q", m[7])
		}
	}
	return entry{
		Client:   m[1],
		Time:     t,
		Method:   m[3],
		Target:   m[4],
		Status:   status,
		Bytes:    size,
		Duration: duration,
	}, nil
}

// pathOf returns the path of a request target, without the query string.
func pathOf(target string) string {
	path, _, _ := strings.Cut(target, "?")
	return path
}

// normalizeEndpoint turns a request target into the endpoint that served it:
// the query string goes, and path segments that are identifiers (hex digits
// and dashes with at least one digit: numbers, object ids, hashes, UUIDs)
// become ":id", so that /orders/1042/items and /orders/77/items count as one
// endpoint.
func normalizeEndpoint(target string) string {
	idSegment := regexp.MustCompile(`^[0-9a-f-]*[0-9][0-9a-f-]*$`)
	segments := strings.Split(pathOf(target), "/")
	for i, s := range segments {
		if idSegment.MatchString(s) {
			segments[i] = ":id"
		}
	}
	return strings.Join(segments, "/")
}
