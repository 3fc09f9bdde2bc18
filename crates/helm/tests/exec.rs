//! Go's `text/template` execution tests (exec_test.go: execTests and the tests after it),
//! ported as data. Go's test value `tVal` is a struct with fields and methods; here it is an
//! object with the same fields and methods, and the test functions are the same functions.
//! Cases that need Go types this engine does not model (pointers to scalars, unsafe pointers,
//! channels, iterator functions, maps keyed by integers) are left out.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use tidegate_helm::template::func::Func;
use tidegate_helm::template::value::{IntKind, ListKind, MapKind, Object, UintKind};
use tidegate_helm::template::{FuncMap, MissingKey, Set, Ty, Value};

#[derive(Debug)]
struct U {
    v: String,
}

impl Object for U {
    fn type_name(&self) -> String {
        "*template.U".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        (name == "V").then(|| Value::str(&self.v))
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        (name == "TrueFalse").then(|| {
            Rc::new(Func::new("TrueFalse", &[Ty::Bool], None, |_, a| {
                Ok(Value::str(if a[0].truth() { "true" } else { "" }))
            }))
        })
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![("V", Value::str(&self.v))]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
struct T;

fn ints(v: &[i64]) -> Value {
    Value::List(
        Rc::new(v.iter().map(|i| Value::int(*i)).collect()),
        ListKind::Int,
    )
}

fn msi(entries: &[(&str, i64)]) -> Value {
    Value::map(
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), Value::int(*v)))
            .collect(),
    )
}

