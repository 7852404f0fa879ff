package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// A count written in a document ("26 alerts", "32 recording rules",
// "P01–P22") is held to what the code and deploy/ hold, so that it cannot
// drift: each kind of count a document may state has its truth here, and
// every statement of one, in every Markdown file but the changelog (which
// tells what was true then), must equal it.

// countClaim is a kind of count the documents state: the words that follow
// the number, and how many there really are.
type countClaim struct {
	words string
	truth func(t *testing.T, root string) int
}

var countClaims = []countClaim{
	{"alerts", func(t *testing.T, root string) int { return len(distinct(rules(t, root, "alert"))) }},
	{"alerting rules", func(t *testing.T, root string) int { return len(rules(t, root, "alert")) }},
	{"recording rules", func(t *testing.T, root string) int { return len(rules(t, root, "record")) }},
	{"collectors", func(*testing.T, string) int { return len(collector.Names()) }},
	{"insight codes", func(*testing.T, string) int { return len(insights.Codes) }},
}

// countPattern finds "<number> <words>": the number in digits, with
// thousands separators, and nothing but spaces between.
func countPattern(words string) *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^\w.,])(\d[\d,]*)\s+` + strings.ReplaceAll(regexp.QuoteMeta(words), ` `, `\s+`) + `\b`)
}

func TestDocumentedCounts(t *testing.T) {
	root := corpus.RepoRoot()
	truths := make([]int, len(countClaims))
	for i, c := range countClaims {
		truths[i] = c.truth(t, root)
	}
	checked := 0
	for _, rel := range markdownFiles(t, root) {
		if rel == "CHANGELOG.md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range wrongCounts(string(data), truths) {
			t.Errorf("%s: %s", rel, bad)
		}
		checked += len(countsIn(string(data)))
		for _, bad := range wrongCodeRanges(string(data)) {
			t.Errorf("%s: %s", rel, bad)
		}
	}
	if checked == 0 {
		t.Error("no document states a count: the patterns no longer match the documents")
	}
}

// countsIn returns every count a document states, by claim.
func countsIn(doc string) (found []struct{ claim, n int }) {
	text := strings.Join(strings.Fields(doc), " ") // a count may wrap
	for i, c := range countClaims {
		for _, m := range countPattern(c.words).FindAllStringSubmatch(text, -1) {
			n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			if err == nil {
				found = append(found, struct{ claim, n int }{i, n})
			}
		}
	}
	return found
}

// wrongCounts describes each count of doc that differs from its truth.
func wrongCounts(doc string, truths []int) []string {
	var out []string
	for _, f := range countsIn(doc) {
		if f.n != truths[f.claim] {
			out = append(out, fmt.Sprintf("says %d %s, there are %d", f.n, countClaims[f.claim].words, truths[f.claim]))
		}
	}
	return out
}

// codeRange is a range of insight codes as the documents write them
// ("P01–P22").
var codeRange = regexp.MustCompile(`\b([SPM])(\d\d)\s*[–-]\s*([SPM])?(\d\d)\b`)

// wrongCodeRanges describes each range of insight codes in doc that holds a
// code the insights package does not report, or leaves out one it does
// (a range written up to the last code of its letter).
func wrongCodeRanges(doc string) []string {
	var out []string
	for _, m := range codeRange.FindAllStringSubmatch(doc, -1) {
		letter, to := m[1], m[3]
		if to != "" && to != letter {
			continue // not one letter's range
		}
		lo, _ := strconv.Atoi(m[2])
		hi, _ := strconv.Atoi(m[4])
		for n := lo; n <= hi; n++ {
			if code := fmt.Sprintf("%s%02d", letter, n); !slices.Contains(insights.Codes, code) {
				out = append(out, fmt.Sprintf("%s names %s, which is no insight code", m[0], code))
			}
		}
	}
	return out
}

// rules returns the names of deploy/'s Prometheus rules of a kind
// ("alert" or "record"), one per rule, from every rules file.
func rules(t *testing.T, root, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "deploy", "prometheus", "rules", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rules files: %v", err)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct {
				Rules []map[string]any `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if name, ok := r[kind].(string); ok {
					names = append(names, name)
				}
			}
		}
	}
	return names
}

func distinct(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// The check finds a wrong count, and a range naming a code that is not
// one: what it would report if a document drifted.
func TestDocumentedCountsCatchDrift(t *testing.T) {
	truths := []int{26, 28, 32, 30, 32}
	doc := "deploy/ has 22 alerts and\n32 recording\nrules; Drishti's S01, P01–P22 and M01–M10."
	got := wrongCounts(doc, truths)
	if len(got) != 1 || !strings.Contains(got[0], "says 22 alerts, there are 26") {
		t.Errorf("wrong counts: %q", got)
	}
	if got := wrongCodeRanges(doc); len(got) != 1 || !strings.Contains(got[0], "P20") {
		t.Errorf("wrong ranges: %q", got)
	}
}
