//! A small JSON Schema checker for tool arguments.
//!
//! It understands the subset our tool schemas use (`type`, `enum`, `properties`, `required`,
//! `additionalProperties`, `items`, `minItems`, `minimum`) and reports the first violation with
//! the path of the offending field, so a model can fix its call.

use std::fmt;

use serde_json::Value;

/// One way a value breaks a schema: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// Path of the offending field (`action`, `ops[0].pat`); empty for the arguments as a whole.
    pub path: String,
    /// What is wrong, as a sentence fragment (`is required`, `must be a string (was number)`).
    pub problem: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "the arguments {}", self.problem)
        } else {
            write!(f, "`{}` {}", self.path, self.problem)
        }
    }
}

impl std::error::Error for SchemaViolation {}

/// Check `value` against `schema`; the first violation found is returned.
pub fn validate(schema: &Value, value: &Value) -> Result<(), SchemaViolation> {
    check(schema, value, &mut String::new())
}

fn violation(path: &str, problem: impl Into<String>) -> SchemaViolation {
    SchemaViolation {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

/// The JSON type name of a value, as JSON Schema spells it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(value: &Value, expected: &str) -> bool {
    let actual = type_name(value);
    actual == expected || (expected == "number" && actual == "integer")
}

fn article(type_name: &str) -> &'static str {
    match type_name {
        "object" | "array" | "integer" => "an",
        _ => "a",
    }
}

fn check(schema: &Value, value: &Value, path: &mut String) -> Result<(), SchemaViolation> {
    let Some(schema) = schema.as_object() else {
        // `true` (or any non-object schema) accepts everything.
        return Ok(());
    };
    if let Some(expected) = schema.get("type").and_then(Value::as_str)
        && !has_type(value, expected)
    {
        return Err(violation(
            path,
            format!(
                "must be {} {expected} (was {})",
                article(expected),
                type_name(value)
            ),
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let choices: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(violation(
            path,
            format!("must be {} (was {value})", choices.join(" or ")),
        ));
    }
    match value {
        Value::Object(map) => check_object(schema, map, path),
        Value::Array(items) => check_array(schema, items, path),
        Value::Number(n) => {
            if let Some(minimum) = schema.get("minimum").and_then(Value::as_f64)
                && n.as_f64().is_some_and(|n| n < minimum)
            {
                return Err(violation(
                    path,
                    format!("must be at least {minimum} (was {n})"),
                ));
            }
            Ok(())
        }
        Value::Null | Value::Bool(_) | Value::String(_) => Ok(()),
    }
}

fn check_object(
    schema: &serde_json::Map<String, Value>,
    map: &serde_json::Map<String, Value>,
    path: &mut String,
) -> Result<(), SchemaViolation> {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                return Err(violation(&join(path, key), "is required"));
            }
        }
    }
    for (key, field) in map {
        let field_schema = properties.and_then(|p| p.get(key));
        let len = path.len();
        push_key(path, key);
        let outcome = match (field_schema, schema.get("additionalProperties")) {
            (Some(field_schema), _) => check(field_schema, field, path),
            (None, Some(Value::Bool(false))) => {
                let allowed: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                Err(violation(
                    path,
                    format!("is not a known field (allowed: {})", allowed.join(", ")),
                ))
            }
            (None, Some(extra_schema)) => check(extra_schema, field, path),
            (None, None) => Ok(()),
        };
        path.truncate(len);
        outcome?;
    }
    Ok(())
}

fn check_array(
    schema: &serde_json::Map<String, Value>,
    items: &[Value],
    path: &mut String,
) -> Result<(), SchemaViolation> {
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        let noun = if min == 1 { "item" } else { "items" };
        return Err(violation(
            path,
            format!("must have at least {min} {noun} (has {})", items.len()),
        ));
    }
    if let Some(item_schema) = schema.get("items") {
        for (index, item) in items.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!("[{index}]"));
            let outcome = check(item_schema, item, path);
            path.truncate(len);
            outcome?;
        }
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    let mut joined = path.to_owned();
    push_key(&mut joined, key);
    joined
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "ops": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {"pat": {"type": "string"}, "out": {"type": "string"}},
                    "required": ["pat", "out"],
                    "additionalProperties": false
                }},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["ops"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_a_value_matching_the_schema() {
        assert_eq!(
            validate(
                &schema(),
                &json!({"ops": [{"pat": "a", "out": "b"}], "limit": 3})
            ),
            Ok(())
        );
    }

    #[test]
    fn names_the_nested_field_that_is_missing() {
        let err = validate(&schema(), &json!({"ops": [{"pat": "a"}]})).unwrap_err();
        assert_eq!(err.to_string(), "`ops[0].out` is required");
    }

    #[test]
    fn names_the_unknown_key_and_lists_the_allowed_ones() {
        let err = validate(
            &schema(),
            &json!({"ops": [{"pat": "a", "out": "b"}], "extra": 1}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`extra` is not a known field (allowed: ops, limit)"
        );
    }

    #[test]
    fn reports_wrong_types_empty_arrays_and_small_numbers() {
        assert_eq!(
            validate(&schema(), &json!("x")).unwrap_err().to_string(),
            "the arguments must be an object (was string)"
        );
        assert_eq!(
            validate(&schema(), &json!({"ops": []}))
                .unwrap_err()
                .to_string(),
            "`ops` must have at least 1 item (has 0)"
        );
        assert_eq!(
            validate(
                &schema(),
                &json!({"ops": [{"pat": "a", "out": "b"}], "limit": 0})
            )
            .unwrap_err()
            .to_string(),
            "`limit` must be at least 1 (was 0)"
        );
    }
}
