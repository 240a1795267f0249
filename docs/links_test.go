package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The repository's Markdown pages as GitHub shows them: every relative
// link must name a file or folder of the checkout, and every #anchor a
// heading (or an <a id>) of the page it points into, by GitHub's slug
// rules; every page over 400 lines opens with its contents, generated
// from its headings.

// root is the repository's root, from this package's folder.
const root = ".."

// contentsMin is the length (lines) from which a page must have contents.
const contentsMin = 400

// page is one Markdown file, parsed.
type page struct {
	path    string   // from the repository's root, slash-separated
	lines   []string // the file's lines
	anchors map[string]bool
	heads   []heading
	links   []link
}

// heading is one ATX heading outside code.
type heading struct {
	level int
	text  string // as written, inline markup kept
	slug  string // its anchor, duplicates numbered as GitHub does
}

// link is one inline link, image or reference definition outside code.
type link struct {
	line   int // 1-based
	target string
}

// pages reads every Markdown page of the repository (testdata,
// node_modules, hidden and output folders aside).
func pages(t *testing.T) []*page {
	t.Helper()
	var out []*page
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || (filepath.Dir(p) == root && (name == "out" || name == "bin"))) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, parsePage(filepath.ToSlash(rel), b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 3 {
		t.Fatalf("found %d Markdown pages under %s", len(out), root)
	}
	return out
}

