package doccheck

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// Every link of the repository's Markdown documents to a relative path
// names a file or directory of the repository: a fresh clone, with nothing
// beside it, has everything its documents point to. A link to a Markdown
// file with an anchor (#section) must name one of its headings (GitHub's
// anchors) or an explicit <a id="…">/<a name="…">. Links with a scheme
// (https:, mailto:) are not checked; nor are code blocks and code spans,
// which are text, not links.
//
// The documents: every *.md of the repository outside testdata/ (golden
// outputs), dist/ (build output) and hidden directories; README.md,
// ARCHITECTURE.md, CONTRIBUTING.md, docs/*.md and deploy/**/*.md among them,
// and the test insists on finding the entry pages and every reference page
// the README sends its readers to (requiredDocs).
func TestMarkdownLinksStayInTheRepository(t *testing.T) {
	root := corpus.RepoRoot()
	docs := markdownFiles(t, root)
	for _, must := range requiredDocs {
		if !slices.Contains(docs, must) {
			t.Errorf("%s not found among the documents checked", must)
		}
	}
	anchors := map[string]map[string]bool{} // by file, relative to root
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		a := markdownAnchors(string(data))
		anchors[rel] = a
		return a
	}
	checked := 0
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(data)) {
			where := doc + ":" + strconv.Itoa(l.line)
			target, ok := relativeTarget(l.target)
			if !ok {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			rel := doc // a bare #anchor is in the same document
			if path != "" {
				p, err := url.PathUnescape(path)
				if err != nil {
					t.Errorf("%s: link %q: %v", where, l.target, err)
					continue
				}
				if strings.HasPrefix(p, "/") {
					t.Errorf("%s: link %q is absolute: a clone's documents link relative paths", where, l.target)
					continue
				}
				rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), p)))
				if rel == ".." || strings.HasPrefix(rel, "../") {
					t.Errorf("%s: link %q points outside the repository (%s)", where, l.target, rel)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
					t.Errorf("%s: link %q: %s does not exist in the repository", where, l.target, rel)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(rel, ".md") && !anchorsOf(rel)[strings.ToLower(anchor)] {
				t.Errorf("%s: link %q: %s has no heading or anchor %q", where, l.target, rel, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found in %d documents: is the link parser broken?", checked, len(docs))
	}
	t.Logf("%d relative links checked in %d documents", checked, len(docs))
}

// requiredDocs are the documents the link check must find: the entry
// pages, and the reference pages the README's text moved to (a page renamed
// or lost would otherwise only drop out of the check).
var requiredDocs = []string{
	"README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "deploy/README.md", "darshan/README.md",
	"docs/lustre.md", "docs/metrics.md", "docs/sidecar.md", "docs/flags.md", "docs/scale-out.md",
	"docs/performance.md", "docs/demo.md",
	"docs/signals.md", "docs/jobids.md", "docs/rates.md", "docs/insights.md",
}

// The README links every reference page of docs/, so that none is reachable
// only by browsing the directory.
func TestReadmeLinksEveryDocsPage(t *testing.T) {
	root := corpus.RepoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range markdownLinks(string(readme)) {
		if target, ok := relativeTarget(l.target); ok {
			path, _, _ := strings.Cut(target, "#")
			linked[filepath.ToSlash(filepath.Clean(path))] = true
		}
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	for _, p := range pages {
		rel := "docs/" + filepath.Base(p)
		if !linked[rel] {
			t.Errorf("README.md does not link %s", rel)
		}
	}
}

// The parser itself, on the shapes the documents use.
func TestMarkdownLinkParser(t *testing.T) {
	doc := "# Title: one — two\n" +
		"See [a](docs/a.md), ![img](img/x.png \"title\") and [b](../shared/x.md#part).\n" +
		"A [graph](http://localhost:9090/graph?g0.expr=rate(x%5B1m%5D)) and <https://example.org/a_(b)>.\n" +
		"`[not](a/link.md)` is code; so is\n" +
		"```sh\n[not](either.md)\n```\n" +
		"[ref]: deploy/README.md\n" +
		"## Title: one — two\n" +
		"<a id=\"custom\"></a>\n"
	var got []string
	for _, l := range markdownLinks(doc) {
		got = append(got, strconv.Itoa(l.line)+" "+l.target)
	}
	want := []string{"2 docs/a.md", "2 img/x.png", "2 ../shared/x.md#part",
		"3 http://localhost:9090/graph?g0.expr=rate(x%5B1m%5D)", "3 https://example.org/a_(b)", "8 deploy/README.md"}
	if !slices.Equal(got, want) {
		t.Errorf("links:\n got %q\nwant %q", got, want)
	}
	a := markdownAnchors(doc)
	for _, want := range []string{"title-one--two", "title-one--two-1", "custom"} {
		if !a[want] {
			t.Errorf("anchor %q not found in %v", want, a)
		}
	}
	for target, want := range map[string]bool{"docs/a.md": true, "#x": true, "https://x.org": false,
		"mailto:a@b": false, "": false} {
		if _, ok := relativeTarget(target); ok != want {
			t.Errorf("relativeTarget(%q) = %v, want %v", target, ok, want)
		}
	}
}

// markdownFiles returns the documents to check, relative to root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "dist" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type link struct {
	line   int
	target string
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	autolink   = regexp.MustCompile(`<((?:https?|mailto|ftp):[^>\s]+)>`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// markdownLinks returns the targets of the inline links and images, the
// reference definitions and the autolinks of doc, outside code.
func markdownLinks(doc string) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(doc, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, m[1]})
			continue
		}
		for rest := line; ; {
			j := strings.Index(rest, "](")
			k := strings.Index(rest, "<")
			if k >= 0 && (j < 0 || k < j) {
				if m := autolink.FindStringSubmatchIndex(rest[k:]); m != nil && m[0] == 0 {
					out = append(out, link{i + 1, rest[k+m[2] : k+m[3]]})
					rest = rest[k+m[1]:]
				} else {
					rest = rest[k+1:]
				}
				continue
			}
			if j < 0 {
				break
			}
			rest = rest[j+2:]
			// The destination ends at the ) that closes the (, parentheses
			// inside it balanced, or at a space before a title.
			depth, end := 0, -1
			for n, c := range rest {
				if c == '(' {
					depth++
				} else if c == ')' {
					if depth == 0 {
						end = n
						break
					}
					depth--
				} else if c == ' ' && depth == 0 {
					end = n
					break
				}
			}
			if end < 0 {
				break
			}
			if target := strings.Trim(rest[:end], "<>"); target != "" {
				out = append(out, link{i + 1, target})
			}
			rest = rest[end:]
		}
	}
	return out
}

// relativeTarget reports whether a link target is a path or anchor of the
// repository (not a URL with a scheme), and returns it.
func relativeTarget(target string) (string, bool) {
	if target == "" {
		return "", false
	}
	if i := strings.IndexAny(target, ":/#?"); i > 0 && target[i] == ':' {
		return "", false // a scheme: https:, mailto:, …
	}
	return target, true
}

// markdownAnchors returns the anchors GitHub makes of doc's headings
// (lower case, spaces to -, punctuation dropped, repeats numbered -1, -2,
// …) and the explicit HTML anchors.
func markdownAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(doc, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[strings.ToLower(m[1])] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[2]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}
