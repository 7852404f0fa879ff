package dayu

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// untouchable fails the test if it is read.
type untouchable struct{ t *testing.T }

func (u untouchable) Read([]byte) (int, error) {
	u.t.Error("a file over the size cap was read")
	return 0, errors.New("read")
}

// A file over the cap is refused by its size: nothing is read.
func TestDayuSizeCapBeforeRead(t *testing.T) {
	for _, read := range []func() error{
		func() error {
			_, err := ReadStats("1_vfd-data-stat.yaml", untouchable{t}, 300<<20, Limits{})
			return err
		},
		func() error {
			_, err := ReadStageMap("task_to_file.yaml", untouchable{t}, 65<<20, Limits{})
			return err
		},
		func() error {
			_, err := ReadStats("1-vfd_data_stat.json", untouchable{t}, 2000, Limits{MaxFileBytes: 1000})
			return err
		},
	} {
		err := read()
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Reason != ReasonTooLarge {
			t.Errorf("%v, want too_large", err)
		}
	}
	// At the cap, read.
	data := []byte("- file-1:\n    file_name: a\n- Task:\n  task_id: 1\n")
	if _, err := ReadStats("1_vfd-data-stat.yaml", bytes.NewReader(data), int64(len(data)), Limits{MaxFileBytes: int64(len(data))}); err != nil {
		t.Error(err)
	}
}

// A file that grows past the cap while it is read is too_large: the size
// fstat gave is not trusted to bound the read.
func TestDayuGrowsPastCap(t *testing.T) {
	data := []byte(strings.Repeat("- file-1:\n    file_name: a\n- Task:\n  task_id: 1\n", 100))
	_, err := ReadStats("1_vfd-data-stat.yaml", bytes.NewReader(data), 100, Limits{MaxFileBytes: 1000})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Reason != ReasonTooLarge || pe.Msg != msgGrew {
		t.Errorf("%v, want too_large: %s", err, msgGrew)
	}
}

// msgPatterns are the messages of messages.go as patterns.
var msgPatterns = func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, m := range []string{msgTooLarge, msgOverBudget, msgGrew, msgReadFailed, msgNoContent, msgNoRecords,
		msgNoStages, msgNotObject, msgNotKeyValue, msgTrailing, msgUnbalanced, msgTooDeep, msgMapNoValue,
		msgBadInList, msgBadInMap, msgNotNumber, msgCollection, msgNotNumbers, msgNegative, msgNotRanges,
		msgRangeIndex, msgRangePair, msgOrderRange, msgListItem, msgNoTask, msgNoFileName, msgBlockLacks,
		msgJSONCut, msgJSONSyntax, msgJSONTrailing} {
		q := regexp.QuoteMeta(m)
		q = strings.ReplaceAll(q, "%d", `\d+`)
		q = strings.ReplaceAll(q, "%s", `(read_bytes|read_cnt|write_bytes|write_cnt)(, (read_bytes|read_cnt|write_bytes|write_cnt))*`)
		out = append(out, regexp.MustCompile("^"+q+"$"))
	}
	return out
}()

var msgPrefix = regexp.MustCompile(`^(record \d+|stage \d+|a field|a timer|[A-Za-z_]+): `)

// checkMessage holds an error's message to the reader's own words: known
// field names and ordinals, then one of messages.go's messages.
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	rest := msg
	for {
		m := msgPrefix.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		if p := m[1]; !strings.HasPrefix(p, "record ") && !strings.HasPrefix(p, "stage ") && p != "a field" && p != "a timer" && !knownKeys[p] {
			t.Fatalf("message %q names %q, not the reader's word", msg, p)
		}
		rest = rest[len(m[0]):]
	}
	for _, p := range msgPatterns {
		if p.MatchString(rest) {
			return
		}
	}
	t.Fatalf("message %q is none of messages.go's", msg)
}

func TestDayuMessagesFromTheList(t *testing.T) {
	for _, in := range []string{
		"- file-1:\n    file_name: a\nS3CR3T\n",
		"- file-1:\n    file_name: a\n    open_time: S3CR3T\n- Task:\n  task_id: 1\n",
		"- file-1:\n    file_name: a\n    S3CR3T: [1] x\n",
		"- file-1:\n    file_name: a\n    data:\n      H5FD_MEM_DRAW:\n        read_ranges: {x:(0,0)}\n",
		`[{"file-1": {"file_name": "a", "open_time": "S3CR3T"}}]`,
		`[{"file-1": {"file_name": "a"}}, S3CR3T]`,
		`[{"file-1": {"file_name": "a", "data": [{"S3CR3T": {"H5FD_MEM_DRAW": {"read_bytes": -1}}}]}}]`,
	} {
		_, err := ParseStats("1_vfd-data-stat.yaml", []byte(in))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%q: %v", in, err)
		}
		checkMessage(t, pe.Msg)
		if strings.Contains(pe.Error(), "S3CR3T") {
			t.Errorf("%q: the error shows the file's text: %v", in, err)
		}
	}
}

// jsonAny turns a node the JSON reader built into what encoding/json
// decodes (maps keep the last of duplicate keys).
func jsonAny(n *node) any {
	switch n.kind {
	case listNode:
		out := []any{}
		for _, it := range n.items {
			out = append(out, jsonAny(it))
		}
		return out
	case mapNode:
		out := map[string]any{}
		for i, k := range n.keys {
			out[k] = jsonAny(n.items[i])
		}
		return out
	}
	return n.text
}

