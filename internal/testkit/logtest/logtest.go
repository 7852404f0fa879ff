// Package logtest captures what a component logs, as JSON lines, for tests
// that check what it says.
package logtest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Capture is a log that tests read: JSON lines, DEBUG and up. Safe for
// concurrent writers.
type Capture struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	read int
}

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// Logger returns a logger writing into c.
func (c *Capture) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Record is one line of the log; a group's attributes are a map under the
// group's name.
type Record map[string]any

// Next returns the records logged since the last call.
func (c *Capture) Next(t testing.TB) []Record {
	t.Helper()
	c.mu.Lock()
	data := bytes.Clone(c.buf.Bytes()[c.read:])
	c.read = c.buf.Len()
	c.mu.Unlock()
	var out []Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// Pick returns the records of recs with level and msg whose "dir" is dir.
func Pick(recs []Record, level, msg, dir string) []Record {
	var out []Record
	for _, r := range recs {
		if r["level"] == level && r["msg"] == msg && r["dir"] == dir {
			out = append(out, r)
		}
	}
	return out
}

// Num returns the number at a path of keys ("waiting", "partial"); -1 when
// there is none.
func (r Record) Num(keys ...string) float64 {
	var v any = map[string]any(r)
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		if v, ok = m[k]; !ok {
			return -1
		}
	}
	if f, ok := v.(float64); ok {
		return f
	}
	return -1
}

// Want checks the numbers of a record, by dotted path ("waiting.partial").
func (r Record) Want(t testing.TB, fields map[string]float64) {
	t.Helper()
	for path, want := range fields {
		if got := r.Num(strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v in %v", path, got, want, r)
		}
	}
}
