package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A fenced Go block that quotes a source file says so with a marker on the
// last non-blank line before its fence:
//
//	<!-- quote: model/judge/arbiter.go -->
//	```go
//	...
//	```
//
// Every non-blank line of the block, whitespace-trimmed, must be a line of
// that file (trimmed), in the block's order; a line that is exactly "..."
// marks lines left out. Go blocks without the marker (examples, code to
// write) are not checked.
var quoteMarker = regexp.MustCompile(`^<!--\s*quote:\s*(\S+)\s*-->$`)

// elision is the line that stands for lines left out of a quote.
const elision = "..."

// quote is one marked block of a document.
type quote struct {
	doc   string   // the document, relative to the module root
	file  string   // the quoted source file, relative to the module root
	line  int      // the block's first line in doc (1-based)
	lines []string // the block's lines, as written
	err   string   // a malformed marker or block, when not empty
}

// quotes returns the marked blocks of a document's text.
func quotes(doc, text string) []quote {
	var out []quote
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := quoteMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		q := quote{doc: doc, file: m[1], line: i + 1}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || strings.TrimSpace(lines[j]) != "```go" {
			q.err = fmt.Sprintf("%s:%d: the quote marker of %s is not followed by a ```go block", doc, i+1, q.file)
			out = append(out, q)
			continue
		}
		q.line = j + 2
		k := j + 1
		for k < len(lines) && strings.TrimSpace(lines[k]) != "```" {
			k++
		}
		if k == len(lines) {
			q.err = fmt.Sprintf("%s:%d: the block quoting %s never ends", doc, j+1, q.file)
			out = append(out, q)
			break
		}
		q.lines = lines[j+1 : k]
		out = append(out, q)
		i = k
	}
	return out
}

// checkQuote returns nil when every line of the block is in src in order,
// or an error naming the document, the line and the file.
func checkQuote(q quote, src string) error {
	if q.err != "" {
		return fmt.Errorf("%s", q.err)
	}
	var have []string
	for _, l := range strings.Split(src, "\n") {
		have = append(have, strings.TrimSpace(l))
	}
	at := 0 // the next line of src a quoted line may match
	for i, l := range q.lines {
		want := strings.TrimSpace(l)
		if want == "" || want == elision {
			continue
		}
		found := -1
		for j := at; j < len(have); j++ {
			if have[j] == want {
				found = j
				break
			}
		}
		if found < 0 {
			where := "is not in"
			for j := 0; j < at; j++ {
				if have[j] == want {
					where = "is in, but not after the block's previous line, in"
					break
				}
			}
			return fmt.Errorf("%s:%d: the quoted line %q %s %s", q.doc, q.line+i, want, where, q.file)
		}
		at = found + 1
	}
	return nil
}

// docsToCheck lists README.md and every Markdown file under docs/.
func docsToCheck(t *testing.T, dir string) []string {
	out := []string{"README.md"}
	md, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	require.NoError(t, err)
	for _, p := range md {
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// TestQuotedCodeIsInTheSource: every Go block marked as quoting a source
// file (README.md, docs/*.md) quotes lines the file has, in order.
func TestQuotedCodeIsInTheSource(t *testing.T) {
	dir := root(t)
	n := 0
	for _, doc := range docsToCheck(t, dir) {
		for _, q := range quotes(doc, read(t, dir, doc)) {
			n++
			src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(q.file)))
			if !assert.NoError(t, err, "%s:%d quotes %s, which cannot be read", q.doc, q.line, q.file) {
				continue
			}
			assert.NoError(t, checkQuote(q, string(src)))
		}
	}
	require.NotZero(t, n, "no quote markers found in README.md or docs/: the walk is broken, or the markers were lost")
	t.Logf("%d quoted blocks checked", n)
}

// TestQuoteCheckCanFail: the check passes a faithful quote and fails a
// wrong one, naming the document, the line and the file.
func TestQuoteCheckCanFail(t *testing.T) {
	src := strings.Join([]string{
		"package x",
		"",
		"func f(a int) int {",
		"\tb := a + 1",
		"\treturn b",
		"}",
		"",
		"func RecordClaim(worker, requestID string, l Lease, slot int) db.Stmt {",
		"\treturn nil",
		"}",
	}, "\n")
	doc := func(body ...string) string {
		return strings.Join(append(append([]string{"# A page", "", "<!-- quote: x/x.go -->", "```go"}, body...), "```", ""), "\n")
	}
	cases := []struct {
		name string
		text string
		want string // "" passes; otherwise what the error must say
	}{
		{"faithful", doc("func f(a int) int {", "    b := a + 1", "", "\treturn b"), ""},
		{"elided", doc("func f(a int) int {", "...", "}"), ""},
		{"a line the file does not have", doc("func f(a int) int {", "\treturn a"),
			`page.md:6: the quoted line "return a" is not in x/x.go`},
		{"an old signature", doc("func RecordClaim(worker, requestID string, l Lease) db.Stmt {"),
			`page.md:5: the quoted line "func RecordClaim(worker, requestID string, l Lease) db.Stmt {" is not in x/x.go`},
		{"out of order", doc("return b", "b := a + 1"),
			`page.md:6: the quoted line "b := a + 1" is in, but not after the block's previous line, in x/x.go`},
		{"a marker without a Go block", "<!-- quote: x/x.go -->\n```sh\nls\n```\n",
			"page.md:1: the quote marker of x/x.go is not followed by a ```go block"},
		{"a block that never ends", "<!-- quote: x/x.go -->\n```go\nreturn b\n",
			"page.md:2: the block quoting x/x.go never ends"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			qs := quotes("page.md", c.text)
			require.Len(t, qs, 1)
			err := checkQuote(qs[0], src)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err, "the check must fail")
			assert.Equal(t, c.want, err.Error())
		})
	}
	// An unmarked Go block is not a quote.
	assert.Empty(t, quotes("page.md", "```go\nanything()\n```\n"))
}