// stdAny is encoding/json's decode with numbers, booleans and null as the
// JSON reader's scalars.
func stdAny(v any) any {
	switch v := v.(type) {
	case []any:
		for i := range v {
			v[i] = stdAny(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = stdAny(v[k])
		}
		return v
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	case nil:
		return ""
	}
	return v
}

// FuzzDayuJSON holds the streaming JSON reader to encoding/json: it
// accepts a document (valid UTF-8, nested at most maxJSONDepth) when and
// only when encoding/json does, and reads the same values from it.
func FuzzDayuJSON(f *testing.F) {
	for _, s := range []string{`[]`, `{}`, `[{"a": 1, "b": [true, false, null], "c": {"d": -1.5e3}}]`,
		`"\u00e9\ud83d\ude00\ud800x"`, `[1,]`, `{"a" 1}`, `01`, `1.`, `-`, `"\x01"`, `[` + strings.Repeat("[", 70) + `]`,
		`{"a": "b"} x`, `tru`, `{"k": "v", "k": "w"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) || bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > maxJSONDepth {
			return
		}
		p := newParse(int64(len(data))*100, false)
		br := bufioOf(data)
		j := &jsonReader{br: br, p: p, line: 1}
		n, err := j.value(0, "")
		if err == nil {
			err = j.end()
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		stdErr := dec.Decode(&want)
		if stdErr == nil {
			var extra any
			if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
				stdErr = errors.New("text after the value")
			}
		}
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("%q: reader %v, encoding/json %v", data, err, stdErr)
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: %v is not a *ParseError", data, err)
			}
			checkMessage(t, pe.Msg)
			return
		}
		if got := jsonAny(n); !reflect.DeepEqual(got, stdAny(want)) {
			t.Fatalf("%q: reader %#v, encoding/json %#v", data, got, stdAny(want))
		}
	})
}

func bufioOf(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// FuzzDayuStreamRanges holds the streamed range maps of long lines to the
// lines put together: with a read buffer of 32 bytes, every range map
// longer than 9 bytes is streamed; a file must give the same ranges, or fail
// for the same reason, either way.
func FuzzDayuStreamRanges(f *testing.F) {
	for _, s := range []string{"{83:(0,0),89:(1,166)}", "{1:[0,0],4:[33,33],}", "{\"1\": [ 0 , 0 ], '2':(\"3\",4.5)}",
		"{1:(0,0)} x", "{1:(0,0", "{1:(0,[1])}", "{x:(0,0)}", "{1:(0,0,0)}", "{1:5}", "{:}", "{1:(0,0)}\u00a0", "{1:(0:0)}"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, value string, newline bool) {
		if strings.ContainsAny(value, "\n") || !strings.HasPrefix(value, "{") {
			return
		}
		file := "- file-1:\n    file_name: a\n    data:\n      H5FD_MEM_DRAW:\n        read_bytes: 1\n        read_cnt: 1\n        write_bytes: 1\n        write_cnt: 1\n        write_ranges: " + value
		if newline {
			file += "\n- Task:\n  task_id: 1\n"
		}
		parse := func(stream bool) (*StatsFile, error) {
			defer func(s bool, n int) { streamLongRanges, readBufferSize = s, n }(streamLongRanges, readBufferSize)
			streamLongRanges, readBufferSize = stream, 32
			return ParseStats("1_vfd-data-stat.yaml", []byte(file))
		}
		got, gotErr := parse(true)
		want, wantErr := parse(false)
		if (gotErr == nil) != (wantErr == nil) || ReasonOf(gotErr) != ReasonOf(wantErr) {
			t.Fatalf("%q: streamed %v, put together %v", value, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		g, w := got.Entries[0].IO[MemDRAW].WriteRanges, want.Entries[0].IO[MemDRAW].WriteRanges
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%q: streamed %v, put together %v", value, g, w)
		}
	})
}

// A long range line is streamed: the ranges come out, the line is not held.
func TestDayuLongRangeLineStreamed(t *testing.T) {
	var b strings.Builder
	b.WriteString("- file-1:\n    file_name: a\n    data:\n      H5FD_MEM_DRAW:\n        read_bytes: 1\n        read_cnt: 1\n        write_bytes: 1\n        write_cnt: 1\n        write_ranges: {")
	const n = 100000
	for i := range n {
		fmt.Fprintf(&b, "%d:(%d,%d),", i, i/2, i/2)
	}
	b.WriteString("}\n- Task:\n  task_id: 1\n")
	data := []byte(b.String())
	before := streamedLines.Load()
	sf, err := ParseStats("1_vfd-data-stat.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if streamedLines.Load() != before+1 {
		t.Errorf("%d lines streamed, want 1", streamedLines.Load()-before)
	}
	rs := sf.Entries[0].IO[MemDRAW].WriteRanges
	if len(rs) != n || rs[n-1] != (PageRange{n - 1, (n - 1) / 2, (n - 1) / 2}) {
		t.Errorf("%d ranges, last %v", len(rs), rs[len(rs)-1])
	}
}
