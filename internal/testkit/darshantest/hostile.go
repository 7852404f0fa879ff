package darshantest

import (
	"bytes"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Hidden holds a character of each kind that a browser, a terminal or an
// SVG viewer draws as nothing or uses to reorder the text around it: the
// bidirectional overrides, embeddings, marks and isolates (U+202A–U+202E,
// U+200E, U+200F, U+2066–U+2069, U+061C), C0 controls and DEL, C1 controls
// (U+0085, U+009B: CSI), the zero-width characters (U+200B–U+200D, U+2060,
// U+FEFF), the soft hyphen, and the line and paragraph separators.
const Hidden = "\u202e\u202d\u202a\u202b\u202c\u200e\u200f\u2066\u2067\u2068\u2069\u061c" +
	"\x01\x07\x1b\r\x7f" +
	"\u0085\u009b" +
	"\u200b\u200c\u200d\u2060\ufeff\u00ad" +
	"\u2028\u2029"

// CountHidden counts the characters of s that a reader does not see or
// that reorder the text around them: control characters but the newline
// (markup's own), format characters (the bidirectional controls, the
// zero-width characters, the soft hyphen), line and paragraph separators,
// and bytes that are not UTF-8. A page or a document made of Hidden's
// strings must count none.
func CountHidden(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			n++
		case r == '\n':
		case unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			n++
		}
	}
	return n
}

// HostileFileName is a log's file name with Hidden in it, as a user who
// names the logs of a Darshan log directory may write it.
const HostileFileName = "job" + Hidden + "_id4343-1_3-4-1-1_1.darshan"

// HostilePath is the file path of the hostile log that reads as
// "/scratch/<hidden>exe.pdf" in a browser: U+202E turns "fdp.exe" around.
const HostilePath = "/scratch/\u202efdp.exe"

// HostileLog returns a one-rank log (job 4343, uid 1000) in which every
// string a log holds carries Hidden: the executable, the library version,
// the mount points and their types, and the file paths (one also with a
// byte that is not UTF-8, a newline and a tab). Its file is written with
// 2,000 small writes, so that an insight (P06) fires and names the files.
func HostileLog(end time.Time) ([]byte, error) {
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	// lib_ver ends at the first newline: Hidden's separators are not
	// newlines, its CR is kept.
	w.Job = darshan.Job{UID: 1000, JobID: 4343, StartTime: end.Unix() - 60, EndTime: end.Unix(), NProcs: 1,
		Metadata: "lib_ver=3.4.7" + Hidden + "\n"}
	// The command line's first word ends at a space or a tab, the mount
	// table's fields at a tab or a newline.
	w.Exe = "/apps/bin/" + Hidden + "fdp.exe --x"
	w.Mounts = []darshan.Mount{{Path: "/scratch" + Hidden, Type: "lustre" + Hidden}, {Path: "/", Type: "ext4"}}
	l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	for i, name := range []string{HostilePath, "/scratch" + Hidden + "/out\xff\n\t" + Hidden + ".dat", "relative" + Hidden} {
		c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: 0, ID: w.AddName(name)},
			Layout: l, Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
		n := int64(2000 * (i + 1))
		for k, v := range map[string]int64{"POSIX_OPENS": 1, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * 4096,
			"POSIX_SIZE_WRITE_1K_10K": n, "POSIX_SEQ_WRITES": n, "POSIX_CONSEC_WRITES": n,
			"POSIX_MAX_BYTE_WRITTEN": n*4096 - 1, "POSIX_FILE_ALIGNMENT": 4096, "POSIX_MEM_ALIGNMENT": 8} {
			c.Ints[l.IntIndex(k)] = v
		}
		c.Floats[l.FloatIndex("POSIX_F_WRITE_TIME")] = 1
		if err := w.Write(c); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Traced returns a one-rank log (job 4444) of a file written through POSIX
// and traced by DXT, one segment per 4 KiB write, without a HEATMAP module:
// its heatmap comes from the traces. The trace holds segments segments,
// 48 bytes each once decoded: 100,000 pass a 4 MiB memory budget that the
// rest of the log stays well under.
func Traced(end time.Time, segments int) ([]byte, error) {
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: 1000, JobID: 4444, StartTime: end.Unix() - 60, EndTime: end.Unix(), NProcs: 1, Metadata: "lib_ver=3.4.7\n"}
	w.Exe = "/apps/bin/traced"
	w.Mounts = []darshan.Mount{{Path: "/scratch", Type: "lustre"}}
	id := w.AddName("/scratch/traced.dat")
	n := int64(segments)
	l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: 0, ID: id},
		Layout: l, Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
	for k, v := range map[string]int64{"POSIX_OPENS": 1, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * 4096,
		"POSIX_SIZE_WRITE_1K_10K": n, "POSIX_SEQ_WRITES": n, "POSIX_CONSEC_WRITES": n, "POSIX_MAX_BYTE_WRITTEN": n*4096 - 1} {
		c.Ints[l.IntIndex(k)] = v
	}
	c.Floats[l.FloatIndex("POSIX_F_WRITE_TIME")] = 1
	if err := w.Write(c); err != nil {
		return nil, err
	}
	d := &darshan.DXTRecord{Key: darshan.Key{Module: darshan.DXTPOSIX, Rank: 0, ID: id}, Hostname: "node1", Writes: make([]darshan.Segment, segments)}
	for i := range d.Writes {
		t := 50 * float64(i) / float64(segments)
		d.Writes[i] = darshan.Segment{Offset: int64(i) * 4096, Length: 4096, Start: t, End: t + 50/float64(segments)}
	}
	if err := w.Write(d); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
