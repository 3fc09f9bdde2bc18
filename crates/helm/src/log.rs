//! What helm logs while loading and rendering a chart (`this chart is deprecated`, values that
//! cannot be coalesced, conditions that are not booleans …), kept as records and written as
//! Helm 4's `log/slog` text handler writes them to standard error:
//! `level=WARN msg="this chart is deprecated"`.

use std::fmt;

/// The level of a record. Helm routes the standard `log` package (coalescing's warnings)
/// through slog at INFO; its own warnings are WARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
}

/// One record: a message and its attributes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub level: Level,
    pub message: String,
    pub attrs: Vec<(&'static str, String)>,
}

impl Warning {
    /// A line of the standard `log` package (INFO).
    pub fn info(message: impl Into<String>) -> Warning {
        Warning {
            level: Level::Info,
            message: message.into(),
            attrs: Vec::new(),
        }
    }

    /// A `slog.Warn` record.
    pub fn warn(message: impl Into<String>, attrs: Vec<(&'static str, String)>) -> Warning {
        Warning {
            level: Level::Warn,
            message: message.into(),
            attrs,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Info => "INFO",
            Level::Warn => "WARN",
        };
        write!(f, "level={level} msg={}", text_value(&self.message))?;
        for (key, value) in &self.attrs {
            write!(f, " {key}={}", text_value(value))?;
        }
        Ok(())
    }
}

/// A value as slog's text handler writes it: quoted (Go's `strconv.Quote`) when empty or when
/// it holds a space, `=`, `"`, a control character or a non-printing character.
fn text_value(s: &str) -> String {
    let needs_quoting = s.is_empty()
        || s.chars().any(|c| {
            if c.is_ascii() {
                c == ' ' || c == '=' || c == '"' || c.is_ascii_control()
            } else {
                c.is_whitespace() || c.is_control() || c == '\u{fffd}'
            }
        });
    if needs_quoting {
        crate::template::quote::quote(s)
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_written_as_slog_s_text_handler_writes_them() {
        assert_eq!(
            Warning::warn("this chart is deprecated", vec![]).to_string(),
            r#"level=WARN msg="this chart is deprecated""#
        );
        assert_eq!(
            Warning::warn(
                "returned non-bool value",
                vec![
                    ("path", "db.enabled".into()),
                    ("chart", "postgresql".into())
                ]
            )
            .to_string(),
            r#"level=WARN msg="returned non-bool value" path=db.enabled chart=postgresql"#
        );
        assert_eq!(
            Warning::info("warning: a=b \"x\"").to_string(),
            r#"level=INFO msg="warning: a=b \"x\"""#
        );
        assert_eq!(Warning::info("plain").to_string(), "level=INFO msg=plain");
        assert_eq!(Warning::info("").to_string(), r#"level=INFO msg="""#);
    }
}
