package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

const (
	reportTime = "2006-01-02 15:04:05 -0700"
	barWidth   = 40
)

// writeReport prints the report for st, with top rows in the endpoint and
// path tables.
func writeReport(w io.Writer, st *stats, top int) {
	fmt.Fprintf(w, "files      %d\n", st.files)
	fmt.Fprintf(w, "lines      %d\n", st.lines)
	fmt.Fprintf(w, "requests   %d\n", st.requests)
	fmt.Fprintf(w, "malformed  %d\n", st.malformed)
	if st.requests == 0 {
		return
	}
	fmt.Fprintf(w, "clients    %d\n", len(st.clients))
	fmt.Fprintf(w, "sent       %s\n", humanBytes(st.bytes))

	// Lines are written when a request completes, so the log is only roughly
	// in time order.
	times := make([]time.Time, len(st.times))
	copy(times, st.times)
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	fmt.Fprintf(w, "first      %s\n", times[0].Format(reportTime))
	fmt.Fprintf(w, "last       %s\n", times[len(times)-1].Format(reportTime))

	writeStatus(w, st)
	writeMethods(w, st)
	writeEndpoints(w, st, top)
	writePaths(w, st, top)
	writeHours(w, st)
	writeSlow(w, st)
}

func writeStatus(w io.Writer, st *stats) {
	codes := make([]int, 0, len(st.status))
	for code := range st.status {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	fmt.Fprintf(w, "\nstatus codes\n")
	for _, code := range codes {
		n := st.status[code]
		fmt.Fprintf(w, "  %d  %8d  %5.1f%%\n", code, n, percent(n, st.requests))
	}
}

func writeMethods(w io.Writer, st *stats) {
	methods := make([]string, 0, len(st.methods))
	for m := range st.methods {
		methods = append(methods, m)
	}
	sort.Slice(methods, func(i, j int) bool {
		a, b := st.methods[methods[i]], st.methods[methods[j]]
		if a != b {
			return a > b
		}
		return methods[i] < methods[j]
	})
	fmt.Fprintf(w, "\nmethods\n")
	for _, m := range methods {
		n := st.methods[m]
		fmt.Fprintf(w, "  %-7s  %8d  %5.1f%%\n", m, n, percent(n, st.requests))
	}
}

func writeEndpoints(w io.Writer, st *stats, top int) {
	keys := make([]string, 0, len(st.endpoints))
	for k := range st.endpoints {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := st.endpoints[keys[i]], st.endpoints[keys[j]]
		if a.requests != b.requests {
			return a.requests > b.requests
		}
		return keys[i] < keys[j]
	})
	if len(keys) > top {
		keys = keys[:top]
	}
	fmt.Fprintf(w, "\ntop %d endpoints by requests\n", len(keys))
	fmt.Fprintf(w, "  %8s  %6s  %8s  %8s  %8s  %s\n", "requests", "5xx", "p50 ms", "p95 ms", "max ms", "endpoint")
	for _, k := range keys {
		ep := st.endpoints[k]
		fmt.Fprintf(w, "  %8d  %6d  %8s  %8s  %8s  %s\n", ep.requests, ep.errors,
			millis(ep.durations, 50), millis(ep.durations, 95), millis(ep.durations, 100), k)
	}
}

func writePaths(w io.Writer, st *stats, top int) {
	paths := make([]string, 0, len(st.pathBytes))
	for p := range st.pathBytes {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		a, b := st.pathBytes[paths[i]], st.pathBytes[paths[j]]
		if a != b {
			return a > b
		}
		return paths[i] < paths[j]
	})
	if len(paths) > top {
		paths = paths[:top]
	}
	fmt.Fprintf(w, "\ntop %d paths by bytes sent\n", len(paths))
	fmt.Fprintf(w, "  %10s  %8s  %s\n", "sent", "requests", "path")
	for _, p := range paths {
		fmt.Fprintf(w, "  %10s  %8d  %s\n", humanBytes(st.pathBytes[p]), st.pathHits[p], p)
	}
}

func writeHours(w io.Writer, st *stats) {
	busiest := 0
	for _, n := range st.hours {
		busiest = max(busiest, n)
	}
	fmt.Fprintf(w, "\nrequests per hour\n")
	for hour, n := range st.hours {
		bar := ""
		for i := 0; i < n*barWidth/busiest; i++ {
			bar += "#"
		}
		line := fmt.Sprintf("  %02d  %8d  %s", hour, n, bar)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

func writeSlow(w io.Writer, st *stats) {
	slow := make([]entry, len(st.slow))
	copy(slow, st.slow)
	sort.SliceStable(slow, func(i, j int) bool {
		if slow[i].Duration != slow[j].Duration {
			return slow[i].Duration > slow[j].Duration
		}
		return slow[i].Time.Before(slow[j].Time)
	})
	// The list can run to thousands of lines: build it first and write it once.
	out := fmt.Sprintf("\nrequests slower than %.3fs: %d\n", st.slowOver, len(slow))
	for _, e := range slow {
		out += fmt.Sprintf("  %8.3fs  %d  %s  %-15s  %s %s\n", e.Duration, e.Status,
			e.Time.Format(reportTime), e.Client, e.Method, e.Target)
	}
	io.WriteString(w, out)
}

// millis formats the p-th percentile (nearest rank) of durations in
// milliseconds, or "-" when there are none.
func millis(durations []float64, p float64) string {
	if len(durations) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", 1000*percentile(durations, p))
}

// percentile returns the p-th percentile of values by the nearest-rank
// method: the smallest value that at least p percent of values do not exceed.
func percentile(values []float64, p float64) float64 {
	sorted := make([]float64, len(values))
	copy(sorted, values)
	sort.Float64s(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func percent(n, total int) float64 {
	return 100 * float64(n) / float64(total)
}

// humanBytes formats a byte count with binary prefixes: 512 B, 1.5 KiB, ...
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
