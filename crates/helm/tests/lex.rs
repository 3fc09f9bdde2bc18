//! Go's `text/template/parse` lexer tests (lex_test.go: TestLex, TestDelims,
//! TestDelimsAlphaNumeric, TestDelimsAndMarkers, TestPos), ported as data: inputs and the items
//! Go's lexer produces for them, comments emitted and `break`/`continue` allowed as there.

use tidegate_helm::template::lex::{ItemKind as K, Options, lex};

const OPTIONS: Options = Options {
    emit_comment: true,
    break_ok: true,
    continue_ok: true,
};

fn kinds_and_values(input: &str, left: &str, right: &str) -> Vec<(K, String)> {
    lex(input, left, right, OPTIONS)
        .into_iter()
        .map(|i| (i.kind, i.val.into_owned()))
        .collect()
}

fn items(list: &[(K, &str)]) -> Vec<(K, String)> {
    list.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// A case: name, input, the items Go's lexer gives.
type Case<'a> = (&'a str, String, Vec<(K, &'a str)>);
/// A position case: input, and each item's kind, offset, value and line.
type PosCase<'a> = (&'a str, Vec<(K, usize, &'a str, usize)>);

const L: (K, &str) = (K::LeftDelim, "{{");
const R: (K, &str) = (K::RightDelim, "}}");
const S: (K, &str) = (K::Space, " ");
const EOF: (K, &str) = (K::Eof, "");
const RAW: &str = "`abc\\n\\t\\\" `";
const RAW_NL: &str = "`now is{{\n}}the time`";

#[test]
fn go_lex_tests() {
    let quote = r#""abc \n\t\" ""#;
    let cases: Vec<Case> = vec![
        ("empty", "".into(), vec![EOF]),
        ("spaces", " \t\n".into(), vec![(K::Text, " \t\n"), EOF]),
        (
            "text",
            "now is the time".into(),
            vec![(K::Text, "now is the time"), EOF],
        ),
        (
            "text with comment",
            "hello-{{/* this is a comment */}}-world".into(),
            vec![
                (K::Text, "hello-"),
                (K::Comment, "/* this is a comment */"),
                (K::Text, "-world"),
                EOF,
            ],
        ),
        (
            "punctuation",
            "{{,@% }}".into(),
            vec![L, (K::Char, ","), (K::Char, "@"), (K::Char, "%"), S, R, EOF],
        ),
        (
            "parens",
            "{{((3))}}".into(),
            vec![
                L,
                (K::LeftParen, "("),
                (K::LeftParen, "("),
                (K::Number, "3"),
                (K::RightParen, ")"),
                (K::RightParen, ")"),
                R,
                EOF,
            ],
        ),
        ("empty action", "{{}}".into(), vec![L, R, EOF]),
        (
            "for",
            "{{for}}".into(),
            vec![L, (K::Identifier, "for"), R, EOF],
        ),
        (
            "block",
            r#"{{block "foo" .}}"#.into(),
            vec![
                L,
                (K::Block, "block"),
                S,
                (K::String, r#""foo""#),
                S,
                (K::Dot, "."),
                R,
                EOF,
            ],
        ),
        (
            "quote",
            format!("{{{{{quote}}}}}"),
            vec![L, (K::String, quote), R, EOF],
        ),
        (
            "raw quote",
            format!("{{{{{RAW}}}}}"),
            vec![L, (K::RawString, RAW), R, EOF],
        ),
        (
            "raw quote with newline",
            format!("{{{{{RAW_NL}}}}}"),
            vec![L, (K::RawString, RAW_NL), R, EOF],
        ),
        (
            "numbers",
            "{{1 02 0x14 0X14 -7.2i 1e3 1E3 +1.2e-4 4.2i 1+2i 1_2 0x1.e_fp4 0X1.E_FP4}}".into(),
            vec![
                L,
                (K::Number, "1"),
                S,
                (K::Number, "02"),
                S,
                (K::Number, "0x14"),
                S,
                (K::Number, "0X14"),
                S,
                (K::Number, "-7.2i"),
                S,
                (K::Number, "1e3"),
                S,
                (K::Number, "1E3"),
                S,
                (K::Number, "+1.2e-4"),
                S,
                (K::Number, "4.2i"),
                S,
                (K::Complex, "1+2i"),
                S,
                (K::Number, "1_2"),
                S,
                (K::Number, "0x1.e_fp4"),
                S,
                (K::Number, "0X1.E_FP4"),
                R,
                EOF,
            ],
        ),
        (
            "characters",
            r"{{'a' '\n' '\'' '\\' '\u00FF' '\xFF' '本'}}".into(),
            vec![
                L,
                (K::CharConstant, "'a'"),
                S,
                (K::CharConstant, r"'\n'"),
                S,
                (K::CharConstant, r"'\''"),
                S,
                (K::CharConstant, r"'\\'"),
                S,
                (K::CharConstant, r"'\u00FF'"),
                S,
                (K::CharConstant, r"'\xFF'"),
                S,
                (K::CharConstant, "'本'"),
                R,
                EOF,
            ],
        ),
        (
            "bools",
            "{{true false}}".into(),
            vec![L, (K::Bool, "true"), S, (K::Bool, "false"), R, EOF],
        ),
        ("dot", "{{.}}".into(), vec![L, (K::Dot, "."), R, EOF]),
        ("nil", "{{nil}}".into(), vec![L, (K::Nil, "nil"), R, EOF]),
        (
            "dots",
            "{{.x . .2 .x.y.z}}".into(),
            vec![
                L,
                (K::Field, ".x"),
                S,
                (K::Dot, "."),
                S,
                (K::Number, ".2"),
                S,
                (K::Field, ".x"),
                (K::Field, ".y"),
                (K::Field, ".z"),
                R,
                EOF,
            ],
        ),
        (
            "keywords",
            "{{range if else end with}}".into(),
            vec![
                L,
                (K::Range, "range"),
                S,
                (K::If, "if"),
                S,
                (K::Else, "else"),
                S,
                (K::End, "end"),
                S,
                (K::With, "with"),
                R,
                EOF,
            ],
        ),
        (
            "variables",
            "{{$c := printf $ $hello $23 $ $var.Field .Method}}".into(),
            vec![
                L,
                (K::Variable, "$c"),
                S,
                (K::Declare, ":="),
                S,
                (K::Identifier, "printf"),
                S,
                (K::Variable, "$"),
                S,
                (K::Variable, "$hello"),
                S,
                (K::Variable, "$23"),
                S,
                (K::Variable, "$"),
                S,
                (K::Variable, "$var"),
                (K::Field, ".Field"),
                S,
                (K::Field, ".Method"),
                R,
                EOF,
            ],
        ),
        (
            "variable invocation",
            "{{$x 23}}".into(),
            vec![L, (K::Variable, "$x"), S, (K::Number, "23"), R, EOF],
        ),
        (
            "pipeline",
            r#"intro {{echo hi 1.2 |noargs|args 1 "hi"}} outro"#.into(),
            vec![
                (K::Text, "intro "),
                L,
                (K::Identifier, "echo"),
                S,
                (K::Identifier, "hi"),
                S,
                (K::Number, "1.2"),
                S,
                (K::Pipe, "|"),
                (K::Identifier, "noargs"),
                (K::Pipe, "|"),
                (K::Identifier, "args"),
                S,
                (K::Number, "1"),
                S,
                (K::String, r#""hi""#),
                R,
                (K::Text, " outro"),
                EOF,
            ],
        ),
        (
            "declaration",
            "{{$v := 3}}".into(),
            vec![
                L,
                (K::Variable, "$v"),
                S,
                (K::Declare, ":="),
                S,
                (K::Number, "3"),
                R,
                EOF,
            ],
        ),
        (
            "2 declarations",
            "{{$v , $w := 3}}".into(),
            vec![
                L,
                (K::Variable, "$v"),
                S,
                (K::Char, ","),
                S,
                (K::Variable, "$w"),
                S,
                (K::Declare, ":="),
                S,
                (K::Number, "3"),
                R,
                EOF,
            ],
        ),
        (
            "field of parenthesized expression",
            "{{(.X).Y}}".into(),
            vec![
                L,
                (K::LeftParen, "("),
                (K::Field, ".X"),
                (K::RightParen, ")"),
                (K::Field, ".Y"),
                R,
                EOF,
            ],
        ),
        (
            "trimming spaces before and after",
            "hello- {{- 3 -}} -world".into(),
            vec![
                (K::Text, "hello-"),
                L,
                (K::Number, "3"),
                R,
                (K::Text, "-world"),
                EOF,
            ],
        ),
        (
            "trimming spaces before and after comment",
            "hello- {{- /* hello */ -}} -world".into(),
            vec![
                (K::Text, "hello-"),
                (K::Comment, "/* hello */"),
                (K::Text, "-world"),
                EOF,
            ],
        ),
        // Errors.
        (
            "badchar",
            "#{{\x01}}".into(),
            vec![
                (K::Text, "#"),
                L,
                (K::Error, "unrecognized character in action: U+0001"),
            ],
        ),
        (
            "unclosed action",
            "{{".into(),
            vec![L, (K::Error, "unclosed action")],
        ),
        (
            "EOF in action",
            "{{range".into(),
            vec![L, (K::Range, "range"), (K::Error, "unclosed action")],
        ),
        (
            "unclosed quote",
            "{{\"\n\"}}".into(),
            vec![L, (K::Error, "unterminated quoted string")],
        ),
        (
            "unclosed raw quote",
            "{{`xx}}".into(),
            vec![L, (K::Error, "unterminated raw quoted string")],
        ),
        (
            "unclosed char constant",
            "{{'\n}}".into(),
            vec![L, (K::Error, "unterminated character constant")],
        ),
        (
            "bad number",
            "{{3k}}".into(),
            vec![L, (K::Error, r#"bad number syntax: "3k""#)],
        ),
        (
            "unclosed paren",
            "{{(3}}".into(),
            vec![
                L,
                (K::LeftParen, "("),
                (K::Number, "3"),
                (K::Error, "unclosed left paren"),
            ],
        ),
        (
            "extra right paren",
            "{{3)}}".into(),
            vec![L, (K::Number, "3"), (K::Error, "unexpected right paren")],
        ),
        // Fixed bugs.
        (
            "long pipeline deadlock",
            "{{|||||}}".into(),
            vec![
                L,
                (K::Pipe, "|"),
                (K::Pipe, "|"),
                (K::Pipe, "|"),
                (K::Pipe, "|"),
                (K::Pipe, "|"),
                R,
                EOF,
            ],
        ),
        (
            "text with bad comment",
            "hello-{{/*/}}-world".into(),
            vec![(K::Text, "hello-"), (K::Error, "unclosed comment")],
        ),
        (
            "text with comment close separated from delim",
            "hello-{{/* */ }}-world".into(),
            vec![
                (K::Text, "hello-"),
                (K::Error, "comment ends before closing delimiter"),
            ],
        ),
        (
            "unmatched right delimiter",
            "hello-{.}}-world".into(),
            vec![(K::Text, "hello-{.}}-world"), EOF],
        ),
    ];
    let mut wrong = Vec::new();
    for (name, input, want) in &cases {
        let got = kinds_and_values(input, "", "");
        if got != items(want) {
            wrong.push(format!("{name}: got {got:?}\n  want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn go_delim_tests() {
    let quote = r#""abc \n\t\" ""#;
    let ld = (K::LeftDelim, "$$");
    let rd = (K::RightDelim, "@@");
    let cases: Vec<(String, Vec<(K, &str)>)> = vec![
        (
            "$$,@%{{}}@@".into(),
            vec![
                ld,
                (K::Char, ","),
                (K::Char, "@"),
                (K::Char, "%"),
                (K::Char, "{"),
                (K::Char, "{"),
                (K::Char, "}"),
                (K::Char, "}"),
                rd,
                EOF,
            ],
        ),
        ("$$@@".into(), vec![ld, rd, EOF]),
        ("$$for@@".into(), vec![ld, (K::Identifier, "for"), rd, EOF]),
        (
            format!("$${quote}@@"),
            vec![ld, (K::String, quote), rd, EOF],
        ),
        (format!("$${RAW}@@"), vec![ld, (K::RawString, RAW), rd, EOF]),
    ];
    for (input, want) in &cases {
        assert_eq!(kinds_and_values(input, "$$", "@@"), items(want), "{input}");
    }
    // Right delimiter with an alphanumeric start.
    assert_eq!(
        kinds_and_values("{{hub .host hub}}", "{{hub", "hub}}"),
        items(&[
            (K::LeftDelim, "{{hub"),
            S,
            (K::Field, ".host"),
            S,
            (K::RightDelim, "hub}}"),
            EOF
        ])
    );
    // Delimiters that look like trim markers.
    assert_eq!(
        kinds_and_values("{{- .x -}} {{- - .x - -}}", "{{- ", " -}}"),
        items(&[
            (K::LeftDelim, "{{- "),
            (K::Field, ".x"),
            (K::RightDelim, " -}}"),
            (K::LeftDelim, "{{- "),
            (K::Field, ".x"),
            (K::RightDelim, " -}}"),
            EOF
        ])
    );
}

#[test]
fn go_position_tests() {
    let cases: Vec<PosCase> = vec![
        ("", vec![(K::Eof, 0, "", 1)]),
        (
            "{{,@%#}}",
            vec![
                (K::LeftDelim, 0, "{{", 1),
                (K::Char, 2, ",", 1),
                (K::Char, 3, "@", 1),
                (K::Char, 4, "%", 1),
                (K::Char, 5, "#", 1),
                (K::RightDelim, 6, "}}", 1),
                (K::Eof, 8, "", 1),
            ],
        ),
        (
            "0123{{hello}}xyz",
            vec![
                (K::Text, 0, "0123", 1),
                (K::LeftDelim, 4, "{{", 1),
                (K::Identifier, 6, "hello", 1),
                (K::RightDelim, 11, "}}", 1),
                (K::Text, 13, "xyz", 1),
                (K::Eof, 16, "", 1),
            ],
        ),
        (
            "{{x -}}\n{{y}}",
            vec![
                (K::LeftDelim, 0, "{{", 1),
                (K::Identifier, 2, "x", 1),
                (K::RightDelim, 5, "}}", 1),
                (K::LeftDelim, 8, "{{", 2),
                (K::Identifier, 10, "y", 2),
                (K::RightDelim, 11, "}}", 2),
                (K::Eof, 13, "", 2),
            ],
        ),
        (
            "{{x}}\n{{- y}}",
            vec![
                (K::LeftDelim, 0, "{{", 1),
                (K::Identifier, 2, "x", 1),
                (K::RightDelim, 3, "}}", 1),
                (K::LeftDelim, 6, "{{", 2),
                (K::Identifier, 10, "y", 2),
                (K::RightDelim, 11, "}}", 2),
                (K::Eof, 13, "", 2),
            ],
        ),
        (
            "{{/*\n*/}}\n{{undefinedFunction \"test\"}}",
            vec![
                (K::Comment, 2, "/*\n*/", 1),
                (K::Text, 9, "\n", 2),
                (K::LeftDelim, 10, "{{", 3),
                (K::Identifier, 12, "undefinedFunction", 3),
                (K::Space, 29, " ", 3),
                (K::String, 30, "\"test\"", 3),
                (K::RightDelim, 36, "}}", 3),
                (K::Eof, 38, "", 3),
            ],
        ),
    ];
    for (input, want) in &cases {
        let got: Vec<(K, usize, String, usize)> = lex(input, "", "", OPTIONS)
            .into_iter()
            .map(|i| (i.kind, i.pos, i.val.into_owned(), i.line))
            .collect();
        let want: Vec<(K, usize, String, usize)> = want
            .iter()
            .map(|(k, p, v, l)| (*k, *p, v.to_string(), *l))
            .collect();
        assert_eq!(got, want, "{input:?}");
    }
}

/// Without `emit_comment`, comments leave no item; without `break_ok`, `break` is an
/// identifier (outside `range`).
#[test]
fn options_as_the_parser_sets_them() {
    let plain = Options {
        emit_comment: false,
        break_ok: false,
        continue_ok: true,
    };
    let got: Vec<K> = lex("a{{/* c */}}b{{break}}", "", "", plain)
        .into_iter()
        .map(|i| i.kind)
        .collect();
    assert_eq!(
        got,
        [
            K::Text,
            K::Text,
            K::LeftDelim,
            K::Identifier,
            K::RightDelim,
            K::Eof
        ]
    );
}
