//! Secrets' `stringData`, folded into `data` as Kubernetes does when it stores a Secret.

use base64::Engine;
use serde_json::{Value, json};

/// Moves a Secret's `stringData` into `data`, base64-encoded; a key in both takes the
/// `stringData` value. Non-string values are encoded as their JSON text. Does nothing when
/// there is no `stringData` map.
pub fn fold_string_data(secret: &mut Value) {
    let Some(m) = secret.as_object_mut() else {
        return;
    };
    let Some(Value::Object(strings)) = m.remove("stringData") else {
        return;
    };
    let data = m.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    for (k, v) in strings {
        let text = v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        data[k] = json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_wins_and_disappears() {
        let mut s = json!({"kind": "Secret", "data": {"a": "eA==", "b": "eA=="}, "stringData": {"b": "hello"}});
        fold_string_data(&mut s);
        assert_eq!(
            s,
            json!({"kind": "Secret", "data": {"a": "eA==", "b": "aGVsbG8="}})
        );
        let mut plain = json!({"kind": "Secret", "data": {"a": "eA=="}});
        fold_string_data(&mut plain);
        assert_eq!(plain, json!({"kind": "Secret", "data": {"a": "eA=="}}));
    }
}
