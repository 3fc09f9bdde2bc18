package main

// The reference side of the envsubst corpus: reads cases (input, vars, strict) as a JSON
// array on stdin and prints what Flux's envsubst package makes of each: the parse tree
// (top-level lists flattened, empty text dropped), the output or the error, and whether Go
// panicked or produced invalid UTF-8. See gen.py.
import (
	"encoding/json"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/fluxcd/pkg/envsubst"
	"github.com/fluxcd/pkg/envsubst/parse"
)

type Case struct {
	Input  string            `json:"input"`
	Vars   map[string]string `json:"vars"`
	Strict bool              `json:"strict"`
}

type Result struct {
	Input  string        `json:"input"`
	Strict bool          `json:"strict"`
	Tree   []interface{} `json:"tree"`
	Output *string       `json:"output,omitempty"`
	Error  *string       `json:"error,omitempty"`
	Panic  string        `json:"panic,omitempty"`
	Bad    bool          `json:"invalid_utf8,omitempty"`
}

func conv(n parse.Node) interface{} {
	switch n := n.(type) {
	case *parse.TextNode:
		return map[string]interface{}{"text": n.Value}
	case *parse.FuncNode:
		args := []interface{}{}
		for _, a := range n.Args {
			args = append(args, conv(a))
		}
		return map[string]interface{}{"param": n.Param, "op": n.Name, "args": args}
	}
	panic("unexpected node")
}

func flatten(n parse.Node, out []interface{}) []interface{} {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			out = flatten(c, out)
		}
		return out
	case *parse.TextNode:
		if n.Value == "" {
			return out
		}
	}
	return append(out, conv(n))
}

func run(c Case) (r Result) {
	r = Result{Input: c.Input, Strict: c.Strict}
	defer func() {
		if p := recover(); p != nil {
			r.Panic = fmt.Sprint(p)
		}
	}()
	// A tree that fails to parse stays null; an empty one is [].
	if t, err := parse.Parse(c.Input); err == nil {
		r.Tree = flatten(t.Root, []interface{}{})
	}
	out, err := envsubst.Eval(c.Input, func(s string) (string, bool) {
		v, ok := c.Vars[s]
		if !c.Strict {
			return v, true
		}
		return v, ok
	})
	if err != nil {
		e := err.Error()
		r.Error = &e
	} else {
		r.Output = &out
		r.Bad = !utf8.ValidString(out)
	}
	return r
}

func main() {
	var cases []Case
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	var results []Result
	for _, c := range cases {
		if c.Vars == nil {
			c.Vars = map[string]string{}
		}
		results = append(results, run(c))
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(results); err != nil {
		panic(err)
	}
}
