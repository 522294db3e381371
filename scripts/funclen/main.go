// Command funclen fails when a function of the product's code is longer
// than the house limit: go run ./scripts/funclen.
//
// It reads every non-test Go file under pkg/ and module/ and measures each
// function and method from its func line to its closing brace. A function
// longer than -max lines (60) fails the run unless it is one of the
// exceptions below, each with the reason it is kept whole; an exception
// that has become short enough fails the run too, so that the list only
// shrinks. -list prints every function over the limit and exits 0.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// exceptions are the functions allowed over the limit, by file and name
// (Type.Method for methods), each with why it is one piece.
var exceptions = map[string]string{
	"pkg/rawjson/valid.go validator.str": "the string scan of the JSON validator, on every published byte: " +
		"one loop over the escapes and UTF-8 sequences, whose state a split would pass through calls",
	"pkg/schema/eventgrid.go decoder.buildConverted": "a CloudEvent's members written in the order the " +
		"conversion writes them, sized first: one run of appends that reads against that order",
}

// long is one function over the limit.
type long struct {
	key   string // file and name, as in exceptions
	lines int
}

func main() {
	max := flag.Int("max", 60, "the most lines a function may have")
	list := flag.Bool("list", false, "print every function over -max and exit 0")
	flag.Parse()
	found, err := measure([]string{"pkg", "module"}, *max)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(1)
	}
	if *list {
		for _, l := range found {
			fmt.Printf("%d\t%s\n", l.lines, l.key)
		}
		return
	}
	if problems := judge(found, exceptions, *max); len(problems) > 0 {
		for _, p := range problems {
			fmt.Println(p)
		}
		os.Exit(1)
	}
	fmt.Printf("funclen: %d functions over %d lines, each an exception with its reason\n", len(found), *max)
}

// judge lists what fails: functions over max that are not exceptions, and
// exceptions that are no longer over it.
func judge(found []long, allowed map[string]string, max int) []string {
	var problems []string
	seen := map[string]bool{}
	for _, l := range found {
		seen[l.key] = true
		if _, ok := allowed[l.key]; !ok {
			problems = append(problems, fmt.Sprintf("%s: %d lines, over the %d-line limit: split it (or, if it must stay one piece, add it to the exceptions in scripts/funclen with the reason)", l.key, l.lines, max))
		}
	}
	for key := range allowed {
		if !seen[key] {
			problems = append(problems, fmt.Sprintf("%s: listed as an exception but no longer over %d lines (or gone): remove it from scripts/funclen", key, max))
		}
	}
	sort.Strings(problems)
	return problems
}

// measure returns the functions over max lines in the non-test Go files
// under roots, longest first.
func measure(roots []string, max int) ([]long, error) {
	fset := token.NewFileSet()
	var found []long
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				if n > max {
					found = append(found, long{key: filepath.ToSlash(p) + " " + funcName(fd), lines: n})
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].lines != found[j].lines {
			return found[i].lines > found[j].lines
		}
		return found[i].key < found[j].key
	})
	return found, nil
}

// funcName is fd's name, Type.Method for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
