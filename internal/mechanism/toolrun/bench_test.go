package toolrun

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStartRead runs `cat` of 64 MiB of lctl-like text through Start
// and reads it to the end in 256 KiB reads, as lctl.Scan does: the cost of
// a run's plumbing (process, pipe, reads, wait), with throughput.
func BenchmarkStartRead(b *testing.B) {
	line := []byte("- job_id: 1234567:1000:n0001\n  write_bytes: { samples: 1, unit: bytes, min: 4096, max: 4096, sum: 4096 }\n")
	data := bytes.Repeat(line, (64<<20)/len(line))
	path := filepath.Join(b.TempDir(), "out")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		rc, err := Start(context.Background(), "cat", path)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{rc}, buf)
		if err != nil || n != int64(len(data)) {
			b.Fatalf("read %d, %v", n, err)
		}
		if err := rc.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartSmall is a run of a tool printing one line: the fixed
// cost of a run.
func BenchmarkStartSmall(b *testing.B) {
	buf := make([]byte, 256<<10)
	for b.Loop() {
		rc, err := Start(context.Background(), "echo", "memused=1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{rc}, buf); err != nil {
			b.Fatal(err)
		}
		if err := rc.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
