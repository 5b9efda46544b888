package revision

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Lines is a range of lines, 1-based and inclusive. An empty range (To <
// From) is a position between lines: From-1 and From, where a pure
// insertion or deletion sits on the side that has no lines.
type Lines struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Empty reports whether the range holds no line.
func (l Lines) Empty() bool { return l.To < l.From }

func (l Lines) String() string {
	switch {
	case l.Empty():
		return fmt.Sprintf("(none, after line %d)", l.From-1)
	case l.From == l.To:
		return strconv.Itoa(l.From)
	}
	return fmt.Sprintf("%d-%d", l.From, l.To)
}

// Hunk is one contiguous change of a Go file under model/: its lines on
// the base revision's side and on the working tree's (one of them empty
// for a pure insertion or deletion), and the functions they lie in on
// each side ("" outside any function; several, comma-separated, when the
// lines span more than one).
type Hunk struct {
	File     string `json:"file"` // repository-relative, slash-separated
	Base     Lines  `json:"base"`
	Work     Lines  `json:"working"`
	BaseFunc string `json:"base_func,omitempty"`
	WorkFunc string `json:"working_func,omitempty"`
}

// ChangedHunks lists the hunks of the change from rev to the working tree
// (uncommitted changes and untracked files included) in the non-test Go
// files under model/, by file and line: what a diff's coverage build
// counts. Each hunk is a run of changed lines (git diff -U0).
func ChangedHunks(root, rev string) ([]Hunk, error) {
	cmd := exec.Command("git", "-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "-U0", "--no-renames",
		"--src-prefix=a/", "--dst-prefix=b/", rev, "--", "model/")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git diff %s: %s", Short(rev), FirstLine(stderr.Bytes(), err))
	}
	hunks, err := parseHunks(out)
	if err != nil {
		return nil, err
	}
	// Untracked files are in the working tree's build: each is one
	// insertion of all its lines.
	ls := exec.Command("git", "-c", "core.quotePath=false", "ls-files", "-o", "--exclude-standard", "-z", "--", "model/")
	ls.Dir = root
	untracked, err := ls.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(untracked), "\x00"), "\x00") {
		if !counted(f) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		if n > 0 {
			hunks = append(hunks, Hunk{File: f, Base: Lines{From: 1, To: 0}, Work: Lines{From: 1, To: n}})
		}
	}
	sort.SliceStable(hunks, func(i, j int) bool {
		if hunks[i].File != hunks[j].File {
			return hunks[i].File < hunks[j].File
		}
		return hunks[i].Work.From < hunks[j].Work.From
	})
	// The functions each side's lines lie in.
	for i := 0; i < len(hunks); {
		j := i
		for j < len(hunks) && hunks[j].File == hunks[i].File {
			j++
		}
		f := hunks[i].File
		var base, work *funcs
		if hasLines(hunks[i:j], func(h Hunk) Lines { return h.Base }) {
			show := exec.Command("git", "show", rev+":"+f)
			show.Dir = root
			src, err := show.Output()
			if err != nil {
				return nil, fmt.Errorf("git show %s:%s: %v", Short(rev), f, err)
			}
			base = funcsOf(f, src)
		}
		if hasLines(hunks[i:j], func(h Hunk) Lines { return h.Work }) {
			src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
			if err != nil {
				return nil, err
			}
			work = funcsOf(f, src)
		}
		for k := i; k < j; k++ {
			hunks[k].BaseFunc = base.in(hunks[k].Base)
			hunks[k].WorkFunc = work.in(hunks[k].Work)
		}
		i = j
	}
	return hunks, nil
}

// counted reports whether a path is a file whose changes coverage counts:
// a Go file under model/ that is not a test.
func counted(path string) bool {
	return strings.HasPrefix(path, "model/") && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
}

func hasLines(hs []Hunk, side func(Hunk) Lines) bool {
	for _, h := range hs {
		if !side(h).Empty() {
			return true
		}
	}
	return false
}

// parseHunks reads git diff -U0's output: the files' headers and each
// hunk's "@@ -a,b +c,d @@" line.
func parseHunks(out []byte) ([]Hunk, error) {
	var hunks []Hunk
	var file string // the file whose hunks follow, "" for one not counted
	var oldName string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "diff --git "):
			file, oldName = "", ""
		case strings.HasPrefix(line, "--- "):
			oldName = strings.TrimPrefix(strings.TrimPrefix(line, "--- "), "a/")
		case strings.HasPrefix(line, "+++ "):
			name := strings.TrimPrefix(line, "+++ ")
			if name == "/dev/null" { // deleted: the old name
				name = oldName
			} else {
				name = strings.TrimPrefix(name, "b/")
			}
			file = ""
			if counted(name) {
				file = name
			}
		case strings.HasPrefix(line, "@@ ") && file != "":
			h, err := hunkHeader(line)
			if err != nil {
				return nil, err
			}
			h.File = file
			hunks = append(hunks, h)
		}
	}
	return hunks, sc.Err()
}

// hunkHeader reads "@@ -a[,b] +c[,d] @@ ...". A count of 0 is an empty
// side, which git places after line a (or c).
func hunkHeader(line string) (Hunk, error) {
	fields := strings.Fields(line)
	if len(fields) < 3 || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
		return Hunk{}, fmt.Errorf("git diff: not a hunk header: %q", line)
	}
	side := func(s string) (Lines, error) {
		a, b, hasCount := strings.Cut(s[1:], ",")
		start, err := strconv.Atoi(a)
		if err != nil {
			return Lines{}, fmt.Errorf("git diff: not a hunk header: %q", line)
		}
		n := 1
		if hasCount {
			if n, err = strconv.Atoi(b); err != nil {
				return Lines{}, fmt.Errorf("git diff: not a hunk header: %q", line)
			}
		}
		if n == 0 {
			return Lines{From: start + 1, To: start}, nil
		}
		return Lines{From: start, To: start + n - 1}, nil
	}
	base, err := side(fields[1])
	if err != nil {
		return Hunk{}, err
	}
	work, err := side(fields[2])
	if err != nil {
		return Hunk{}, err
	}
	return Hunk{Base: base, Work: work}, nil
}

// funcs are a file's function declarations by their lines.
type funcs struct {
	names []string
	lines []Lines
}

// funcsOf parses a Go file for its functions; a file that does not parse
// has none that can be named.
func funcsOf(name string, src []byte) *funcs {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	fs := &funcs{}
	if f == nil {
		return fs
	}
	_ = err // a partial parse still names the functions it found; a doc comment is not its function
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		fs.names = append(fs.names, funcName(fd))
		fs.lines = append(fs.lines, Lines{From: fset.Position(fd.Pos()).Line, To: fset.Position(fd.End()).Line})
	}
	return fs
}

// funcName is a declaration's name as a person writes it: claimBatch,
// (*Arbiter).sweep, Lease.String.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) { // a generic receiver: its type's name
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	if star != "" {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// in names the functions a range of lines lies in: "" outside functions
// (or for an empty range), several comma-separated (at most three, then
// "..."), in the file's order.
func (fs *funcs) in(l Lines) string {
	if fs == nil || l.Empty() {
		return ""
	}
	var names []string
	for i, fl := range fs.lines {
		if fl.From <= l.To && l.From <= fl.To {
			names = append(names, fs.names[i])
		}
	}
	if len(names) > 3 {
		names = append(names[:3], "...")
	}
	return strings.Join(names, ", ")
}
