//! Go's `text/template/parse` parser tests (parse_test.go: TestNumberParse, TestParse,
//! TestParseWithComments, TestKeywordsAndFuncs, TestSkipFuncCheck, TestIsEmpty, TestErrors,
//! TestBlock, TestLineNum), ported as data. Trees print back as Go prints them, text quoted.

use tidegate_helm::template::node::{Node, Printer, is_empty_tree};
use tidegate_helm::template::number::Number;
use tidegate_helm::template::parse::{MAX_STACK_DEPTH, ParseOptions, Tree, parse};

fn options<'a>(funcs: &'a dyn Fn(&str) -> bool) -> ParseOptions<'a> {
    ParseOptions {
        left: "",
        right: "",
        has_function: funcs,
        skip_func_check: false,
        parse_comments: false,
    }
}

/// Go's test function map: `printf` and `contains`.
fn builtins(name: &str) -> bool {
    matches!(name, "printf" | "contains")
}

fn none(_: &str) -> bool {
    false
}

fn top(trees: &[Tree], name: &str) -> String {
    let tree = trees
        .iter()
        .find(|t| t.name == name)
        .expect("top-level tree");
    let mut out = String::new();
    Printer { quote_text: true }.list(&mut out, &tree.root);
    out
}

#[test]
fn go_number_parse() {
    // text, isInt, isUint, isFloat, isComplex, int64, uint64, float64, complex128
    type Case = (
        &'static str,
        bool,
        bool,
        bool,
        bool,
        i64,
        u64,
        f64,
        (f64, f64),
    );
    let cases: Vec<Case> = vec![
        ("0", true, true, true, false, 0, 0, 0.0, (0.0, 0.0)),
        ("-0", true, true, true, false, 0, 0, 0.0, (0.0, 0.0)),
        ("73", true, true, true, false, 73, 73, 73.0, (0.0, 0.0)),
        ("7_3", true, true, true, false, 73, 73, 73.0, (0.0, 0.0)),
        (
            "0b10_010_01",
            true,
            true,
            true,
            false,
            73,
            73,
            73.0,
            (0.0, 0.0),
        ),
        (
            "0B10_010_01",
            true,
            true,
            true,
            false,
            73,
            73,
            73.0,
            (0.0, 0.0),
        ),
        ("073", true, true, true, false, 0o73, 0o73, 59.0, (0.0, 0.0)),
        (
            "0o73",
            true,
            true,
            true,
            false,
            0o73,
            0o73,
            59.0,
            (0.0, 0.0),
        ),
        (
            "0O73",
            true,
            true,
            true,
            false,
            0o73,
            0o73,
            59.0,
            (0.0, 0.0),
        ),
        (
            "0x73",
            true,
            true,
            true,
            false,
            0x73,
            0x73,
            115.0,
            (0.0, 0.0),
        ),
        (
            "0X73",
            true,
            true,
            true,
            false,
            0x73,
            0x73,
            115.0,
            (0.0, 0.0),
        ),
        (
            "0x7_3",
            true,
            true,
            true,
            false,
            0x73,
            0x73,
            115.0,
            (0.0, 0.0),
        ),
        ("-73", true, false, true, false, -73, 0, -73.0, (0.0, 0.0)),
        ("+73", true, false, true, false, 73, 0, 73.0, (0.0, 0.0)),
        ("100", true, true, true, false, 100, 100, 100.0, (0.0, 0.0)),
        (
            "1e9",
            true,
            true,
            true,
            false,
            1_000_000_000,
            1_000_000_000,
            1e9,
            (0.0, 0.0),
        ),
        (
            "-1e9",
            true,
            false,
            true,
            false,
            -1_000_000_000,
            0,
            -1e9,
            (0.0, 0.0),
        ),
        ("-1.2", false, false, true, false, 0, 0, -1.2, (0.0, 0.0)),
        (
            "1e19",
            false,
            true,
            true,
            false,
            0,
            10_000_000_000_000_000_000,
            1e19,
            (0.0, 0.0),
        ),
        (
            "1e1_9",
            false,
            true,
            true,
            false,
            0,
            10_000_000_000_000_000_000,
            1e19,
            (0.0, 0.0),
        ),
        (
            "1E19",
            false,
            true,
            true,
            false,
            0,
            10_000_000_000_000_000_000,
            1e19,
            (0.0, 0.0),
        ),
        ("-1e19", false, false, true, false, 0, 0, -1e19, (0.0, 0.0)),
        ("0x_1p4", true, true, true, false, 16, 16, 16.0, (0.0, 0.0)),
        ("0X_1P4", true, true, true, false, 16, 16, 16.0, (0.0, 0.0)),
        (
            "0x_1p-4",
            false,
            false,
            true,
            false,
            0,
            0,
            1.0 / 16.0,
            (0.0, 0.0),
        ),
        ("4i", false, false, false, true, 0, 0, 0.0, (0.0, 4.0)),
        (
            "-1.2+4.2i",
            false,
            false,
            false,
            true,
            0,
            0,
            0.0,
            (-1.2, 4.2),
        ),
        ("073i", false, false, false, true, 0, 0, 0.0, (0.0, 73.0)),
        ("0i", true, true, true, true, 0, 0, 0.0, (0.0, 0.0)),
        ("-1.2+0i", false, false, true, true, 0, 0, -1.2, (-1.2, 0.0)),
        (
            "-12+0i",
            true,
            false,
            true,
            true,
            -12,
            0,
            -12.0,
            (-12.0, 0.0),
        ),
        ("13+0i", true, true, true, true, 13, 13, 13.0, (13.0, 0.0)),
        (
            "0123",
            true,
            true,
            true,
            false,
            0o123,
            0o123,
            83.0,
            (0.0, 0.0),
        ),
        ("-0x0", true, true, true, false, 0, 0, 0.0, (0.0, 0.0)),
        (
            "0xdeadbeef",
            true,
            true,
            true,
            false,
            0xdeadbeef,
            0xdeadbeef,
            3735928559.0,
            (0.0, 0.0),
        ),
        ("'a'", true, true, true, false, 97, 97, 97.0, (0.0, 0.0)),
        ("'\\n'", true, true, true, false, 10, 10, 10.0, (0.0, 0.0)),
        ("'\\\\'", true, true, true, false, 92, 92, 92.0, (0.0, 0.0)),
        ("'\\''", true, true, true, false, 39, 39, 39.0, (0.0, 0.0)),
        (
            "'\\xFF'",
            true,
            true,
            true,
            false,
            0xFF,
            0xFF,
            255.0,
            (0.0, 0.0),
        ),
        (
            "'パ'",
            true,
            true,
            true,
            false,
            0x30d1,
            0x30d1,
            12497.0,
            (0.0, 0.0),
        ),
        (
            "'\\u30d1'",
            true,
            true,
            true,
            false,
            0x30d1,
            0x30d1,
            12497.0,
            (0.0, 0.0),
        ),
        (
            "'\\U000030d1'",
            true,
            true,
            true,
            false,
            0x30d1,
            0x30d1,
            12497.0,
            (0.0, 0.0),
        ),
        ("+-2", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        ("0x123.", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        ("1e.", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        ("0xi.", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        ("1+2.", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        ("'x", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        ("'xx'", false, false, false, false, 0, 0, 0.0, (0.0, 0.0)),
        (
            "'433937734937734969526500969526500'",
            false,
            false,
            false,
            false,
            0,
            0,
            0.0,
            (0.0, 0.0),
        ),
        (
            "0xef",
            true,
            true,
            true,
            false,
            0xef,
            0xef,
            239.0,
            (0.0, 0.0),
        ),
    ];
    for (text, is_int, is_uint, is_float, is_complex, int, uint, float, complex) in cases {
        let char = text.starts_with('\'');
        // Go's test calls a text complex when fmt.Sscan reads it as one: a sign inside it.
        let complex_item = !char && text.ends_with('i') && text[1..].contains(['+', '-']);
        let ok = is_int || is_uint || is_float || is_complex;
        let n = match Number::parse(text, char, complex_item) {
            Ok(n) => n,
            Err(e) => {
                assert!(!ok, "unexpected error for {text:?}: {e}");
                continue;
            }
        };
        assert!(ok, "expected error for {text:?}, got {n:?}");
        assert_eq!(n.is_complex, is_complex, "complex for {text:?}");
        assert_eq!(n.is_int, is_int, "int for {text:?}");
        assert_eq!(n.is_uint, is_uint, "uint for {text:?}");
        assert_eq!(n.is_float, is_float, "float for {text:?}");
        if is_int {
            assert_eq!(n.int, int, "int64 for {text:?}");
        }
        if is_uint {
            assert_eq!(n.uint, uint, "uint64 for {text:?}");
        }
        if is_float {
            assert_eq!(n.float, float, "float64 for {text:?}");
        }
        if is_complex {
            assert_eq!(n.complex, complex, "complex128 for {text:?}");
        }
    }
}

const OK: bool = true;
const ERR: bool = false;

#[test]
fn go_parse() {
    let cases: Vec<(&str, &str, bool, &str)> = vec![
        ("empty", "", OK, ""),
        ("comment", "{{/*\n\n\n*/}}", OK, ""),
        ("spaces", " \t\n", OK, "\" \\t\\n\""),
        ("text", "some text", OK, "\"some text\""),
        ("emptyAction", "{{}}", ERR, "{{}}"),
        ("field", "{{.X}}", OK, "{{.X}}"),
        ("simple command", "{{printf}}", OK, "{{printf}}"),
        ("$ invocation", "{{$}}", OK, "{{$}}"),
        (
            "variable invocation",
            "{{with $x := 3}}{{$x 23}}{{end}}",
            OK,
            "{{with $x := 3}}{{$x 23}}{{end}}",
        ),
        ("variable with fields", "{{$.I}}", OK, "{{$.I}}"),
        (
            "multi-word command",
            "{{printf `%d` 23}}",
            OK,
            "{{printf `%d` 23}}",
        ),
        ("pipeline", "{{.X|.Y}}", OK, "{{.X | .Y}}"),
        (
            "pipeline with decl",
            "{{$x := .X|.Y}}",
            OK,
            "{{$x := .X | .Y}}",
        ),
        (
            "nested pipeline",
            "{{.X (.Y .Z) (.A | .B .C) (.E)}}",
            OK,
            "{{.X (.Y .Z) (.A | .B .C) (.E)}}",
        ),
        (
            "field applied to parentheses",
            "{{(.Y .Z).Field}}",
            OK,
            "{{(.Y .Z).Field}}",
        ),
        (
            "simple if",
            "{{if .X}}hello{{end}}",
            OK,
            "{{if .X}}\"hello\"{{end}}",
        ),
        (
            "if with else",
            "{{if .X}}true{{else}}false{{end}}",
            OK,
            "{{if .X}}\"true\"{{else}}\"false\"{{end}}",
        ),
        (
            "if with else if",
            "{{if .X}}true{{else if .Y}}false{{end}}",
            OK,
            "{{if .X}}\"true\"{{else}}{{if .Y}}\"false\"{{end}}{{end}}",
        ),
        (
            "if else chain",
            "+{{if .X}}X{{else if .Y}}Y{{else if .Z}}Z{{end}}+",
            OK,
            "\"+\"{{if .X}}\"X\"{{else}}{{if .Y}}\"Y\"{{else}}{{if .Z}}\"Z\"{{end}}{{end}}{{end}}\"+\"",
        ),
        (
            "simple range",
            "{{range .X}}hello{{end}}",
            OK,
            "{{range .X}}\"hello\"{{end}}",
        ),
        (
            "chained field range",
            "{{range .X.Y.Z}}hello{{end}}",
            OK,
            "{{range .X.Y.Z}}\"hello\"{{end}}",
        ),
        (
            "nested range",
            "{{range .X}}hello{{range .Y}}goodbye{{end}}{{end}}",
            OK,
            "{{range .X}}\"hello\"{{range .Y}}\"goodbye\"{{end}}{{end}}",
        ),
        (
            "range with else",
            "{{range .X}}true{{else}}false{{end}}",
            OK,
            "{{range .X}}\"true\"{{else}}\"false\"{{end}}",
        ),
        (
            "range over pipeline",
            "{{range .X|.M}}true{{else}}false{{end}}",
            OK,
            "{{range .X | .M}}\"true\"{{else}}\"false\"{{end}}",
        ),
        (
            "range []int",
            "{{range .SI}}{{.}}{{end}}",
            OK,
            "{{range .SI}}{{.}}{{end}}",
        ),
        (
            "range 1 var",
            "{{range $x := .SI}}{{.}}{{end}}",
            OK,
            "{{range $x := .SI}}{{.}}{{end}}",
        ),
        (
            "range 2 vars",
            "{{range $x, $y := .SI}}{{.}}{{end}}",
            OK,
            "{{range $x, $y := .SI}}{{.}}{{end}}",
        ),
        (
            "range with break",
            "{{range .SI}}{{.}}{{break}}{{end}}",
            OK,
            "{{range .SI}}{{.}}{{break}}{{end}}",
        ),
        (
            "range with continue",
            "{{range .SI}}{{.}}{{continue}}{{end}}",
            OK,
            "{{range .SI}}{{.}}{{continue}}{{end}}",
        ),
        (
            "constants",
            "{{range .SI 1 -3.2i true false 'a' nil}}{{end}}",
            OK,
            "{{range .SI 1 -3.2i true false 'a' nil}}{{end}}",
        ),
        ("template", "{{template `x`}}", OK, "{{template \"x\"}}"),
        (
            "template with arg",
            "{{template `x` .Y}}",
            OK,
            "{{template \"x\" .Y}}",
        ),
        (
            "with",
            "{{with .X}}hello{{end}}",
            OK,
            "{{with .X}}\"hello\"{{end}}",
        ),
        (
            "with with else",
            "{{with .X}}hello{{else}}goodbye{{end}}",
            OK,
            "{{with .X}}\"hello\"{{else}}\"goodbye\"{{end}}",
        ),
        (
            "with with else with",
            "{{with .X}}hello{{else with .Y}}goodbye{{end}}",
            OK,
            "{{with .X}}\"hello\"{{else}}{{with .Y}}\"goodbye\"{{end}}{{end}}",
        ),
        (
            "with else chain",
            "{{with .X}}X{{else with .Y}}Y{{else with .Z}}Z{{end}}",
            OK,
            "{{with .X}}\"X\"{{else}}{{with .Y}}\"Y\"{{else}}{{with .Z}}\"Z\"{{end}}{{end}}{{end}}",
        ),
        ("trim left", "x \r\n\t{{- 3}}", OK, "\"x\"{{3}}"),
        ("trim right", "{{3 -}}\n\n\ty", OK, "{{3}}\"y\""),
        (
            "trim left and right",
            "x \r\n\t{{- 3 -}}\n\n\ty",
            OK,
            "\"x\"{{3}}\"y\"",
        ),
        (
            "trim with extra spaces",
            "x\n{{-  3   -}}\ny",
            OK,
            "\"x\"{{3}}\"y\"",
        ),
        ("comment trim left", "x \r\n\t{{- /* hi */}}", OK, "\"x\""),
        ("comment trim right", "{{/* hi */ -}}\n\n\ty", OK, "\"y\""),
        (
            "comment trim left and right",
            "x \r\n\t{{- /* */ -}}\n\n\ty",
            OK,
            "\"x\"\"y\"",
        ),
        (
            "block definition",
            "{{block \"foo\" .}}hello{{end}}",
            OK,
            "{{template \"foo\" .}}",
        ),
        (
            "newline in assignment",
            "{{ $x \n := \n 1 \n }}",
            OK,
            "{{$x := 1}}",
        ),
        ("newline in empty action", "{{\n}}", ERR, "{{\n}}"),
        (
            "newline in pipeline",
            "{{\n\"x\"\n|\nprintf\n}}",
            OK,
            "{{\"x\" | printf}}",
        ),
        ("newline in comment", "{{/*\nhello\n*/}}", OK, ""),
        ("newline in comment", "{{-\n/*\nhello\n*/\n-}}", OK, ""),
        (
            "spaces around continue",
            "{{range .SI}}{{.}}{{ continue }}{{end}}",
            OK,
            "{{range .SI}}{{.}}{{continue}}{{end}}",
        ),
        (
            "spaces around break",
            "{{range .SI}}{{.}}{{ break }}{{end}}",
            OK,
            "{{range .SI}}{{.}}{{break}}{{end}}",
        ),
        ("unclosed action", "hello{{range", ERR, ""),
        ("unmatched end", "{{end}}", ERR, ""),
        ("unmatched else", "{{else}}", ERR, ""),
        (
            "unmatched else after if",
            "{{if .X}}hello{{end}}{{else}}",
            ERR,
            "",
        ),
        (
            "multiple else",
            "{{if .X}}1{{else}}2{{else}}3{{end}}",
            ERR,
            "",
        ),
        ("missing end", "hello{{range .x}}", ERR, ""),
        (
            "missing end after else",
            "hello{{range .x}}{{else}}",
            ERR,
            "",
        ),
        ("undefined function", "hello{{undefined}}", ERR, ""),
        ("undefined variable", "{{$x}}", ERR, ""),
        (
            "variable undefined after end",
            "{{with $x := 4}}{{end}}{{$x}}",
            ERR,
            "",
        ),
        ("variable undefined in template", "{{template $v}}", ERR, ""),
        ("declare with field", "{{with $x.Y := 4}}{{end}}", ERR, ""),
        ("template with field ref", "{{template .X}}", ERR, ""),
        ("template with var", "{{template $v}}", ERR, ""),
        ("invalid punctuation", "{{printf 3, 4}}", ERR, ""),
        (
            "multidecl outside range",
            "{{with $v, $u := 3}}{{end}}",
            ERR,
            "",
        ),
        (
            "too many decls in range",
            "{{range $u, $v, $w := 3}}{{end}}",
            ERR,
            "",
        ),
        (
            "dot applied to parentheses",
            "{{printf (printf .).}}",
            ERR,
            "",
        ),
        ("adjacent args", "{{printf 3`x`}}", ERR, ""),
        ("adjacent args with .", "{{printf `x`.}}", ERR, ""),
        (
            "extra end after if",
            "{{if .X}}a{{else if .Y}}b{{end}}{{end}}",
            ERR,
            "",
        ),
        (
            "break outside range",
            "{{range .}}{{end}} {{break}}",
            ERR,
            "",
        ),
        (
            "continue outside range",
            "{{range .}}{{end}} {{continue}}",
            ERR,
            "",
        ),
        (
            "break in range else",
            "{{range .}}{{else}}{{break}}{{end}}",
            ERR,
            "",
        ),
        (
            "continue in range else",
            "{{range .}}{{else}}{{continue}}{{end}}",
            ERR,
            "",
        ),
        ("bug0a", "{{$x := 0}}{{$x}}", OK, "{{$x := 0}}{{$x}}"),
        ("bug0b", "{{$x += 1}}{{$x}}", ERR, ""),
        ("bug0c", "{{$x ! 2}}{{$x}}", ERR, ""),
        ("bug0d", "{{$x % 3}}{{$x}}", ERR, ""),
        ("bug0e", "{{range $x := $y := 3}}{{end}}", ERR, ""),
        ("bug1a", "{{$x:=.}}{{$x!2}}", ERR, ""),
        ("bug1b", "{{$x:=.}}{{$x+2}}", ERR, ""),
        ("bug1c", "{{$x:=.}}{{$x +2}}", OK, "{{$x := .}}{{$x +2}}"),
        (
            "bug2a",
            "{{range $x := 0}}{{$x}}{{end}}",
            OK,
            "{{range $x := 0}}{{$x}}{{end}}",
        ),
        (
            "bug2b",
            "{{range $x = 0}}{{$x}}{{end}}",
            OK,
            "{{range $x = 0}}{{$x}}{{end}}",
        ),
        ("dot after integer", "{{1.E}}", ERR, ""),
        ("dot after float", "{{0.1.E}}", ERR, ""),
        ("dot after boolean", "{{true.E}}", ERR, ""),
        ("dot after char", "{{'a'.any}}", ERR, ""),
        ("dot after string", "{{\"hello\".guys}}", ERR, ""),
        ("dot after dot", "{{..E}}", ERR, ""),
        ("dot after nil", "{{nil.E}}", ERR, ""),
        ("wrong pipeline dot", "{{12|.}}", ERR, ""),
        ("wrong pipeline number", "{{.|12|printf}}", ERR, ""),
        ("wrong pipeline string", "{{.|printf|\"error\"}}", ERR, ""),
        ("wrong pipeline char", "{{12|printf|'e'}}", ERR, ""),
        ("wrong pipeline boolean", "{{.|true}}", ERR, ""),
        ("wrong pipeline nil", "{{'c'|nil}}", ERR, ""),
        ("empty pipeline", "{{printf \"%d\" ( ) }}", ERR, ""),
        ("block definition", "{{block \"foo\"}}hello{{end}}", ERR, ""),
        ("paren nesting normal", "{{ (( 1 )) }}", OK, "{{((1))}}"),
        (
            "paren nesting in pipeline",
            "{{ ((( 1 ))) | printf }}",
            OK,
            "{{(((1))) | printf}}",
        ),
        (
            "paren nesting with other constructs",
            "{{ if ((( true ))) }}YES{{ end }}",
            OK,
            "{{if (((true)))}}\"YES\"{{end}}",
        ),
    ];
    for (name, input, ok, result) in cases {
        match parse(name, input, options(&builtins)) {
            Ok(trees) => {
                assert!(ok, "{name}: expected error; got none");
                assert_eq!(top(&trees, name), result, "{name} = ({input:?})");
            }
            Err(e) => assert!(!ok, "{name}: unexpected error: {e}"),
        }
    }
}

#[test]
fn go_paren_nesting_limit() {
    // Go's test lowers the limit to 3; ours is a constant, so the test nests one deeper than it.
    let at_limit = format!(
        "{{{{ {}1{} }}}}",
        "(".repeat(MAX_STACK_DEPTH),
        ")".repeat(MAX_STACK_DEPTH)
    );
    assert!(parse("test", &at_limit, options(&builtins)).is_ok());
    let beyond = format!(
        "{{{{ if {}true{} }}}}YES{{{{ end }}}}",
        "(".repeat(MAX_STACK_DEPTH + 1),
        ")".repeat(MAX_STACK_DEPTH + 1)
    );
    assert_eq!(
        parse("test", &beyond, options(&builtins)).unwrap_err(),
        "template: test:1: max expression depth exceeded"
    );
}

#[test]
fn go_parse_with_comments() {
    let cases = [
        ("comment", "{{/*\n\n\n*/}}", "{{/*\n\n\n*/}}"),
        (
            "comment trim left",
            "x \r\n\t{{- /* hi */}}",
            "\"x\"{{/* hi */}}",
        ),
        (
            "comment trim right",
            "{{/* hi */ -}}\n\n\ty",
            "{{/* hi */}}\"y\"",
        ),
        (
            "comment trim left and right",
            "x \r\n\t{{- /* */ -}}\n\n\ty",
            "\"x\"{{/* */}}\"y\"",
        ),
    ];
    for (name, input, result) in cases {
        let mut o = options(&none);
        o.parse_comments = true;
        let trees = parse(name, input, o).unwrap();
        assert_eq!(top(&trees, name), result, "{name}");
    }
}

#[test]
fn go_keywords_and_funcs() {
    let input = "{{range .X}}{{break 20}}{{end}}";
    let with_break = |n: &str| n == "break";
    assert!(parse("", input, options(&with_break)).is_ok());
    assert!(parse("", input, options(&none)).is_err());
}

#[test]
fn go_skip_func_check() {
    let mut o = options(&none);
    o.skip_func_check = true;
    let trees = parse("skip func check", "{{fn 1 2}}", o).unwrap();
    assert_eq!(top(&trees, "skip func check"), "{{fn 1 2}}");
}

#[test]
fn go_is_empty() {
    let cases = [
        ("empty", "", true),
        ("nonempty", "hello", false),
        ("spaces only", " \t\n \t\n", true),
        ("comment only", "{{/* comment */}}", true),
        ("definition", "{{define \"x\"}}something{{end}}", true),
        (
            "definitions and space",
            "{{define `x`}}something{{end}}\n\n{{define `y`}}something{{end}}\n\n",
            true,
        ),
        (
            "definitions and text",
            "{{define `x`}}something{{end}}\nx\n{{define `y`}}something{{end}}\ny\n",
            false,
        ),
        (
            "definition and action",
            "{{define `x`}}something{{end}}{{if 3}}foo{{end}}",
            false,
        ),
    ];
    for (name, input, empty) in cases {
        let trees = parse("root", input, options(&none)).unwrap();
        let root = trees.iter().find(|t| t.name == "root").unwrap();
        assert_eq!(is_empty_tree(&root.root), empty, "{name}");
    }
}

#[test]
fn go_errors() {
    let cases = [
        ("unclosed1", "line1\n{{", "unclosed1:2: unclosed action"),
        (
            "unclosed2",
            "line1\n{{define `x`}}line2\n{{",
            "unclosed2:3: unclosed action",
        ),
        (
            "unclosed3",
            "line1\n{{\"x\"\n\"y\"\n",
            "unclosed3:4: unclosed action started at unclosed3:2",
        ),
        (
            "unclosed4",
            "{{\n\n\n\n\n",
            "unclosed4:6: unclosed action started at unclosed4:1",
        ),
        (
            "var1",
            "line1\n{{\nx\n}}",
            "var1:3: function \"x\" not defined",
        ),
        ("function", "{{foo}}", "function \"foo\" not defined"),
        ("comment1", "{{/*}}", "comment1:1: unclosed comment"),
        (
            "comment2",
            "{{/*\nhello\n}}",
            "comment2:1: unclosed comment",
        ),
        ("lparen", "{{.X (1 2 3}}", "unclosed left paren"),
        ("rparen", "{{.X 1 2 3 ) }}", "unexpected right paren"),
        ("rparen2", "{{(.X 1 2 3", "unclosed action"),
        ("space", "{{`x`3}}", "in operand"),
        ("idchar", "{{a#}}", "'#'"),
        ("charconst", "{{'a}}", "unterminated character constant"),
        ("stringconst", "{{\"a}}", "unterminated quoted string"),
        ("rawstringconst", "{{`a}}", "unterminated raw quoted string"),
        ("number", "{{0xi}}", "number syntax"),
        (
            "multidefine",
            "{{define `a`}}a{{end}}{{define `a`}}b{{end}}",
            "multiple definition of template",
        ),
        ("eof", "{{range .X}}", "unexpected EOF"),
        (
            "variable",
            "{{$x := 23}}{{with $x.y := 3}}{{$x 23}}{{end}}",
            "unexpected \":=\"",
        ),
        ("multidecl", "{{$a,$b,$c := 23}}", "too many declarations"),
        ("undefvar", "{{$a}}", "undefined variable"),
        ("wrongdot", "{{true.any}}", "unexpected . after term"),
        (
            "wrongpipeline",
            "{{12|false}}",
            "non executable command in pipeline",
        ),
        (
            "emptypipeline",
            "{{ ( ) }}",
            "missing value for parenthesized pipeline",
        ),
        (
            "multilinerawstring",
            "{{ $v := `\n` }} {{",
            "multilinerawstring:2: unclosed action",
        ),
        ("rangeundefvar", "{{range $k}}{{end}}", "undefined variable"),
        (
            "rangeundefvars",
            "{{range $k, $v}}{{end}}",
            "undefined variable",
        ),
        (
            "rangemissingvalue1",
            "{{range $k,}}{{end}}",
            "missing value for range",
        ),
        (
            "rangemissingvalue2",
            "{{range $k, $v := }}{{end}}",
            "missing value for range",
        ),
        (
            "rangenotvariable1",
            "{{range $k, .}}{{end}}",
            "range can only initialize variables",
        ),
        (
            "rangenotvariable2",
            "{{range $k, 123 := .}}{{end}}",
            "range can only initialize variables",
        ),
    ];
    for (name, input, want) in cases {
        let err = parse(name, input, options(&none)).expect_err(name);
        assert!(
            err.contains(want),
            "{name}: error {err:?} does not contain {want:?}"
        );
    }
}

#[test]
fn go_block() {
    let trees = parse(
        "outer",
        "a{{block \"inner\" .}}bar{{.}}baz{{end}}b",
        options(&none),
    )
    .unwrap();
    let print = |name: &str| {
        let t = trees.iter().find(|t| t.name == name).unwrap();
        let mut s = String::new();
        Printer { quote_text: false }.list(&mut s, &t.root);
        s
    };
    assert_eq!(print("outer"), "a{{template \"inner\" .}}b");
    assert_eq!(print("inner"), "bar{{.}}baz");
}

#[test]
fn go_line_numbers() {
    let text = "{{printf 1234}}\n".repeat(3);
    let trees = parse("bench", &text, options(&builtins)).unwrap();
    let nodes = &trees[0].root.nodes;
    for (i, node) in nodes.iter().enumerate().step_by(2) {
        let Node::Action(a) = node else {
            panic!("node {i} is not an action")
        };
        assert_eq!(a.line, 1 + i / 2);
        assert_eq!(a.pipe.line, 1 + i / 2);
    }
}

#[test]
fn error_texts_as_go() {
    // Whole messages, as Go's parser words them.
    let cases = [
        ("{{if}}", "template: t:1: missing value for if"),
        ("{{end}}", "template: t:1: unexpected {{end}}"),
        ("a\n{{else}}", "template: t:2: unexpected {{else}}"),
        (
            "{{nosuch 1}}",
            "template: t:1: function \"nosuch\" not defined",
        ),
        (
            "{{define \"a\"}}x{{else}}{{end}}",
            "template: t:1: unexpected {{else}} in define clause",
        ),
        (
            "{{.X | 3}}",
            "template: t:1: non executable command in pipeline stage 2",
        ),
        (
            "{{range .}}{{break 1}}{{end}}",
            "template: t:1: unexpected \"1\" in {{break}}",
        ),
        (
            "{{ .X \"abcdefghijklmn\" )}}",
            "template: t:1: unexpected right paren",
        ),
        (
            "{{with .X}}{{else}}{{else}}{{end}}",
            "template: t:1: expected end; found {{else}}",
        ),
        (
            "{{template .X}}",
            "template: t:1: unexpected \".X\" in template clause",
        ),
        (
            "{{template .}}",
            "template: t:1: unexpected <.> in template clause",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(
            parse("t", input, options(&none)).unwrap_err(),
            want,
            "{input:?}"
        );
    }
}
