//! The loop's journal: one JSON object per line on stderr, redacted.

use serde_json::json;

/// A structured log line on stderr. Every text in it goes through [`assay_core::redact::text`]:
/// a journal never holds a secret key or a URL's credentials.
pub fn log(event: &str, fields: serde_json::Value) {
    let mut v = json!({"ts": assay_core::Timestamp::now().unix_secs(), "event": event});
    if let (Some(obj), Some(extra)) = (v.as_object_mut(), fields.as_object()) {
        for (k, val) in extra {
            obj.insert(k.clone(), redacted(val.clone()));
        }
    }
    eprintln!("{v}");
}

fn redacted(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(assay_core::redact::text(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(redacted).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, redacted(v))).collect())
        }
        other => other,
    }
}
