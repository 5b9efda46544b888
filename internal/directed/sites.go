package directed

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Site is lines of one file, repository-relative (slash-separated).
type Site struct {
	File     string
	From, To int
}

func (s Site) String() string { return fmt.Sprintf("%s:%d-%d", s.File, s.From, s.To) }

// KnobSites finds a knob's code under root's model/: the statements that
// test it. A knob is a constant of a model package whose value is the
// knob's name (`NoGrace Knob = "no-grace"`); each statement of that
// package (tests aside) whose condition names the constant (an if or a
// switch case around d.Has(NoGrace), its body included) is a site.
func KnobSites(root, knob string) ([]Site, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "model", "*"))
	if err != nil {
		return nil, err
	}
	var out []Site
	for _, dir := range dirs {
		fset := token.NewFileSet()
		files, err := parseDir(fset, dir)
		if err != nil {
			return nil, err
		}
		name := constantOf(files, knob)
		if name == "" {
			continue
		}
		for path, f := range files {
			rel, _ := filepath.Rel(root, path)
			for _, n := range testsOf(f, name) {
				from, to := fset.Position(n.Pos()).Line, fset.Position(n.End()).Line
				if is, ok := n.(*ast.IfStmt); ok && is.Else != nil {
					to = fset.Position(is.Body.End()).Line // the else is the design without the knob
				}
				out = append(out, Site{File: filepath.ToSlash(rel), From: from, To: to})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("knob %s: no statement under %s tests it", knob, filepath.Join(root, "model"))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].From < out[j].From
	})
	return out, nil
}

// testsOf finds the statements of f that test the constant: for each call
// X.Has(...) naming it, the if or switch case whose condition holds the
// call, or else the innermost statement around it (synced :=
// !c.d.Has(LogNotDurable)).
func testsOf(f *ast.File, name string) []ast.Node {
	var stack []ast.Node
	var out []ast.Node
	seen := map[ast.Node]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Has" || len(call.Args) != 1 || !names(call.Args[0], name) {
			return true
		}
		var site ast.Node
		for i := len(stack) - 2; i >= 0 && site == nil; i-- {
			switch s := stack[i].(type) {
			case *ast.IfStmt:
				if contains(s.Cond, call) {
					site = s
				}
			case *ast.CaseClause:
				for _, e := range s.List {
					if contains(e, call) {
						site = s
					}
				}
			}
		}
		if site == nil {
			for i := len(stack) - 2; i >= 0; i-- {
				if st, ok := stack[i].(ast.Stmt); ok {
					site = st
					break
				}
			}
		}
		if site != nil && !seen[site] {
			seen[site] = true
			out = append(out, site)
		}
		return true
	})
	return out
}

// contains reports whether the node n encloses x.
func contains(n, x ast.Node) bool {
	return n != nil && n.Pos() <= x.Pos() && x.End() <= n.End()
}

// parseDir parses a directory's Go files, tests aside.
func parseDir(fset *token.FileSet, dir string) (map[string]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // not a directory
	}
	out := map[string]*ast.File{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		p := filepath.Join(dir, n)
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		out[p] = f
	}
	return out, nil
}

// constantOf is the name of the constant whose value is the knob's name.
func constantOf(files map[string]*ast.File, knob string) string {
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if val, err := strconv.Unquote(lit.Value); err == nil && val == knob && i < len(vs.Names) {
							return vs.Names[i].Name
						}
					}
				}
			}
		}
	}
	return ""
}

// names reports whether an expression mentions the identifier.
func names(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}
