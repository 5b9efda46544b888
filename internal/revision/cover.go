package revision

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/internal/changecov"
)

// ErrPredates is BuildCovered's refusal of a tree without
// internal/changecov: a revision older than change coverage, whose
// fencesim would not take the counts of its runs even if the package were
// added to its build.
var ErrPredates = errors.New("the revision predates change coverage")

// changecovPkg is the import path the generated files register with.
const changecovPkg = "github.com/fencesim/fencesim/internal/changecov"

// BuildCovered builds srcDir's ./cmd/fencesim into bin with the files of
// the targets instrumented (go tool cover -mode=count) and registered with
// internal/changecov, so that the binary counts how often each target ran
// (changecov.Take). srcDir is never modified: the instrumented files, and
// one generated file per instrumented file that calls changecov.Register
// from init(), reach the build through go build -overlay. Targets need
// not hold statements (comments, declarations): they are registered with
// Stmts 0. A tree without internal/changecov is ErrPredates.
func BuildCovered(ctx context.Context, srcDir, bin string, targets []changecov.Target) error {
	if _, err := os.Stat(filepath.Join(srcDir, "internal", "changecov")); err != nil {
		return ErrPredates
	}
	work, err := os.MkdirTemp("", "fencesim-cover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	src, err := filepath.Abs(srcDir)
	if err != nil {
		return err
	}
	byFile := map[string][]changecov.Target{}
	var files []string
	for _, t := range targets {
		if !strings.HasSuffix(t.File, ".go") || path.IsAbs(t.File) || strings.HasPrefix(path.Clean(t.File), "..") {
			return fmt.Errorf("change coverage: %s is not a Go file of the tree", t.File)
		}
		if _, ok := byFile[t.File]; !ok {
			files = append(files, t.File)
		}
		byFile[t.File] = append(byFile[t.File], t)
	}
	sort.Strings(files)
	// A tree whose changecov takes the blocks of each target from the
	// build (Target.Blocks) is told them; an older one finds them itself.
	cc, err := os.ReadFile(filepath.Join(srcDir, "internal", "changecov", "changecov.go"))
	if err != nil {
		return fmt.Errorf("change coverage: %v", err)
	}
	withParts := bytes.Contains(cc, []byte("\tBlocks []int"))
	withLess := bytes.Contains(cc, []byte("\tLess [][]int"))
	replace := map[string]string{}
	for i, f := range files {
		real := filepath.Join(src, filepath.FromSlash(f))
		text, err := os.ReadFile(real)
		if err != nil {
			return fmt.Errorf("change coverage: %v", err)
		}
		v := fmt.Sprintf("FenceCov%d", i)
		covered := filepath.Join(work, fmt.Sprintf("cover%d.go", i))
		// Run in srcDir with the relative name: the instrumented file's
		// //line directive keeps the repository's path.
		c := exec.CommandContext(ctx, "go", "tool", "cover", "-mode=count", "-var="+v, "-o", covered, filepath.FromSlash(f))
		c.Dir = src
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("go tool cover %s: %s", f, FirstLine(out, err))
		}
		pos, err := coverPos(covered, v)
		if err != nil {
			return fmt.Errorf("change coverage: %s: %v", f, err)
		}
		tight := tighten(text, pos)
		ts := byFile[f]
		if withParts {
			ts = append([]changecov.Target(nil), ts...)
			raw := pos
			if !withLess {
				raw = nil
			}
			a := newAttributor(text, tight, raw)
			for k := range ts {
				ts[k].Blocks, ts[k].Less, ts[k].Parts, ts[k].Start = a.attribute(ts[k].From, ts[k].To)
			}
		}
		reg, err := registration(f, text, v, tight, ts, withParts)
		if err != nil {
			return err
		}
		gen := filepath.Join(work, fmt.Sprintf("register%d.go", i))
		if err := os.WriteFile(gen, reg, 0o644); err != nil {
			return err
		}
		genAt := filepath.Join(filepath.Dir(real), fmt.Sprintf("zz_fencesim_changecov%d.go", i))
		if _, err := os.Stat(genAt); err == nil {
			return fmt.Errorf("change coverage: %s exists: it is the name of a generated file", genAt)
		}
		replace[real], replace[genAt] = covered, gen
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return err
	}
	ov := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return err
	}
	return goBuild(ctx, src, bin, "-overlay", ov)
}

