package doctest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Block is a fenced block of a page.
type Block struct {
	Page    string // the page's file name
	Line    int    // the line of the opening fence, from 1
	Lang    string // the fence's language: sh, bash, go, json, …
	Heading string // the nearest heading above, as written: "## With curl"
	Text    string // the body, ending in a newline
	// NotRun is the reason a "not run" comment gives, or "".
	NotRun string

	claimed, ran bool
}

// Runnable reports whether a test must run the block: a shell block or a
// Go program that is not marked "not run".
func (b *Block) Runnable() bool {
	return b.NotRun == "" && (b.shell() || b.Lang == "go")
}

func (b *Block) shell() bool { return b.Lang == "sh" || b.Lang == "bash" }

// Where names the block for messages: "pull-delivery.md:206 (## With curl)".
func (b *Block) Where() string {
	return b.Page + ":" + strconv.Itoa(b.Line) + " (" + b.Heading + ")"
}

// MarkRun records that the block ran. Shell.Run marks the blocks it is
// given; a test that runs a block another way (a Go program) calls it.
func (b *Block) MarkRun() {
	pagesMu.Lock()
	b.ran = true
	pagesMu.Unlock()
}

// Page is a Markdown page split into its fenced blocks.
type Page struct {
	Name   string
	Text   string
	Blocks []*Block
}

// pagesMu guards the claimed and ran marks of every block.
var pagesMu sync.Mutex

var notRunMark = regexp.MustCompile(`^<!--\s*not run:\s*(.*?)\s*-->$`)

// Load reads and splits the page at path.
func Load(tb testing.TB, path string) *Page {
	tb.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return Parse(filepath.Base(path), string(text))
}

// Parse splits a page's text into its fenced blocks.
func Parse(name, text string) *Page {
	p := &Page{Name: name, Text: text}
	lines := strings.Split(text, "\n")
	heading := ""
	var cur *Block
	var body []string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case cur != nil && t == "```":
			cur.Text = strings.Join(body, "\n") + "\n"
			p.Blocks = append(p.Blocks, cur)
			cur = nil
		case cur != nil:
			body = append(body, l)
		case strings.HasPrefix(t, "```"):
			cur, body = &Block{Page: name, Line: i + 1, Lang: strings.TrimPrefix(t, "```"), Heading: heading}, nil
			if i > 0 {
				if m := notRunMark.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
					cur.NotRun = m[1]
					if cur.NotRun == "" {
						cur.NotRun = "(no reason given)"
					}
				}
			}
		case strings.HasPrefix(l, "#"):
			heading = strings.TrimSpace(l)
		}
	}
	return p
}

// Section returns the blocks whose nearest heading is heading, marked or
// not, without claiming them.
func (p *Page) Section(heading string) []*Block {
	var out []*Block
	for _, b := range p.Blocks {
		if b.Heading == heading {
			out = append(out, b)
		}
	}
	return out
}

// Claim returns the runnable blocks of lang ("sh" stands for sh and bash)
// under heading, and makes tb answerable for them: when tb ends neither
// skipped nor failed, each of them must have run. It fails tb when there is
// none, since the page no longer reads as the test expects.
func (p *Page) Claim(tb testing.TB, heading, lang string) []*Block {
	tb.Helper()
	var out []*Block
	pagesMu.Lock()
	for _, b := range p.Section(heading) {
		if b.Runnable() && (b.Lang == lang || lang == "sh" && b.shell()) {
			b.claimed = true
			out = append(out, b)
		}
	}
	pagesMu.Unlock()
	if len(out) == 0 {
		tb.Fatalf("%s has no %s block to run under %q", p.Name, lang, heading)
	}
	tb.Cleanup(func() {
		if tb.Skipped() || tb.Failed() {
			return
		}
		pagesMu.Lock()
		defer pagesMu.Unlock()
		for _, b := range out {
			if !b.ran {
				tb.Errorf("%s was claimed by %s but never run", b.Where(), tb.Name())
			}
		}
	})
	return out
}

// Check fails tb for every runnable block of the page that no test claimed:
// each must be run, or marked "<!-- not run: why -->" on the line before its
// fence.
func (p *Page) Check(tb testing.TB) {
	tb.Helper()
	pagesMu.Lock()
	defer pagesMu.Unlock()
	for _, b := range p.Blocks {
		if b.Runnable() && !b.claimed {
			tb.Errorf("%s: this %s block is run by no test. Run it from the page's test, or mark it "+
				"<!-- not run: why --> on the line before its fence, as the doctest package describes", b.Where(), b.Lang)
		}
	}
}
