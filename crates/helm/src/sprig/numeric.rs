//! Sprig's arithmetic: integer math through spf13/cast's conversions (`add`, `sub`, `mul`,
//! `div`, `mod`, `max`, `min`), float math through decimals (`addf` …), rounding, `until`,
//! `seq`, and the conversions `int`, `int64`, `float64`, `atoi`, `toDecimal`.

use super::{i, s, to_float64, to_int64};
use crate::template::func::{Func, Ty};
use crate::template::value::{IntKind, ListKind, Value};
use crate::template::{FuncMap, fmt};

fn int64(v: i64) -> Value {
    Value::Int(v, IntKind::Int64)
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Any, Int, String as Str};
    m.insert(Func::new("atoi", &[Str], None, |_, a| {
        Ok(Value::int(s(&a[0]).parse::<i64>().unwrap_or(0)))
    }));
    m.insert(Func::new("int64", &[Any], None, |_, a| {
        Ok(int64(to_int64(&a[0])))
    }));
    m.insert(Func::new("int", &[Any], None, |_, a| {
        Ok(Value::int(to_int64(&a[0])))
    }));
    m.insert(Func::new("float64", &[Any], None, |_, a| {
        Ok(Value::Float(to_float64(&a[0])))
    }));
    m.insert(Func::new("toDecimal", &[Any], None, |_, a| {
        let text = fmt::sprint(&a[..1]);
        Ok(int64(i64::from_str_radix(&text, 8).unwrap_or(0)))
    }));
    m.insert(Func::new("seq", &[], Some(Int), |_, a| {
        Ok(Value::str(&seq(&a)))
    }));
    m.insert(Func::new("until", &[Int], None, |_, a| {
        let n = i(&a[0]);
        Ok(ints(until_step(0, n, if n < 0 { -1 } else { 1 })))
    }));
    m.insert(Func::new("untilStep", &[Int, Int, Int], None, |_, a| {
        Ok(ints(until_step(i(&a[0]), i(&a[1]), i(&a[2]))))
    }));
    m.insert(Func::new("add1", &[Any], None, |_, a| {
        Ok(int64(to_int64(&a[0]).wrapping_add(1)))
    }));
    m.insert(Func::new("add", &[], Some(Any), |_, a| {
        Ok(int64(
            a.iter().fold(0i64, |acc, v| acc.wrapping_add(to_int64(v))),
        ))
    }));
    m.insert(Func::new("sub", &[Any, Any], None, |_, a| {
        Ok(int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
    }));
    m.insert(Func::new("div", &[Any, Any], None, |_, a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(int64(to_int64(&a[0]).wrapping_div(d)))
    }));
    m.insert(Func::new("mod", &[Any, Any], None, |_, a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(int64(to_int64(&a[0]).wrapping_rem(d)))
    }));
    m.insert(Func::new("mul", &[Any], Some(Any), |_, a| {
        Ok(int64(a[1..].iter().fold(to_int64(&a[0]), |acc, v| {
            acc.wrapping_mul(to_int64(v))
        })))
    }));
    m.insert(Func::new("randInt", &[Int, Int], None, |_, a| {
        let (min, max) = (i(&a[0]), i(&a[1]));
        if max <= min {
            return Err("invalid argument to Intn".into());
        }
        let span = (max - min) as u64;
        Ok(Value::int(min + (super::strings::rand_u64() % span) as i64))
    }));
    m.insert(Func::new("add1f", &[Any], None, |_, a| {
        Ok(Value::Float(decimal(to_float64(&a[0]), &[1.0], Op::Add)))
    }));
    m.insert(Func::new("addf", &[], Some(Any), |_, a| {
        let rest: Vec<f64> = a.iter().map(to_float64).collect();
        Ok(Value::Float(decimal(0.0, &rest, Op::Add)))
    }));
    for (name, op) in [("subf", Op::Sub), ("divf", Op::Div), ("mulf", Op::Mul)] {
        m.insert(Func::new(name, &[Any], Some(Any), move |_, a| {
            let rest: Vec<f64> = a[1..].iter().map(to_float64).collect();
            Ok(Value::Float(decimal(to_float64(&a[0]), &rest, op)))
        }));
    }
    m.insert(Func::new("max", &[Any], Some(Any), |_, a| {
        Ok(int64(
            a[1..].iter().map(to_int64).fold(to_int64(&a[0]), i64::max),
        ))
    }));
    m.alias("biggest", "max");
    m.insert(Func::new("min", &[Any], Some(Any), |_, a| {
        Ok(int64(
            a[1..].iter().map(to_int64).fold(to_int64(&a[0]), i64::min),
        ))
    }));
    m.insert(Func::new("maxf", &[Any], Some(Any), |_, a| {
        Ok(Value::Float(
            a[1..]
                .iter()
                .map(to_float64)
                .fold(to_float64(&a[0]), go_max),
        ))
    }));
    m.insert(Func::new("minf", &[Any], Some(Any), |_, a| {
        Ok(Value::Float(
            a[1..]
                .iter()
                .map(to_float64)
                .fold(to_float64(&a[0]), go_min),
        ))
    }));
    m.insert(Func::new("ceil", &[Any], None, |_, a| {
        Ok(Value::Float(to_float64(&a[0]).ceil()))
    }));
    m.insert(Func::new("floor", &[Any], None, |_, a| {
        Ok(Value::Float(to_float64(&a[0]).floor()))
    }));
    m.insert(Func::new(
        "round",
        &[Any, Int],
        Some(Ty::Float64),
        |_, a| {
            let round_on = match a.get(2) {
                Some(Value::Float(f)) => *f,
                _ => 0.5,
            };
            let val = to_float64(&a[0]);
            let pow = 10f64.powf(i(&a[1]) as f64);
            let digit = pow * val;
            let frac = digit.fract();
            let r = if frac >= round_on {
                digit.ceil()
            } else {
                digit.floor()
            };
            Ok(Value::Float(r / pow))
        },
    ));
}

fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn ints(v: Vec<i64>) -> Value {
    Value::List(
        std::rc::Rc::new(v.into_iter().map(Value::int).collect()),
        ListKind::Int,
    )
}

/// Sprig's `untilStep`.
fn until_step(start: i64, stop: i64, step: i64) -> Vec<i64> {
    let mut v = Vec::new();
    if stop < start {
        if step >= 0 {
            return v;
        }
        let mut i = start;
        while i > stop {
            v.push(i);
            i += step;
        }
        return v;
    }
    if step <= 0 {
        return v;
    }
    let mut i = start;
    while i < stop {
        v.push(i);
        i += step;
    }
    v
}

/// Sprig's `seq`, like the Unix command.
fn seq(params: &[Value]) -> String {
    let p: Vec<i64> = params.iter().map(i).collect();
    let join = |v: Vec<i64>| v.iter().map(i64::to_string).collect::<Vec<_>>().join(" ");
    match p.as_slice() {
        [end] => {
            let start = 1;
            let inc = if *end < start { -1 } else { 1 };
            join(until_step(start, end + inc, inc))
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            join(until_step(*start, end + step, step))
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if *step > 0 {
                    return String::new();
                }
            }
            join(until_step(*start, end + inc, *step))
        }
        _ => String::new(),
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// shopspring/decimal arithmetic on the shortest decimal forms of the floats, as Sprig's
/// `addf` family computes: `addf 0.1 0.2` is 0.3, not 0.30000000000000004.
fn decimal(first: f64, rest: &[f64], op: Op) -> f64 {
    let mut acc = Decimal::from_f64(first);
    for x in rest {
        let d = Decimal::from_f64(*x);
        acc = match op {
            Op::Add => acc.add(&d),
            Op::Sub => acc.sub(&d),
            Op::Mul => acc.mul(&d),
            Op::Div => return_div(acc, &d),
        };
    }
    acc.to_f64()
}

fn return_div(a: Decimal, b: &Decimal) -> Decimal {
    // shopspring's Div keeps 16 fractional digits.
    let (a, b) = (a.to_f64(), b.to_f64());
    Decimal::from_str_exact(&format!("{:.16}", a / b))
}

/// A decimal number: an integer mantissa and a power-of-ten exponent.
#[derive(Clone, Copy)]
struct Decimal {
    mantissa: i128,
    exp: i32,
}

impl Decimal {
    fn from_f64(f: f64) -> Decimal {
        if !f.is_finite() {
            return Decimal {
                mantissa: 0,
                exp: 0,
            };
        }
        Decimal::from_str_exact(&format!("{f:e}"))
    }

    fn from_str_exact(text: &str) -> Decimal {
        let (mantissa, exp) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
            None => (text, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{int}{frac}");
        Decimal {
            mantissa: digits.parse::<i128>().unwrap_or(0),
            exp: exp - frac.len() as i32,
        }
    }

    fn align(a: &Decimal, b: &Decimal) -> (i128, i128, i32) {
        let exp = a.exp.min(b.exp);
        let scale = |d: &Decimal| {
            d.mantissa
                .saturating_mul(10i128.saturating_pow((d.exp - exp) as u32))
        };
        (scale(a), scale(b), exp)
    }

    fn add(&self, o: &Decimal) -> Decimal {
        let (a, b, exp) = Decimal::align(self, o);
        Decimal {
            mantissa: a.saturating_add(b),
            exp,
        }
    }

    fn sub(&self, o: &Decimal) -> Decimal {
        let (a, b, exp) = Decimal::align(self, o);
        Decimal {
            mantissa: a.saturating_sub(b),
            exp,
        }
    }

    fn mul(&self, o: &Decimal) -> Decimal {
        Decimal {
            mantissa: self.mantissa.saturating_mul(o.mantissa),
            exp: self.exp + o.exp,
        }
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.mantissa, self.exp)
            .parse()
            .unwrap_or(0.0)
    }
}