// registration is the generated file that registers an instrumented
// file's targets and counters, in the file's package and under its build
// constraint. pos is the blocks' positions, tightened to their code.
func registration(name string, src []byte, v string, pos []uint32, ts []changecov.Target, withParts bool) ([]byte, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("change coverage: %v", err)
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by fencesim diff's coverage build (internal/revision). DO NOT EDIT.\n\n")
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build ") {
				b.WriteString(c.Text + "\n\n")
			}
		}
	}
	fmt.Fprintf(&b, "package %s\n\nimport changecov %q\n\nfunc init() {\n\tchangecov.Register(%q, []changecov.Target{\n", f.Name.Name, changecovPkg, name)
	for _, t := range ts {
		fmt.Fprintf(&b, "\t\t{ID: %d, File: %q, From: %d, To: %d, Func: %q", t.ID, t.File, t.From, t.To, t.Func)
		if withParts {
			fmt.Fprintf(&b, ", Start: %t, Blocks: []int{", t.Start)
			for k, x := range t.Blocks {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d", x)
			}
			b.WriteString("}")
			if t.Less != nil {
				b.WriteString(", Less: [][]int{")
				for k, l := range t.Less {
					if k > 0 {
						b.WriteString(", ")
					}
					if l == nil {
						b.WriteString("nil")
						continue
					}
					b.WriteString("{")
					for j, x := range l {
						if j > 0 {
							b.WriteString(", ")
						}
						fmt.Fprintf(&b, "%d", x)
					}
					b.WriteString("}")
				}
				b.WriteString("}")
			}
			b.WriteString(", Parts: []changecov.Part{")
			for k, x := range t.Parts {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "{From: %d, To: %d}", x.From, x.To)
			}
			b.WriteString("}")
		}
		b.WriteString("},\n")
	}
	fmt.Fprintf(&b, "\t}, %s.Count[:], []uint32{", v)
	for i, x := range pos {
		if i%3 == 0 {
			b.WriteString("\n\t\t")
		} else {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d,", x)
	}
	fmt.Fprintf(&b, "\n\t}, %s.NumStmt[:])\n}\n", v)
	return b.Bytes(), nil
}

// coverPos reads the Pos array of go tool cover's counters variable v
// from the instrumented file: three values a block, its start line, end
// line and packed columns (end<<16 | start).
func coverPos(file, v string) ([]uint32, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			if len(vs.Names) != 1 || vs.Names[0].Name != v || len(vs.Values) != 1 {
				continue
			}
			lit, ok := vs.Values[0].(*ast.CompositeLit)
			if !ok {
				break
			}
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok || fmt.Sprint(kv.Key) != "Pos" {
					continue
				}
				arr, ok := kv.Value.(*ast.CompositeLit)
				if !ok {
					break
				}
				pos := make([]uint32, 0, len(arr.Elts))
				for _, x := range arr.Elts {
					bl, ok := x.(*ast.BasicLit)
					if !ok {
						return nil, fmt.Errorf("go tool cover's %s.Pos holds %T", v, x)
					}
					n, err := strconv.ParseUint(bl.Value, 0, 32)
					if err != nil {
						return nil, err
					}
					pos = append(pos, uint32(n))
				}
				return pos, nil
			}
		}
	}
	return nil, fmt.Errorf("no %s.Pos in go tool cover's output", v)
}

