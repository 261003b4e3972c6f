package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// endpointStats accumulates the requests served by one endpoint.
type endpointStats struct {
	requests  int
	errors    int // 5xx responses
	bytes     int64
	durations []float64 // seconds, for the requests whose time was logged
}

// stats accumulates everything the report needs, one line at a time.
type stats struct {
	slowOver float64 // requests slower than this many seconds are listed

	files     int
	lines     int
	requests  int
	malformed int
	bytes     int64

	clients   []string // distinct client addresses, in the order first seen
	times     []time.Time
	status    map[int]int
	methods   map[string]int
	endpoints map[string]*endpointStats
	pathBytes map[string]int64
	pathHits  map[string]int
	hours     [24]int
	slow      []entry
}

func newStats(slowOver float64) *stats {
	return &stats{
		slowOver:  slowOver,
		status:    make(map[int]int),
		methods:   make(map[string]int),
		endpoints: make(map[string]*endpointStats),
		pathBytes: make(map[string]int64),
		pathHits:  make(map[string]int),
	}
}

// addFile reads one log, or stdin when name is "-".
func (st *stats) addFile(name string, stdin io.Reader) error {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	st.files++
	sc := bufio.NewScanner(r)
	// Scanners and broken clients can send very long request lines.
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		st.addLine(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// addLine counts one log line. Blank lines are skipped; lines that do not
// parse are counted as malformed and otherwise ignored.
func (st *stats) addLine(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	st.lines++
	e, err := parseLine(line)
	if err != nil {
		st.malformed++
		return
	}
	st.requests++
	st.bytes += e.Bytes
	if !slices.Contains(st.clients, e.Client) {
		st.clients = append(st.clients, e.Client)
	}
	st.times = append(st.times, e.Time)
	st.status[e.Status]++
	st.methods[e.Method]++
	st.hours[e.Time.Hour()]++

	ep := st.endpoint(e.Method + " " + normalizeEndpoint(e.Target))
	ep.requests++
	ep.bytes += e.Bytes
	if e.Status >= 500 {
		ep.errors++
	}
	if e.Duration >= 0 {
		ep.durations = append(ep.durations, e.Duration)
	}

	path := pathOf(e.Target)
	st.pathBytes[path] += e.Bytes
	st.pathHits[path]++

	if e.Duration > st.slowOver {
		st.slow = append(st.slow, e)
	}
}

func (st *stats) endpoint(key string) *endpointStats {
	ep, ok := st.endpoints[key]
	if !ok {
		ep = &endpointStats{}
		st.endpoints[key] = ep
	}
	return ep
}
