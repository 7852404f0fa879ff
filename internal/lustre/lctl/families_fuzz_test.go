package lctl

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// addFamilySeeds adds the fixtures and corpus files holding marker to the
// seed corpus of a family parser.
func addFamilySeeds(f *testing.F, marker string) {
	dirs := []string{corpus.Fixtures(f, "lustre")}
	if root := corpus.Root(); root != "" {
		dirs = append(dirs, filepath.Join(root, "corpus", "lustre"))
	}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err == nil && bytes.Contains(data, []byte(marker)) && len(data) < 1<<20 {
				f.Add(data)
			}
			return nil
		})
	}
}

// fuzzSections scans data, giving every parameter (and the text before the
// first header) to a parser made by newParser, and checks that each section
// is ended exactly once.
func fuzzSections(t *testing.T, data []byte, newParser func(end func()) SectionParser) {
	parsers, ends := 0, 0
	err := Scan(bytes.NewReader(data), "fuzz.target.param", func(string) SectionParser {
		parsers++
		ended := false
		return newParser(func() {
			if ended {
				t.Fatal("End called twice")
			}
			ended = true
			ends++
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if ends != parsers {
		t.Fatalf("%d sections, %d ended", parsers, ends)
	}
}

// lines bounds what any parser may produce from data.
func lines(data []byte) int { return bytes.Count(data, []byte{'\n'}) + 1 }

func FuzzStatsParser(f *testing.F) {
	addFamilySeeds(f, " samples [")
	f.Add([]byte("x 1 samples [usecs] -9223372036854775808 1 2 3\ny 99999999999999999999 samples"))
	f.Fuzz(func(t *testing.T, data []byte) {
		total := 0
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewStatsParser(func(sec *StatsSection, _ bool) {
				total += len(sec.Stats)
				for _, s := range sec.Stats {
					if s.Name == "" || !utf8.ValidString(s.Name) || (!s.HasSum && s.HasSumSq) {
						t.Fatalf("bad stat %+v", s)
					}
				}
				end()
			})
		})
		if total > lines(data) {
			t.Fatalf("%d stats from %d lines", total, lines(data))
		}
	})
}

func FuzzBrwStatsParser(f *testing.F) {
	addFamilySeeds(f, "% cum %")
	f.Add([]byte("pages per bulk r/w  rpcs |\n99999999999G: 1 | 1\n1K:|\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := 0
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewBrwStatsParser(func(st *BrwStats, _ bool) {
				for _, h := range st.Hists {
					rows += len(h.Rows)
				}
				end()
			})
		})
		if rows > lines(data) {
			t.Fatalf("%d rows from %d lines", rows, lines(data))
		}
	})
}

func FuzzRecoveryParser(f *testing.F) {
	addFamilySeeds(f, "status: ")
	f.Add([]byte("status: X\ncompleted_clients: 1/\nconnected_clients: /2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewRecoveryParser(func(r *Recovery, _ bool) {
				if r.Has&RecStatus != 0 && (r.Status == "" || !utf8.ValidString(r.Status)) {
					t.Fatalf("status %q", r.Status)
				}
				end()
			})
		})
	})
}

func FuzzQuotaParser(f *testing.F) {
	addFamilySeeds(f, "- id:")
	f.Add([]byte("- id: 1\n  usage: {,,}\n  limits: { hard: 1 }\n- id: 2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := 0
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewQuotaParser(func(e *QuotaEntry) {
				if !e.HasUsage && !e.HasLimits {
					t.Fatal("entry without values")
				}
				entries++
			}, func(int, bool) { end() })
		})
		if max := bytes.Count(data, []byte{'-'}); entries > max {
			t.Fatalf("%d entries from %d dashes", entries, max)
		}
	})
}

func FuzzChangelogParser(f *testing.F) {
	addFamilySeeds(f, "changelog_users")
	f.Add([]byte("current index: 1\ncl1 2 (3)\ncl2 4 ()\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		users := 0
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewChangelogParser(func(cl *Changelog, _ bool) {
				for _, u := range cl.Users {
					if !validUserID([]byte(u.ID)) {
						t.Fatalf("user id %q", u.ID)
					}
				}
				users += len(cl.Users)
				end()
			})
		})
		if users > lines(data) {
			t.Fatalf("%d users from %d lines", users, lines(data))
		}
	})
}

// FuzzValueParsers covers the single values and the short texts (version,
// health_check): whatever is printed, no label gets a strange value.
func FuzzValueParsers(f *testing.F) {
	addFamilySeeds(f, "memused=")
	f.Add([]byte("lustre: 2.8\nbuild: x\"y\n"))
	f.Add([]byte("1.99999999999999999999999"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewValueParser(func(v *Value, _ bool) {
				if n, ok := v.Number(); ok && (n < 0 || n != n) {
					t.Fatalf("number %v from %q", n, v.Text)
				}
				end()
			})
		})
		fuzzSections(t, data, func(end func()) SectionParser {
			return NewTextParser(func(lines [][]byte, _, _ bool) {
				if len(lines) > maxTextLines {
					t.Fatalf("%d lines kept", len(lines))
				}
				if v, b, ok := Version(lines); ok && (!validVersion(v) || (b != "" && !validVersion(b))) {
					t.Fatalf("version %q build %q", v, b)
				}
				Health(lines)
				end()
			})
		})
	})
}