// tighten narrows each block's lines to the lines of its code. A cover
// block runs from just after an opening brace to its closing brace, so
// the line of "} else {" belongs to the blocks on both sides, and a
// comment-only line next to a brace to a block it has no code of; a target
// on such a line would count a block that has nothing there. Comments,
// braces and the semicolons Go inserts are not code; a block without code
// (an empty body) gets lines 0-0, which no target overlaps.
func tighten(src []byte, pos []uint32) []uint32 {
	code, lines := codeOf(src)
	offset := func(line, col uint32) int {
		if line < 1 || int(line) > len(lines) {
			return len(src)
		}
		return min(lines[line-1]+int(col)-1, len(src))
	}
	lineOf := func(off int) uint32 {
		return uint32(sort.Search(len(lines), func(i int) bool { return lines[i] > off }))
	}
	out := append([]uint32(nil), pos...)
	for b := 0; b+2 < len(pos); b += 3 {
		s := offset(pos[b], pos[b+2]&0xFFFF)
		e := offset(pos[b+1], pos[b+2]>>16)
		for s < e && !code[s] {
			s++
		}
		for e > s && !code[e-1] {
			e--
		}
		if s >= e {
			out[b], out[b+1] = 0, 0
			continue
		}
		out[b], out[b+1] = lineOf(s), lineOf(e-1)
	}
	return out
}

// codeOf marks each byte of src that is part of a token other than a brace
// or an inserted semicolon (comments are not tokens), and returns the
// offset of each line's start.
func codeOf(src []byte) (code []bool, lines []int) {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	code = make([]bool, len(src))
	for {
		p, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.LBRACE || tok == token.RBRACE || (tok == token.SEMICOLON && lit == "\n") {
			continue
		}
		off := file.Offset(p)
		n := len(lit)
		if n == 0 {
			n = len(tok.String())
		}
		for i := off; i < off+n && i < len(code); i++ {
			code[i] = true
		}
	}
	lines = []int{0}
	for i, c := range src {
		if c == '\n' {
			lines = append(lines, i+1)
		}
	}
	return code, lines
}

// attributor finds the cover blocks that hold a target's code in one file
// (pos is the file's blocks, tightened), one part per block. A line holds
// code when a token other than a brace is on it (a comment-only line holds
// none). Its blocks are those whose lines hold it; for a line no block
// holds, the block its code runs in: a function's signature with its
// body's first statement; a select case's expressions run when their select
// does (all of them, on entry), so they count with the select's block. A
// switch's case expressions run when the switch reaches their clause: as
// often as the switch ran, less the passes in which an earlier clause
// matched (the counts of those clauses' bodies; a clause entered by
// fallthrough is left out of them, its count mixing the two), so a case
// counts with the switch's block less those bodies (a part's less); a
// default clause, reached when no other clause matched, with the switch's
// block less every other clause's body. Where the build's changecov cannot
// take counts (an older base revision), a case counts with its switch. A
// line of
// an init function or of a package-level var declaration runs when the
// program starts, before any run (start), and no block counts it, but for
// the lines of a function literal that such a var holds and does not call
// there (var f = func(...) {...}, a table of handlers): its body runs when
// it is called, in a run, and is counted by its blocks as any function's,
// its signature with its body's first statement.
type attributor struct {
	code    []bool // a byte of a token other than a brace (codeOf)
	lines   []int  // each line's first byte
	pos     []uint32
	raw     []uint32 // pos as go tool cover wrote it (nil: no less)
	startup []span   // init functions and package var declarations
	runtime []span   // function literals a package var holds: not start-up code
	via     []span   // lines no block holds, and the line whose blocks run them
}

// span is lines from-to, and the line whose blocks run them (attributor);
// or, when block is set (a case clause), that block less the blocks of
// less.
type span struct {
	from, to, at int
	block        *int
	less         []int
}

