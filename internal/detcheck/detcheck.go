package detcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Violation is one forbidden construct.
type Violation struct {
	Pos  token.Position
	What string
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s", v.Pos, v.What) }

// banned maps an import path to its forbidden package-level names; nil means
// the whole package is forbidden.
var banned = map[string]map[string]bool{
	"time": {"Now": true, "Sleep": true, "Since": true, "Until": true, "After": true, "AfterFunc": true,
		"Tick": true, "NewTimer": true, "NewTicker": true},
	"os":          {"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true, "Setenv": true},
	"crypto/rand": nil,
	"syscall":     {"Getenv": true},
}

// randAllowed are the math/rand constructors that take an explicit seed or
// source; every other package-level function of math/rand draws from the
// global generator.
var randAllowed = map[string]bool{"New": true, "NewSource": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true}

// File checks one file's source.
func File(fset *token.FileSet, name string, src []byte) ([]Violation, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Violation
	add := func(p token.Pos, format string, args ...any) {
		out = append(out, Violation{Pos: fset.Position(p), What: fmt.Sprintf(format, args...)})
	}
	alias := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if path == "math/rand/v2" {
			local = "rand"
		}
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if names, ok := banned[path]; ok && names == nil {
			add(imp.Pos(), "imports %s", path)
		}
		if local != "_" && local != "." {
			alias[local] = path
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			add(x.Pos(), "go statement")
		case *ast.SelectStmt:
			add(x.Pos(), "select statement")
		case *ast.ChanType:
			add(x.Pos(), "channel type")
		case *ast.SendStmt:
			add(x.Pos(), "channel send")
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				add(x.Pos(), "channel receive")
			}
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			if !ok {
				return true
			}
			path, ok := alias[id.Name]
			if !ok {
				return true
			}
			if path == "iter" && (x.Sel.Name == "Pull" || x.Sel.Name == "Pull2") && !inKernel(name) {
				add(x.Pos(), "iter.%s outside sim/ (coroutines belong to the kernel)", x.Sel.Name)
			}
			if names := banned[path]; names != nil && names[x.Sel.Name] {
				add(x.Pos(), "%s.%s", path, x.Sel.Name)
			}
			if (path == "math/rand" || path == "math/rand/v2") && !randAllowed[x.Sel.Name] && ast.IsExported(x.Sel.Name) && !isType(x.Sel.Name) {
				add(x.Pos(), "%s.%s (global generator)", path, x.Sel.Name)
			}
		}
		return true
	})
	return out, nil
}

func isType(name string) bool {
	switch name {
	case "Rand", "Source", "Source64", "PCG", "ChaCha8", "Zipf":
		return true
	}
	return false
}

// inKernel reports whether a file belongs to the kernel (package sim), the
// one place where coroutines (iter.Pull) may be made: the kernel alone
// resumes them, one at a time.
func inKernel(name string) bool {
	name = filepath.ToSlash(name)
	return strings.HasPrefix(name, "sim/") || strings.Contains(name, "/sim/")
}

// Dirs checks every non-test .go file under the given directories.
func Dirs(dirs ...string) ([]Violation, int, error) {
	fset := token.NewFileSet()
	var out []Violation
	files := 0
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v, err := File(fset, p, src)
			if err != nil {
				return err
			}
			files++
			out = append(out, v...)
			return nil
		})
		if err != nil {
			return nil, files, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos.String() < out[j].Pos.String() })
	return out, files, nil
}