impl Object for T {
    fn type_name(&self) -> String {
        "*template.T".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(match name {
            "True" => Value::Bool(true),
            "I" => Value::int(17),
            "U16" => Value::Uint(16, UintKind::Uint16),
            "X" => Value::str("x"),
            "S" => Value::str("xyz"),
            "FloatZero" => Value::Float(0.0),
            "ComplexZero" => Value::Complex(0.0, 0.0),
            "U" => Value::Object(Rc::new(U { v: "v".into() })),
            "SI" => ints(&[3, 4, 5]),
            "SICap" => ints(&[0, 0, 0, 0, 0]),
            "SIEmpty" => Value::NilList(ListKind::Int),
            "SB" => Value::list(vec![Value::Bool(true), Value::Bool(false)]),
            "AI" => ints(&[3, 4, 5]),
            "MSI" => msi(&[("one", 1), ("two", 2), ("three", 3)]),
            "MSIone" => msi(&[("one", 1)]),
            "MSIEmpty" => Value::NilMap(MapKind::Any),
            "MXI" => msi(&[("one", 1)]),
            "SMSI" => Value::list(vec![
                msi(&[("one", 1), ("two", 2)]),
                msi(&[("eleven", 11), ("twelve", 12)]),
            ]),
            "Empty0" => Value::Nil,
            "Empty1" => Value::int(3),
            "Empty2" => Value::str("empty2"),
            "Empty3" => ints(&[7, 8]),
            "Empty4" => Value::Object(Rc::new(U {
                v: "UinEmpty".into(),
            })),
            "NIL" => Value::Nil,
            "BinaryFunc" => Value::Func(Rc::new(Func::new(
                "BinaryFunc",
                &[Ty::String, Ty::String],
                None,
                |_, a| {
                    Ok(Value::str(&format!(
                        "[{}={}]",
                        a[0].as_str().unwrap_or(""),
                        a[1].as_str().unwrap_or("")
                    )))
                },
            ))),
            "VariadicFunc" => Value::Func(Rc::new(Func::new(
                "VariadicFunc",
                &[],
                Some(Ty::String),
                |_, a| {
                    let parts: Vec<&str> = a.iter().map(|v| v.as_str().unwrap_or("")).collect();
                    Ok(Value::str(&format!("<{}>", parts.join("+"))))
                },
            ))),
            "VariadicFuncInt" => Value::Func(Rc::new(Func::new(
                "VariadicFuncInt",
                &[Ty::Int],
                Some(Ty::String),
                |_, a| {
                    let parts: Vec<&str> =
                        a[1..].iter().map(|v| v.as_str().unwrap_or("")).collect();
                    let Value::Int(n, _) = a[0] else {
                        return Err("not int".into());
                    };
                    Ok(Value::str(&format!("{n}=<{}>", parts.join("+"))))
                },
            ))),
            "ErrFunc" => Value::Func(Rc::new(Func::new("ErrFunc", &[], None, |_, _| {
                Ok(Value::str("bla"))
            }))),
            _ => return None,
        })
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let f = match name {
            "Method0" => Func::new(name, &[], None, |_, _| Ok(Value::str("M0"))),
            "Method1" => Func::new(name, &[Ty::Int], None, |_, a| Ok(a[0].clone())),
            "Method2" => Func::new(name, &[Ty::Named("uint16"), Ty::String], None, |_, a| {
                let Value::Uint(n, _) = a[0] else {
                    return Err("not uint16".into());
                };
                Ok(Value::str(&format!(
                    "Method2: {n} {}",
                    a[1].as_str().unwrap_or("")
                )))
            }),
            "Method3" => Func::new(name, &[Ty::Any], None, |_, a| {
                Ok(Value::str(&format!(
                    "Method3: {}",
                    tidegate_helm::template::fmt::print_value(&a[0])
                )))
            }),
            "MAdd" => Func::new(name, &[Ty::Int, Ty::Named("[]int")], None, |_, a| {
                let Value::Int(n, _) = a[0] else {
                    return Err("not int".into());
                };
                let Value::List(l, _) = &a[1] else {
                    return Err("not list".into());
                };
                let out: Vec<i64> = l
                    .iter()
                    .map(|v| if let Value::Int(i, _) = v { i + n } else { 0 })
                    .collect();
                Ok(ints(&out))
            }),
            "MyError" => Func::new(name, &[Ty::Bool], None, |_, a| {
                if a[0].truth() {
                    Err("my error".into())
                } else {
                    Ok(Value::Bool(false))
                }
            }),
            "GetU" => Func::new(name, &[], None, |_, _| {
                Ok(Value::Object(Rc::new(U { v: "v".into() })))
            }),
            "Copy" => Func::new(name, &[], None, |_, _| Ok(Value::Object(Rc::new(T)))),
            _ => return None,
        };
        Some(Rc::new(f))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn t_val() -> Value {
    Value::Object(Rc::new(T))
}

/// Go's test functions.
fn funcs() -> FuncMap {
    let mut m = FuncMap::new();
    m.insert(Func::new("add", &[Ty::Int, Ty::Int], None, |_, a| {
        let (Value::Int(x, _), Value::Int(y, _)) = (&a[0], &a[1]) else {
            return Err("ints".into());
        };
        Ok(Value::int(x + y))
    }));
    m.insert(Func::new("count", &[Ty::Int], None, |_, a| {
        let Value::Int(n, _) = a[0] else {
            return Err("int".into());
        };
        let letters: Vec<String> = (0..n)
            .map(|i| ((b'a' + i as u8) as char).to_string())
            .collect();
        Ok(Value::string_list(letters))
    }));
    m.insert(Func::new("dddArg", &[Ty::Int], Some(Ty::String), |_, _| {
        Ok(Value::str(""))
    }));
    m.insert(Func::new("die", &[], None, |_, _| Err("die".into())));
    m.insert(Func::new("echo", &[Ty::Any], None, |_, a| Ok(a[0].clone())));
    m.insert(Func::new("makemap", &[], Some(Ty::String), |_, a| {
        if a.len() % 2 != 0 {
            return Err("bad makemap".into());
        }
        let map: BTreeMap<String, Value> = a
            .chunks(2)
            .map(|p| (p[0].as_str().unwrap_or("").to_string(), p[1].clone()))
            .collect();
        Ok(Value::Map(Rc::new(RefCell::new(map)), MapKind::String))
    }));
    m.insert(Func::new("mapOfThree", &[], None, |_, _| {
        Ok(msi(&[("three", 3)]))
    }));
    m.insert(Func::new("oneArg", &[Ty::String], None, |_, a| {
        Ok(Value::str(&format!(
            "oneArg={}",
            a[0].as_str().unwrap_or("")
        )))
    }));
    m.insert(Func::new("returnInt", &[], None, |_, _| Ok(Value::int(7))));
    m.insert(Func::new("typeOf", &[Ty::Any], None, |_, a| {
        Ok(Value::str(&tidegate_helm::template::fmt::sprintf("%T", &a)))
    }));
    m.insert(Func::new("zeroArgs", &[], None, |_, _| {
        Ok(Value::str("zeroArgs"))
    }));
    m
}

fn run(input: &str, data: Value) -> Result<String, String> {
    let mut set = Set::new("test", funcs());
    set.parse("test", input)?;
    Rc::new(set).execute("test", data, None)
}

#[test]
fn go_exec_tests() {
    let nil = Value::Nil;
    let cases: Vec<(&str, &str, &str, Value, bool)> = vec![
        ("empty", "", "", nil.clone(), true),
        ("text", "some text", "some text", nil.clone(), true),
        ("nil action", "{{nil}}", "", nil.clone(), false),
        ("ideal int", "{{typeOf 3}}", "int", Value::int(0), true),
        (
            "ideal float",
            "{{typeOf 1.0}}",
            "float64",
            Value::int(0),
            true,
        ),
        (
            "ideal exp float",
            "{{typeOf 1e1}}",
            "float64",
            Value::int(0),
            true,
        ),
        (
            "ideal complex",
            "{{typeOf 1i}}",
            "complex128",
            Value::int(0),
            true,
        ),
        (
            "ideal int",
            "{{typeOf 0x7fffffffffffffff}}",
            "int",
            Value::int(0),
            true,
        ),
        (
            "ideal too big",
            "{{typeOf 0x8000000000000000}}",
            "",
            Value::int(0),
            false,
        ),
        (
            "ideal nil without type",
            "{{nil}}",
            "",
            Value::int(0),
            false,
        ),
        (".X", "-{{.X}}-", "-x-", t_val(), true),
        (".U.V", "-{{.U.V}}-", "-v-", t_val(), true),
        (".unexported", "{{.unexported}}", "", t_val(), false),
        ("map .one", "{{.MSI.one}}", "1", t_val(), true),
        ("map .two", "{{.MSI.two}}", "2", t_val(), true),
        ("map .NO", "{{.MSI.NO}}", "<no value>", t_val(), true),
        ("map .one interface", "{{.MXI.one}}", "1", t_val(), true),
        ("map .WRONG args", "{{.MSI.one 1}}", "", t_val(), false),
        ("dot int", "<{{.}}>", "<13>", Value::int(13), true),
        (
            "dot uint",
            "<{{.}}>",
            "<14>",
            Value::Uint(14, UintKind::Uint),
            true,
        ),
        ("dot float", "<{{.}}>", "<15.1>", Value::Float(15.1), true),
        ("dot bool", "<{{.}}>", "<true>", Value::Bool(true), true),
        (
            "dot complex",
            "<{{.}}>",
            "<(16.2-17i)>",
            Value::Complex(16.2, -17.0),
            true,
        ),
        (
            "dot string",
            "<{{.}}>",
            "<hello>",
            Value::str("hello"),
            true,
        ),
        (
            "dot slice",
            "<{{.}}>",
            "<[-1 -2 -3]>",
            ints(&[-1, -2, -3]),
            true,
        ),
        (
            "dot map",
            "<{{.}}>",
            "<map[two:22]>",
            msi(&[("two", 22)]),
            true,
        ),
        ("$ int", "{{$}}", "123", Value::int(123), true),
        ("$.I", "{{$.I}}", "17", t_val(), true),
        ("$.U.V", "{{$.U.V}}", "v", t_val(), true),
        (
            "declare in action",
            "{{$x := $.U.V}}{{$x}}",
            "v",
            t_val(),
            true,
        ),
        (
            "simple assignment",
            "{{$x := 2}}{{$x = 3}}{{$x}}",
            "3",
            t_val(),
            true,
        ),
        (
            "nested assignment",
            "{{$x := 2}}{{if true}}{{$x = 3}}{{end}}{{$x}}",
            "3",
            t_val(),
            true,
        ),
        (
            "nested assignment changes the last declaration",
            "{{$x := 1}}{{if true}}{{$x := 2}}{{if true}}{{$x = 3}}{{end}}{{end}}{{$x}}",
            "1",
            t_val(),
            true,
        ),
        ("empty nil", "{{.Empty0}}", "<no value>", t_val(), true),
        ("empty with int", "{{.Empty1}}", "3", t_val(), true),
        ("empty with string", "{{.Empty2}}", "empty2", t_val(), true),
        ("empty with slice", "{{.Empty3}}", "[7 8]", t_val(), true),
        (
            "empty with struct",
            "{{.Empty4}}",
            "{UinEmpty}",
            t_val(),
            true,
        ),
        (
            "empty with struct, field",
            "{{.Empty4.V}}",
            "UinEmpty",
            t_val(),
            true,
        ),
        (
            "field on interface",
            "{{.foo}}",
            "<no value>",
            Value::Invalid,
            true,
        ),
        (
            "field on parenthesized interface",
            "{{(.).foo}}",
            "<no value>",
            Value::Invalid,
            true,
        ),
        (
            "unparenthesized non-function",
            "{{1 2}}",
            "",
            nil.clone(),
            false,
        ),
        (
            "parenthesized non-function",
            "{{(1) 2}}",
            "",
            nil.clone(),
            false,
        ),
        (
            "parenthesized non-function with no args",
            "{{(1)}}",
            "1",
            nil.clone(),
            true,
        ),
        (".Method0", "-{{.Method0}}-", "-M0-", t_val(), true),
        (
            ".Method1(1234)",
            "-{{.Method1 1234}}-",
            "-1234-",
            t_val(),
            true,
        ),
        (".Method1(.I)", "-{{.Method1 .I}}-", "-17-", t_val(), true),
        (
            ".Method2(.U16, `str`)",
            "-{{.Method2 .U16 `str`}}-",
            "-Method2: 16 str-",
            t_val(),
            true,
        ),
        (
            ".Method2(.U16, $x)",
            "{{if $x := .X}}-{{.Method2 .U16 $x}}{{end}}-",
            "-Method2: 16 x-",
            t_val(),
            true,
        ),
        (
            ".Method3(nil constant)",
            "-{{.Method3 nil}}-",
            "-Method3: <nil>-",
            t_val(),
            true,
        ),
        (
            ".Method3(nil value)",
            "-{{.Method3 .MXI.unset}}-",
            "-Method3: <nil>-",
            t_val(),
            true,
        ),
        (
            "method on var",
            "{{if $x := .}}-{{$x.Method2 .U16 $x.X}}{{end}}-",
            "-Method2: 16 x-",
            t_val(),
            true,
        ),
        (
            "method on chained var",
            "{{range .MSIone}}{{if $.U.TrueFalse $.True}}{{$.U.TrueFalse $.True}}{{else}}WRONG{{end}}{{end}}",
            "true",
            t_val(),
            true,
        ),
        (
            "chained method",
            "{{range .MSIone}}{{if $.GetU.TrueFalse $.True}}{{$.U.TrueFalse $.True}}{{else}}WRONG{{end}}{{end}}",
            "true",
            t_val(),
            true,
        ),
        (
            "chained method on variable",
            "{{with $x := .}}{{with .SI}}{{$.GetU.TrueFalse $.True}}{{end}}{{end}}",
            "true",
            t_val(),
            true,
        ),
        (
            ".BinaryFunc",
            "{{call .BinaryFunc `1` `2`}}",
            "[1=2]",
            t_val(),
            true,
        ),
        (
            ".VariadicFunc0",
            "{{call .VariadicFunc}}",
            "<>",
            t_val(),
            true,
        ),
        (
            ".VariadicFunc2",
            "{{call .VariadicFunc `he` `llo`}}",
            "<he+llo>",
            t_val(),
            true,
        ),
        (
            ".VariadicFuncInt",
            "{{call .VariadicFuncInt 33 `he` `llo`}}",
            "33=<he+llo>",
            t_val(),
            true,
        ),
        (
            "if .BinaryFunc call",
            "{{ if .BinaryFunc}}{{call .BinaryFunc `1` `2`}}{{end}}",
            "[1=2]",
            t_val(),
            true,
        ),
        (
            "if not .BinaryFunc call",
            "{{ if not .BinaryFunc}}{{call .BinaryFunc `1` `2`}}{{else}}No{{end}}",
            "No",
            t_val(),
            true,
        ),
        (".ErrFunc", "{{call .ErrFunc}}", "bla", t_val(), true),
        ("call nil", "{{call nil}}", "", t_val(), false),
        ("empty call", "{{call}}", "", t_val(), false),
        (
            "empty call after pipe valid",
            "{{.ErrFunc | call}}",
            "bla",
            t_val(),
            true,
        ),
        (
            "empty call after pipe invalid",
            "{{1 | call}}",
            "",
            t_val(),
            false,
        ),
        (
            ".BinaryFuncTooFew",
            "{{call .BinaryFunc `1`}}",
            "",
            t_val(),
            false,
        ),
        (
            ".BinaryFuncTooMany",
            "{{call .BinaryFunc `1` `2` `3`}}",
            "",
            t_val(),
            false,
        ),
        (
            ".BinaryFuncBad0",
            "{{call .BinaryFunc 1 3}}",
            "",
            t_val(),
            false,
        ),
        (
            ".BinaryFuncBad1",
            "{{call .BinaryFunc `1` 3}}",
            "",
            t_val(),
            false,
        ),
        (
            ".VariadicFuncBad0",
            "{{call .VariadicFunc 3}}",
            "",
            t_val(),
            false,
        ),
        (
            ".VariadicFuncIntBad0",
            "{{call .VariadicFuncInt}}",
            "",
            t_val(),
            false,
        ),
        (
            ".VariadicFuncIntBad`",
            "{{call .VariadicFuncInt `x`}}",
            "",
            t_val(),
            false,
        ),
        (
            ".VariadicFuncNilBad",
            "{{call .VariadicFunc nil}}",
            "",
            t_val(),
            false,
        ),
        (
            "pipeline",
            "-{{.Method0 | .Method2 .U16}}-",
            "-Method2: 16 M0-",
            t_val(),
            true,
        ),
        (
            "pipeline func",
            "-{{call .VariadicFunc `llo` | call .VariadicFunc `he` }}-",
            "-<he+<llo>>-",
            t_val(),
            true,
        ),
        (
            "bad nil pipeline",
            "{{ .Empty0 | .VariadicFunc }}",
            "",
            t_val(),
            false,
        ),
        (
            "parens in pipeline",
            "{{printf `%d %d %d` (1) (2 | add 3) (add 4 (add 5 6))}}",
            "1 5 15",
            t_val(),
            true,
        ),
        ("parens: $ in paren", "{{($).X}}", "x", t_val(), true),
        (
            "parens: $.GetU in paren",
            "{{($.GetU).V}}",
            "v",
            t_val(),
            true,
        ),
        (
            "parens: $ in paren in pipe",
            "{{($ | echo).X}}",
            "x",
            t_val(),
            true,
        ),
        (
            "parens: spaces and args",
            "{{(makemap \"up\" \"down\" \"left\" \"right\").left}}",
            "right",
            t_val(),
            true,
        ),
        ("if true", "{{if true}}TRUE{{end}}", "TRUE", t_val(), true),
        (
            "if false",
            "{{if false}}TRUE{{else}}FALSE{{end}}",
            "FALSE",
            t_val(),
            true,
        ),
        ("if nil", "{{if nil}}TRUE{{end}}", "", t_val(), false),
        (
            "if 1",
            "{{if 1}}NON-ZERO{{else}}ZERO{{end}}",
            "NON-ZERO",
            t_val(),
            true,
        ),
        (
            "if 0",
            "{{if 0}}NON-ZERO{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "if 1.5",
            "{{if 1.5}}NON-ZERO{{else}}ZERO{{end}}",
            "NON-ZERO",
            t_val(),
            true,
        ),
        (
            "if 0.0",
            "{{if .FloatZero}}NON-ZERO{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "if 1.5i",
            "{{if 1.5i}}NON-ZERO{{else}}ZERO{{end}}",
            "NON-ZERO",
            t_val(),
            true,
        ),
        (
            "if 0.0i",
            "{{if .ComplexZero}}NON-ZERO{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "if nilPointer",
            "{{if .NIL}}NON-ZERO{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "if emptystring",
            "{{if ``}}NON-EMPTY{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "if string",
            "{{if `notempty`}}NON-EMPTY{{else}}EMPTY{{end}}",
            "NON-EMPTY",
            t_val(),
            true,
        ),
        (
            "if emptyslice",
            "{{if .SIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "if slice",
            "{{if .SI}}NON-EMPTY{{else}}EMPTY{{end}}",
            "NON-EMPTY",
            t_val(),
            true,
        ),
        (
            "if emptymap",
            "{{if .MSIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "if map",
            "{{if .MSI}}NON-EMPTY{{else}}EMPTY{{end}}",
            "NON-EMPTY",
            t_val(),
            true,
        ),
        (
            "if map unset",
            "{{if .MXI.none}}NON-ZERO{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "if map not unset",
            "{{if not .MXI.none}}ZERO{{else}}NON-ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "if $x with $y int",
            "{{if $x := true}}{{with $y := .I}}{{$x}},{{$y}}{{end}}{{end}}",
            "true,17",
            t_val(),
            true,
        ),
        (
            "if $x with $x int",
            "{{if $x := true}}{{with $x := .I}}{{$x}},{{end}}{{$x}}{{end}}",
            "17,true",
            t_val(),
            true,
        ),
        (
            "if else if",
            "{{if false}}FALSE{{else if true}}TRUE{{end}}",
            "TRUE",
            t_val(),
            true,
        ),
        (
            "if else chain",
            "{{if eq 1 3}}1{{else if eq 2 3}}2{{else if eq 3 3}}3{{end}}",
            "3",
            t_val(),
            true,
        ),
        (
            "print",
            "{{print \"hello, print\"}}",
            "hello, print",
            t_val(),
            true,
        ),
        ("print 123", "{{print 1 2 3}}", "1 2 3", t_val(), true),
        ("print nil", "{{print nil}}", "<nil>", t_val(), true),
        ("println", "{{println 1 2 3}}", "1 2 3\n", t_val(), true),
        (
            "printf int",
            "{{printf \"%04x\" 127}}",
            "007f",
            t_val(),
            true,
        ),
        (
            "printf float",
            "{{printf \"%g\" 3.5}}",
            "3.5",
            t_val(),
            true,
        ),
        (
            "printf complex",
            "{{printf \"%g\" 1+7i}}",
            "(1+7i)",
            t_val(),
            true,
        ),
        (
            "printf string",
            "{{printf \"%s\" \"hello\"}}",
            "hello",
            t_val(),
            true,
        ),
        (
            "printf function",
            "{{printf \"%#q\" zeroArgs}}",
            "`zeroArgs`",
            t_val(),
            true,
        ),
        ("printf field", "{{printf \"%s\" .U.V}}", "v", t_val(), true),
        (
            "printf method",
            "{{printf \"%s\" .Method0}}",
            "M0",
            t_val(),
            true,
        ),
        (
            "printf dot",
            "{{with .I}}{{printf \"%d\" .}}{{end}}",
            "17",
            t_val(),
            true,
        ),
        (
            "printf var",
            "{{with $x := .I}}{{printf \"%d\" $x}}{{end}}",
            "17",
            t_val(),
            true,
        ),
        (
            "printf lots",
            "{{printf \"%d %s %g %s\" 127 \"hello\" 7-3i .Method0}}",
            "127 hello (7-3i) M0",
            t_val(),
            true,
        ),
        (
            "html",
            "{{html \"<script>alert(\\\"XSS\\\");</script>\"}}",
            "&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;",
            nil.clone(),
            true,
        ),
        (
            "html pipeline",
            "{{printf \"<script>alert(\\\"XSS\\\");</script>\" | html}}",
            "&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;",
            nil.clone(),
            true,
        ),
        (
            "html untyped nil",
            "{{html .Empty0}}",
            "&lt;no value&gt;",
            t_val(),
            true,
        ),
        (
            "js",
            "{{js .}}",
            "It\\'d be nice.",
            Value::str("It'd be nice."),
            true,
        ),
        (
            "urlquery",
            "{{\"http://www.example.org/\"|urlquery}}",
            "http%3A%2F%2Fwww.example.org%2F",
            nil.clone(),
            true,
        ),
        (
            "not",
            "{{not true}} {{not false}}",
            "false true",
            nil.clone(),
            true,
        ),
        (
            "and",
            "{{and false 0}} {{and 1 0}} {{and 0 true}} {{and 1 1}}",
            "false 0 0 1",
            nil.clone(),
            true,
        ),
        (
            "or",
            "{{or 0 0}} {{or 1 0}} {{or 0 true}} {{or 1 1}}",
            "0 1 true 1",
            nil.clone(),
            true,
        ),
        (
            "or short-circuit",
            "{{or 0 1 (die)}}",
            "1",
            nil.clone(),
            true,
        ),
        (
            "and short-circuit",
            "{{and 1 0 (die)}}",
            "0",
            nil.clone(),
            true,
        ),
        (
            "or short-circuit2",
            "{{or 0 0 (die)}}",
            "",
            nil.clone(),
            false,
        ),
        (
            "and short-circuit2",
            "{{and 1 1 (die)}}",
            "",
            nil.clone(),
            false,
        ),
        ("and pipe-true", "{{1 | and 1}}", "1", nil.clone(), true),
        ("and pipe-false", "{{0 | and 1}}", "0", nil.clone(), true),
        ("or pipe-true", "{{1 | or 0}}", "1", nil.clone(), true),
        ("or pipe-false", "{{0 | or 0}}", "0", nil.clone(), true),
        (
            "and undef",
            "{{and 1 .Unknown}}",
            "<no value>",
            Value::Invalid,
            true,
        ),
        (
            "or undef",
            "{{or 0 .Unknown}}",
            "<no value>",
            Value::Invalid,
            true,
        ),
        (
            "boolean if",
            "{{if and true 1 `hi`}}TRUE{{else}}FALSE{{end}}",
            "TRUE",
            t_val(),
            true,
        ),
        (
            "boolean if not",
            "{{if and true 1 `hi` | not}}TRUE{{else}}FALSE{{end}}",
            "FALSE",
            nil.clone(),
            true,
        ),
        (
            "boolean if pipe",
            "{{if true | not | and 1}}TRUE{{else}}FALSE{{end}}",
            "FALSE",
            nil.clone(),
            true,
        ),
        ("slice[0]", "{{index .SI 0}}", "3", t_val(), true),
        ("slice[1]", "{{index .SI 1}}", "4", t_val(), true),
        ("slice[HUGE]", "{{index .SI 10}}", "", t_val(), false),
        ("slice[WRONG]", "{{index .SI `hello`}}", "", t_val(), false),
        ("slice[nil]", "{{index .SI nil}}", "", t_val(), false),
        ("map[one]", "{{index .MSI `one`}}", "1", t_val(), true),
        ("map[two]", "{{index .MSI `two`}}", "2", t_val(), true),
        ("map[nil]", "{{index .MSI nil}}", "", t_val(), false),
        ("map[WRONG]", "{{index .MSI 10}}", "", t_val(), false),
        (
            "double index",
            "{{index .SMSI 1 `eleven`}}",
            "11",
            t_val(),
            true,
        ),
        ("nil[1]", "{{index nil 1}}", "", t_val(), false),
        (
            "index of an interface field",
            "{{index .Empty3 0}}",
            "7",
            t_val(),
            true,
        ),
        ("slice[:]", "{{slice .SI}}", "[3 4 5]", t_val(), true),
        ("slice[1:]", "{{slice .SI 1}}", "[4 5]", t_val(), true),
        ("slice[1:2]", "{{slice .SI 1 2}}", "[4]", t_val(), true),
        ("slice[-1:]", "{{slice .SI -1}}", "", t_val(), false),
        ("slice[1:-2]", "{{slice .SI 1 -2}}", "", t_val(), false),
        ("slice[1:2:-1]", "{{slice .SI 1 2 -1}}", "", t_val(), false),
        ("slice[2:1]", "{{slice .SI 2 1}}", "", t_val(), false),
        ("slice[2:2:1]", "{{slice .SI 2 2 1}}", "", t_val(), false),
        ("out of range", "{{slice .SI 4 5}}", "", t_val(), false),
        ("out of range", "{{slice .SI 2 2 5}}", "", t_val(), false),
        ("array[:]", "{{slice .AI}}", "[3 4 5]", t_val(), true),
        ("array[1:]", "{{slice .AI 1}}", "[4 5]", t_val(), true),
        ("array[1:2]", "{{slice .AI 1 2}}", "[4]", t_val(), true),
        ("string[:]", "{{slice .S}}", "xyz", t_val(), true),
        ("string[0:1]", "{{slice .S 0 1}}", "x", t_val(), true),
        ("string[1:]", "{{slice .S 1}}", "yz", t_val(), true),
        ("string[1:2]", "{{slice .S 1 2}}", "y", t_val(), true),
        ("out of range", "{{slice .S 1 5}}", "", t_val(), false),
        (
            "3-index slice of string",
            "{{slice .S 1 2 2}}",
            "",
            t_val(),
            false,
        ),
        (
            "slice of an interface field",
            "{{slice .Empty3 0 1}}",
            "[7]",
            t_val(),
            true,
        ),
        ("slice", "{{len .SI}}", "3", t_val(), true),
        ("map", "{{len .MSI }}", "3", t_val(), true),
        ("len of int", "{{len 3}}", "", t_val(), false),
        ("len of nothing", "{{len .Empty0}}", "", t_val(), false),
        (
            "len of an interface field",
            "{{len .Empty3}}",
            "2",
            t_val(),
            true,
        ),
        (
            "with true",
            "{{with true}}{{.}}{{end}}",
            "true",
            t_val(),
            true,
        ),
        (
            "with false",
            "{{with false}}{{.}}{{else}}FALSE{{end}}",
            "FALSE",
            t_val(),
            true,
        ),
        (
            "with 1",
            "{{with 1}}{{.}}{{else}}ZERO{{end}}",
            "1",
            t_val(),
            true,
        ),
        (
            "with 0",
            "{{with 0}}{{.}}{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "with 1.5",
            "{{with 1.5}}{{.}}{{else}}ZERO{{end}}",
            "1.5",
            t_val(),
            true,
        ),
        (
            "with 0.0",
            "{{with .FloatZero}}{{.}}{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "with 1.5i",
            "{{with 1.5i}}{{.}}{{else}}ZERO{{end}}",
            "(0+1.5i)",
            t_val(),
            true,
        ),
        (
            "with 0.0i",
            "{{with .ComplexZero}}{{.}}{{else}}ZERO{{end}}",
            "ZERO",
            t_val(),
            true,
        ),
        (
            "with emptystring",
            "{{with ``}}{{.}}{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "with string",
            "{{with `notempty`}}{{.}}{{else}}EMPTY{{end}}",
            "notempty",
            t_val(),
            true,
        ),
        (
            "with emptyslice",
            "{{with .SIEmpty}}{{.}}{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "with slice",
            "{{with .SI}}{{.}}{{else}}EMPTY{{end}}",
            "[3 4 5]",
            t_val(),
            true,
        ),
        (
            "with emptymap",
            "{{with .MSIEmpty}}{{.}}{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "with map",
            "{{with .MSIone}}{{.}}{{else}}EMPTY{{end}}",
            "map[one:1]",
            t_val(),
            true,
        ),
        (
            "with empty interface, struct field",
            "{{with .Empty4}}{{.V}}{{end}}",
            "UinEmpty",
            t_val(),
            true,
        ),
        (
            "with $x int",
            "{{with $x := .I}}{{$x}}{{end}}",
            "17",
            t_val(),
            true,
        ),
        (
            "with $x struct.U.V",
            "{{with $x := $}}{{$x.U.V}}{{end}}",
            "v",
            t_val(),
            true,
        ),
        (
            "with variable and action",
            "{{with $x := $}}{{$y := $.U.V}}{{$y}}{{end}}",
            "v",
            t_val(),
            true,
        ),
        (
            "with else with",
            "{{with 0}}{{.}}{{else with true}}{{.}}{{end}}",
            "true",
            t_val(),
            true,
        ),
        (
            "with else with chain",
            "{{with 0}}{{.}}{{else with false}}{{.}}{{else with `notempty`}}{{.}}{{end}}",
            "notempty",
            t_val(),
            true,
        ),
        (
            "range []int",
            "{{range .SI}}-{{.}}-{{end}}",
            "-3--4--5-",
            t_val(),
            true,
        ),
        (
            "range empty no else",
            "{{range .SIEmpty}}-{{.}}-{{end}}",
            "",
            t_val(),
            true,
        ),
        (
            "range []int else",
            "{{range .SI}}-{{.}}-{{else}}EMPTY{{end}}",
            "-3--4--5-",
            t_val(),
            true,
        ),
        (
            "range empty else",
            "{{range .SIEmpty}}-{{.}}-{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "range []int break else",
            "{{range .SI}}-{{.}}-{{break}}NOTREACHED{{else}}EMPTY{{end}}",
            "-3-",
            t_val(),
            true,
        ),
        (
            "range []int continue else",
            "{{range .SI}}-{{.}}-{{continue}}NOTREACHED{{else}}EMPTY{{end}}",
            "-3--4--5-",
            t_val(),
            true,
        ),
        (
            "range []bool",
            "{{range .SB}}-{{.}}-{{end}}",
            "-true--false-",
            t_val(),
            true,
        ),
        (
            "range []int method",
            "{{range .SI | .MAdd .I}}-{{.}}-{{end}}",
            "-20--21--22-",
            t_val(),
            true,
        ),
        (
            "range map",
            "{{range .MSI}}-{{.}}-{{end}}",
            "-1--3--2-",
            t_val(),
            true,
        ),
        (
            "range empty map no else",
            "{{range .MSIEmpty}}-{{.}}-{{end}}",
            "",
            t_val(),
            true,
        ),
        (
            "range map else",
            "{{range .MSI}}-{{.}}-{{else}}EMPTY{{end}}",
            "-1--3--2-",
            t_val(),
            true,
        ),
        (
            "range empty map else",
            "{{range .MSIEmpty}}-{{.}}-{{else}}EMPTY{{end}}",
            "EMPTY",
            t_val(),
            true,
        ),
        (
            "range empty interface",
            "{{range .Empty3}}-{{.}}-{{else}}EMPTY{{end}}",
            "-7--8-",
            t_val(),
            true,
        ),
        (
            "range empty nil",
            "{{range .Empty0}}-{{.}}-{{end}}",
            "",
            t_val(),
            true,
        ),
        (
            "range $x SI",
            "{{range $x := .SI}}<{{$x}}>{{end}}",
            "<3><4><5>",
            t_val(),
            true,
        ),
        (
            "range $x $y SI",
            "{{range $x, $y := .SI}}<{{$x}}={{$y}}>{{end}}",
            "<0=3><1=4><2=5>",
            t_val(),
            true,
        ),
        (
            "range $x MSIone",
            "{{range $x := .MSIone}}<{{$x}}>{{end}}",
            "<1>",
            t_val(),
            true,
        ),
        (
            "range $x $y MSIone",
            "{{range $x, $y := .MSIone}}<{{$x}}={{$y}}>{{end}}",
            "<one=1>",
            t_val(),
            true,
        ),
        (
            "range count",
            "{{range $i, $x := count 5}}[{{$i}}]{{$x}}{{end}}",
            "[0]a[1]b[2]c[3]d[4]e",
            t_val(),
            true,
        ),
        (
            "range nil count",
            "{{range $i, $x := count 0}}{{else}}empty{{end}}",
            "empty",
            t_val(),
            true,
        ),
        (
            "range int64",
            "{{range $v := .}}{{print $v}}{{else}}empty{{end}}",
            "01234",
            Value::Int(5, IntKind::Int64),
            true,
        ),
        (
            "range uint8",
            "{{range $v := .}}{{print $v}}{{else}}empty{{end}}",
            "01234",
            Value::Uint(5, UintKind::Uint8),
            true,
        ),
        (
            "range int 0",
            "{{range $v := .}}{{print $v}}{{else}}empty{{end}}",
            "empty",
            Value::int(0),
            true,
        ),
        (
            "range 5",
            "{{range $v := 5}}{{printf \"%T%d\" $v $v}}{{end}}",
            "int0int1int2int3int4",
            nil.clone(),
            true,
        ),
        (
            "range int two vars",
            "{{range $i, $v := 5}}{{$v}}{{end}}",
            "",
            nil.clone(),
            false,
        ),
        (
            "or as if true",
            "{{or .SI \"slice is empty\"}}",
            "[3 4 5]",
            t_val(),
            true,
        ),
        (
            "or as if false",
            "{{or .SIEmpty \"slice is empty\"}}",
            "slice is empty",
            t_val(),
            true,
        ),
        (
            "error method, error",
            "{{.MyError true}}",
            "",
            t_val(),
            false,
        ),
        (
            "error method, no error",
            "{{.MyError false}}",
            "false",
            t_val(),
            true,
        ),
        ("decimal", "{{print 1234}}", "1234", t_val(), true),
        ("decimal _", "{{print 12_34}}", "1234", t_val(), true),
        ("binary", "{{print 0b101}}", "5", t_val(), true),
        ("binary _", "{{print 0b_1_0_1}}", "5", t_val(), true),
        ("BINARY", "{{print 0B101}}", "5", t_val(), true),
        ("octal0", "{{print 0377}}", "255", t_val(), true),
        ("octal", "{{print 0o377}}", "255", t_val(), true),
        ("octal _", "{{print 0o_3_7_7}}", "255", t_val(), true),
        ("OCTAL", "{{print 0O377}}", "255", t_val(), true),
        ("hex", "{{print 0x123}}", "291", t_val(), true),
        ("hex _", "{{print 0x1_23}}", "291", t_val(), true),
        ("HEX", "{{print 0X123ABC}}", "1194684", t_val(), true),
        ("float", "{{print 123.4}}", "123.4", t_val(), true),
        ("float _", "{{print 0_0_1_2_3.4}}", "123.4", t_val(), true),
        ("hex float", "{{print +0x1.ep+2}}", "7.5", t_val(), true),
        (
            "hex float _",
            "{{print +0x_1.e_0p+0_2}}",
            "7.5",
            t_val(),
            true,
        ),
        ("HEX float", "{{print +0X1.EP+2}}", "7.5", t_val(), true),
        (
            "print multi",
            "{{print 1_2_3_4 7.5_00_00_00}}",
            "1234 7.5",
            t_val(),
            true,
        ),
        (
            "print multi2",
            "{{print 1234 0x0_1.e_0p+02}}",
            "1234 7.5",
            t_val(),
            true,
        ),
        (
            "bug0",
            "{{range .MSIone}}{{if $.Method1 .}}X{{end}}{{end}}",
            "X",
            t_val(),
            true,
        ),
        ("bug3", "{{with $}}{{.Method0}}{{end}}", "M0", t_val(), true),
        (
            "bug4",
            "{{if .Empty0}}non-nil{{else}}nil{{end}}",
            "nil",
            t_val(),
            true,
        ),
        ("bug7a", "{{3 2}}", "", t_val(), false),
        ("bug7b", "{{$x := 1}}{{$x 2}}", "", t_val(), false),
        ("bug7c", "{{$x := 1}}{{3 | $x}}", "", t_val(), false),
        ("bug8a", "{{3|oneArg}}", "", t_val(), false),
        ("bug8b", "{{4|dddArg 3}}", "", t_val(), false),
        (
            "bug10",
            "{{mapOfThree.three}}-{{(mapOfThree).three}}",
            "3-3",
            Value::int(0),
            true,
        ),
        ("bug12xe", "{{printf `%T` 0xef}}", "int", t_val(), true),
        ("bug12xE", "{{printf `%T` 0xEE}}", "int", t_val(), true),
        ("bug12Xe", "{{printf `%T` 0Xef}}", "int", t_val(), true),
        ("bug12XE", "{{printf `%T` 0XEE}}", "int", t_val(), true),
        ("bug13", "{{print (.Copy).I}}", "17", t_val(), true),
        ("bug14a", "{{(nil).True}}", "", t_val(), false),
        ("bug14b", "{{$x := nil}}{{$x.anything}}", "", t_val(), false),
    ];
    let mut failures = Vec::new();
    for (name, input, output, data, ok) in cases {
        match run(input, data) {
            Ok(got) if !ok => failures.push(format!("{name}: expected error; got {got:?}")),
            Ok(got) if got != output => {
                failures.push(format!("{name}: expected {output:?}; got {got:?}"))
            }
            Err(e) if ok => failures.push(format!("{name}: unexpected error: {e}")),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn values_data(values: &str) -> Value {
    let values: serde_json::Value = serde_json::from_str(values).unwrap();
    let mut top = BTreeMap::new();
    top.insert("Values".to_string(), Value::from_json(&values));
    Value::map(top)
}

fn run_zero(input: &str, data: Value) -> Result<String, String> {
    let mut set = Set::new("t", funcs());
    set.missing_key = MissingKey::Zero;
    set.parse("t", input)?;
    Rc::new(set).execute("t", data, None)
}

#[test]
fn error_messages_as_go() {
    let data = || values_data(r#"{"list": [1, 2, 3], "num": 1000000, "s": "x"}"#);
    let cases = [
        (
            "{{.Values.foo.bar}}",
            "template: t:1:9: executing \"t\" at <.Values.foo.bar>: nil pointer evaluating interface {}.bar",
        ),
        (
            "\n{{ index .Values.list 10 }}",
            "template: t:2:3: executing \"t\" at <index .Values.list 10>: error calling index: index out of range: 10",
        ),
        (
            "{{ eq .Values.num 1000000 }}",
            "template: t:1:3: executing \"t\" at <eq .Values.num 1000000>: error calling eq: incompatible types for comparison: float64 and int",
        ),
        (
            "{{ .Values.s.x }}",
            "template: t:1:10: executing \"t\" at <.Values.s.x>: can't evaluate field x in type interface {}",
        ),
        (
            "{{ oneArg .Values.missing }}",
            "template: t:1:17: executing \"t\" at <.Values.missing>: wrong type for value; expected string; got interface {}",
        ),
        (
            "{{ .Values.missing | oneArg }}",
            "template: t:1:21: executing \"t\" at <oneArg>: invalid value; expected string",
        ),
        (
            "{{ template \"nope\" }}",
            "template: t:1:12: executing \"t\" at <{{template \"nope\"}}>: template \"nope\" not defined",
        ),
        (
            "{{ range .Values.s }}{{ end }}",
            "template: t:1:16: executing \"t\" at <.Values.s>: range can't iterate over x",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(run_zero(input, data()).unwrap_err(), want, "{input:?}");
    }
    // Floats print as Go prints them; missing keys print as <no value>.
    assert_eq!(
        run_zero(
            "{{ .Values.num }} {{ .Values.nope }} {{ print .Values.nope }}",
            data()
        )
        .unwrap(),
        "1e+06 <no value> <nil>"
    );
}