var (
	atxHeading = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	linkText   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// parsePage finds the headings, anchors and links of a page, outside
// fenced code blocks and code spans.
func parsePage(path string, src []byte) *page {
	p := &page{path: path, anchors: map[string]bool{}}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	var inFence string
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		p.lines = append(p.lines, l)
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			p.anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(l); m != nil {
			s := slug(m[2])
			if k := seen[s]; k > 0 {
				seen[s] = k + 1
				s = fmt.Sprintf("%s-%d", s, k)
			} else {
				seen[s] = 1
			}
			p.anchors[s] = true
			p.heads = append(p.heads, heading{level: len(m[1]), text: m[2], slug: s})
		}
		plain := codeSpan.ReplaceAllString(l, "``")
		if m := refDef.FindStringSubmatch(plain); m != nil {
			p.links = append(p.links, link{n, m[1]})
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(plain, -1) {
			p.links = append(p.links, link{n, m[1]})
		}
	}
	return p
}

// slug is GitHub's anchor for a heading: the rendered text (a link's
// text, no tags) lower-cased, every character but letters, digits, marks,
// '_', '-' and spaces dropped, spaces turned into hyphens.
func slug(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestSlug pins the slug rules on headings of these pages.
func TestSlug(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ text, want string }{
		{"Position hints: which slice a value belongs to", "position-hints-which-slice-a-value-belongs-to"},
		{"The forward pass's kernels: Go assembly, the same bits (issue 37)", "the-forward-passs-kernels-go-assembly-the-same-bits-issue-37"},
		{"Today's Reifier: `mode = \"current\"`", "todays-reifier-mode--current"},
		{"β_min in one pass (`internal/forward/probe.go`)", "β_min-in-one-pass-internalforwardprobego"},
		{"fusion — the optimizing layerer", "fusion--the-optimizing-layerer"},
		{"Merkle–Damgård and [Merkle](x.md) trees", "merkledamgård-and-merkle-trees"},
	} {
		if got := slug(tt.text); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestLinks: every relative link of every page names a file or folder of
// the checkout, and every #anchor a heading of the page it points into.
func TestLinks(t *testing.T) {
	t.Parallel()
	ps := pages(t)
	byPath := map[string]*page{}
	for _, p := range ps {
		byPath[p.path] = p
	}
	checked := 0
	for _, p := range ps {
		for _, l := range p.links {
			tgt := l.target
			if tgt == "" || strings.Contains(tgt, "://") || strings.HasPrefix(tgt, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(tgt, "#")
			dest := p.path
			if file != "" {
				if strings.HasPrefix(file, "/") {
					t.Errorf("%s:%d: %s: an absolute path (GitHub resolves it against the site, not the repository)", p.path, l.line, tgt)
					continue
				}
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(p.path), file)))
				if dest == ".." || strings.HasPrefix(dest, "../") {
					t.Errorf("%s:%d: %s leaves the repository", p.path, l.line, tgt)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s:%d: %s: no such file or folder (%s)", p.path, l.line, tgt, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			to, ok := byPath[dest]
			if !ok {
				continue // a source file's #L12 and the like: not a heading
			}
			if !to.anchors[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading with anchor #%s%s", p.path, l.line, tgt, dest, anchor, closest(to, anchor))
			}
		}
	}
	t.Logf("%d relative links in %d pages", checked, len(ps))
	if checked < 50 {
		t.Errorf("only %d relative links checked in %d pages: the parser lost them", checked, len(ps))
	}
}

// closest suggests the page's anchor sharing the longest prefix with a
// missing one.
func closest(p *page, anchor string) string {
	best, n := "", 0
	for a := range p.anchors {
		k := 0
		for k < len(a) && k < len(anchor) && a[k] == anchor[k] {
			k++
		}
		if k > n || (k == n && a < best) {
			best, n = a, k
		}
	}
	if n < 4 {
		return ""
	}
	return " (nearest: #" + best + ")"
}

// contentsMarker matches a page's generated contents and its markers.
var contentsMarker = regexp.MustCompile(`(?s)<!-- contents \(go test ./docs -update\) -->\n(.*?)<!-- end contents -->`)

// contents renders a page's contents: a list of its level 2 and 3
// headings, linked.
func contents(p *page) string {
	var b strings.Builder
	for _, h := range p.heads {
		if h.level < 2 || h.level > 3 {
			continue
		}
		fmt.Fprintf(&b, "%s- [%s](#%s)\n", strings.Repeat("  ", h.level-2), linkText.ReplaceAllString(h.text, "$1"), h.slug)
	}
	return b.String()
}

// TestContents: a page over 400 lines opens with its contents between
// the markers
//
//	<!-- contents (go test ./docs -update) -->
//	…
//	<!-- end contents -->
//
// and a page that has them has them current; `go test ./docs -run
// TestContents -update` rewrites them.
func TestContents(t *testing.T) {
	t.Parallel()
	for _, p := range pages(t) {
		src := strings.Join(p.lines, "\n") + "\n"
		m := contentsMarker.FindStringSubmatchIndex(src)
		if m == nil {
			if len(p.lines) > contentsMin {
				t.Errorf("%s: %d lines and no contents (add the markers, then go test ./docs -run TestContents -update)", p.path, len(p.lines))
			}
			continue
		}
		want := contents(p)
		if have := src[m[2]:m[3]]; have != want {
			if !*update {
				t.Errorf("%s: contents differ from the headings (go test ./docs -run TestContents -update rewrites them)\nhave:\n%s\nthe headings:\n%s", p.path, have, want)
				continue
			}
			out := src[:m[2]] + want + src[m[3]:]
			if err := os.WriteFile(filepath.Join(root, p.path), []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s's contents", p.path)
		}
	}
}

// TestPackageMap: docs/design.md's package map names every package of
// the module (the plugins' cmd/tcforge-plugin-NAME mains aside, as it
// says), and no package that is gone. A first column "a/b, c, d/e" names
// a/b, a/c and a/d/e.
func TestPackageMap(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## Package map\n")
	_, rest, ok2 := strings.Cut(rest, "```\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("design.md has no code block under \"## Package map\"")
	}
	mapped := map[string]int{}
	for n, l := range strings.Split(strings.TrimSpace(block), "\n") {
		col, _, _ := strings.Cut(l, "  ")
		names := strings.Split(col, ",")
		top, _, _ := strings.Cut(strings.TrimSpace(names[0]), "/")
		for i, name := range names {
			name = strings.TrimSpace(name)
			if i > 0 {
				name = top + "/" + name
			}
			mapped[name] = n + 1
		}
	}
	pkgs := packages(t)
	for _, p := range pkgs {
		if _, ok := mapped[p]; !ok && !isPluginMain(p) {
			t.Errorf("design.md's package map lacks %s", p)
		}
	}
	for name, n := range mapped {
		if !slices.Contains(pkgs, name) {
			t.Errorf("design.md's package map, line %d of its block: %s is no package of the module", n, name)
		}
	}
}

// isPluginMain reports whether p is a plugin's standalone main
// (plugins/NAME/cmd/tcforge-plugin-NAME), which the map leaves out.
func isPluginMain(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) == 4 && parts[0] == "plugins" && parts[2] == "cmd" && strings.HasPrefix(parts[3], "tcforge-plugin-")
}

// packages are the module's package folders, as `go list ./...` names
// them less the module path: every folder with a .go file, testdata,
// hidden folders, node_modules and nested modules aside.
func packages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return fs.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return fs.SkipDir
			}
		}
		gos, err := filepath.Glob(filepath.Join(p, "*.go"))
		if err != nil {
			return err
		}
		if len(gos) > 0 && p != root {
			rel, err := filepath.Rel(root, p)
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
	if len(out) < 20 {
		t.Fatalf("found %d packages under %s", len(out), root)
	}
	return out
}