// newAttributor reads src's blocks: pos tightened (tighten), raw as go
// tool cover wrote them, nil when the build's changecov cannot take counts
// (Target.Less): a case then counts with its switch.
func newAttributor(src []byte, pos, raw []uint32) *attributor {
	a := &attributor{pos: pos, raw: raw}
	a.code, a.lines = codeOf(src)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return a // go tool cover took it: a tree that does not build fails later
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			if d.Name.Name == "init" && d.Recv == nil {
				a.startup = append(a.startup, span{from: line(d.Pos()), to: line(d.End())})
				continue
			}
			if len(d.Body.List) > 0 {
				a.via = append(a.via, span{from: line(d.Pos()), to: line(d.Body.Lbrace), at: line(d.Body.List[0].Pos())})
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			a.startup = append(a.startup, span{from: line(d.Pos()), to: line(d.End())})
			// A function literal the declaration calls runs at start-up
			// (var x = func() T {...}()); one it only holds runs when
			// called.
			called := map[*ast.FuncLit]bool{}
			ast.Inspect(d, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if fl, ok := ast.Unparen(c.Fun).(*ast.FuncLit); ok {
						called[fl] = true
					}
				}
				fl, ok := n.(*ast.FuncLit)
				if !ok || called[fl] {
					return true
				}
				a.runtime = append(a.runtime, span{from: line(fl.Pos()), to: line(fl.End())})
				if len(fl.Body.List) > 0 {
					a.via = append(a.via, span{from: line(fl.Pos()), to: line(fl.Body.Lbrace), at: line(fl.Body.List[0].Pos())})
				}
				return false // what it holds runs when it does
			})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.SwitchStmt:
			body = n.Body
		case *ast.TypeSwitchStmt:
			body = n.Body
		case *ast.SelectStmt:
			body = n.Body
		default:
			return true
		}
		sw, ok := a.rawEnding(fset.Position(body.Lbrace))
		if _, sel := n.(*ast.SelectStmt); sel || !ok {
			sw = -1
		}
		// Each clause's body block, and whether it counts the clause's
		// matches: not a default, not entered by fallthrough.
		bodies := make([]int, len(body.List))
		matches := make([]bool, len(body.List))
		for k, c := range body.List {
			switch c := c.(type) {
			case *ast.CaseClause:
				col := fset.Position(c.Colon)
				col.Column++
				b, ok := a.rawStarting(col)
				if !ok {
					sw = -1 // not the blocks go tool cover makes: the switch's block alone
				}
				bodies[k] = b
				matches[k] = c.List != nil && !(k > 0 && fallsThrough(body.List[k-1]))
			case *ast.CommClause:
				a.via = append(a.via, span{from: line(c.Case), to: line(c.Colon), at: line(n.Pos())})
			}
		}
		for k, c := range body.List {
			c, ok := c.(*ast.CaseClause)
			if !ok {
				continue
			}
			v := span{from: line(c.Case), to: line(c.Colon), at: line(n.Pos())}
			if sw >= 0 {
				v.block, v.less = &sw, []int{}
				for j := range body.List {
					// A case: the clauses before it that matched; a
					// default: every clause that matched.
					if matches[j] && j != k && (j < k || c.List == nil) {
						v.less = append(v.less, bodies[j])
					}
				}
				if len(v.less) == 0 {
					v.less = nil // the switch's block as it is (the first case)
				}
			}
			a.via = append(a.via, v)
		}
		return true
	})
	return a
}

// fallsThrough reports whether a clause ends with fallthrough.
func fallsThrough(c ast.Stmt) bool {
	cc, ok := c.(*ast.CaseClause)
	if !ok || len(cc.Body) == 0 {
		return false
	}
	b, ok := cc.Body[len(cc.Body)-1].(*ast.BranchStmt)
	return ok && b.Tok == token.FALLTHROUGH
}

// rawStarting finds the block go tool cover starts at p (line and column).
func (a *attributor) rawStarting(p token.Position) (int, bool) {
	for b := 0; b+2 < len(a.raw); b += 3 {
		if int(a.raw[b]) == p.Line && int(a.raw[b+2]&0xFFFF) == p.Column {
			return b / 3, true
		}
	}
	return -1, false
}

// rawEnding finds the block go tool cover ends at p: the block a switch
// statement closes ends at its body's opening brace.
func (a *attributor) rawEnding(p token.Position) (int, bool) {
	for b := 0; b+2 < len(a.raw); b += 3 {
		if int(a.raw[b+1]) == p.Line && int(a.raw[b+2]>>16) == p.Column {
			return b / 3, true
		}
	}
	return -1, false
}

// hasCode reports whether line l holds code.
func (a *attributor) hasCode(l int) bool {
	if l < 1 || l > len(a.lines) {
		return false
	}
	end := len(a.code)
	if l < len(a.lines) {
		end = a.lines[l]
	}
	return slices.Contains(a.code[a.lines[l-1]:end], true)
}

// blocksAt returns the blocks whose lines hold line l.
func (a *attributor) blocksAt(l int) []int {
	var out []int
	for b := 0; b+2 < len(a.pos); b += 3 {
		if a.pos[b] > 0 && int(a.pos[b]) <= l && l <= int(a.pos[b+1]) {
			out = append(out, b/3)
		}
	}
	return out
}

// in returns the span of ss that holds line l.
func in(ss []span, l int) (span, bool) {
	for _, s := range ss {
		if s.from <= l && l <= s.to {
			return s, true
		}
	}
	return span{}, false
}

// attribute returns the blocks that hold the code of lines from-to, each
// one's part (the lines of from-to it holds), per part the blocks whose
// counts are taken from its block's (a case clause's: nil for a part
// without), and whether some of the lines are start-up code.
func (a *attributor) attribute(from, to int) (blocks []int, less [][]int, parts []changecov.Part, start bool) {
	blocks, parts = []int{}, []changecov.Part{}
	add := func(b int, minus []int, l int) {
		for k := range blocks {
			if blocks[k] == b && slices.Equal(less[k], minus) && (less[k] == nil) == (minus == nil) {
				parts[k].From, parts[k].To = min(parts[k].From, l), max(parts[k].To, l)
				return
			}
		}
		blocks, less, parts = append(blocks, b), append(less, minus), append(parts, changecov.Part{From: l, To: l})
	}
	for l := from; l <= to; l++ {
		if !a.hasCode(l) {
			continue
		}
		if _, ok := in(a.startup, l); ok {
			if _, run := in(a.runtime, l); !run {
				start = true
				continue
			}
		}
		bs := a.blocksAt(l)
		if len(bs) == 0 {
			if s, ok := in(a.via, l); ok {
				if s.block != nil {
					add(*s.block, s.less, l)
					continue
				}
				bs = a.blocksAt(s.at)
			}
		}
		for _, b := range bs {
			add(b, nil, l)
		}
	}
	if !slices.ContainsFunc(less, func(x []int) bool { return x != nil }) {
		less = nil
	}
	return blocks, less, parts, start
}

// goBuild builds dir's ./cmd/fencesim into bin. -trimpath: the build does
// not depend on the directory, so the two sides share the build cache for
// every package they share. -ldflags=-s -w: no symbol table or DWARF, which
// nothing a diff runs reads (stack traces and profiles name functions from
// the runtime's own tables), and a link about 0.4 s shorter, a third of an
// edited tree's build (measured 2026-12-04: 1.5-1.7 s against 1.0-1.3 s).
func goBuild(ctx context.Context, dir, bin string, flags ...string) error {
	args := append([]string{"build", "-trimpath", "-ldflags=-s -w"}, flags...)
	b := exec.CommandContext(ctx, "go", append(args, "-o", bin, "./cmd/fencesim")...)
	b.Dir = dir
	if out, err := b.CombinedOutput(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return errNoGo
		}
		return &buildError{compilerLine(out, err)}
	}
	return nil
}

// compilerLine is the first line of go build's output that says what is
// wrong: not the "# package" line go prints above a package's errors.
func compilerLine(out []byte, err error) string {
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "# ") {
			return l
		}
	}
	return FirstLine(out, err)
}

var errNoGo = errors.New("diff builds fencesim with the go command: put go on PATH")

// buildError is a tree that does not build: the compiler's first line.
type buildError struct{ msg string }

func (e *buildError) Error() string { return e.msg }

// coverScheme names how BuildCovered instruments, for the cache: a
// change to it (the blocks' tightening, the generated file) must not
// fetch binaries built the old way.
const coverScheme = "cover-count/tightened/parts/less/4"

// targetsKey is a hash of the targets and the scheme, for the cache.
func targetsKey(ts []changecov.Target) string {
	b, _ := json.Marshal(ts)
	b = append(b, coverScheme...)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
