//! A small JSON Schema checker for tool arguments.
//!
//! It understands the subset our tool schemas and the generated schemas of result facts use
//! (`type`, also as a list, `enum`, `const`, `anyOf`, `oneOf`, `properties`, `required`,
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
    match schema.get("type") {
        Some(Value::String(expected)) if !has_type(value, expected) => {
            return Err(violation(
                path,
                format!(
                    "must be {} {expected} (was {})",
                    article(expected),
                    type_name(value)
                ),
            ));
        }
        Some(Value::Array(expected))
            if !expected
                .iter()
                .filter_map(Value::as_str)
                .any(|expected| has_type(value, expected)) =>
        {
            let names: Vec<&str> = expected.iter().filter_map(Value::as_str).collect();
            return Err(violation(
                path,
                format!(
                    "must be one of the types {} (was {})",
                    names.join(", "),
                    type_name(value)
                ),
            ));
        }
        Some(_) | None => {}
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        return Err(violation(path, format!("must be {expected} (was {value})")));
    }
    check_alternatives(schema, value, path)?;
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

/// `anyOf`: at least one of its schemas accepts `value`; `oneOf`: exactly one does.
fn check_alternatives(
    schema: &serde_json::Map<String, Value>,
    value: &Value,
    path: &mut String,
) -> Result<(), SchemaViolation> {
    for (keyword, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        let Some(alternatives) = schema.get(keyword).and_then(Value::as_array) else {
            continue;
        };
        let mut first_violation = None;
        let mut accepted = 0;
        for alternative in alternatives {
            match check(alternative, value, path) {
                Ok(()) => accepted += 1,
                Err(violation) => {
                    first_violation.get_or_insert(violation);
                }
            }
        }
        match (accepted, first_violation) {
            (0, Some(violation)) => return Err(violation),
            (2.., _) if exactly_one => {
                return Err(violation(
                    path,
                    format!("matches {accepted} of the choices of `oneOf` (must match one)"),
                ));
            }
            (_, _) => {}
        }
    }
    Ok(())
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

    #[test]
    fn understands_type_lists_const_and_alternatives() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": ["string", "null"]},
                "who": {"anyOf": [{"oneOf": [{"type": "string", "const": "model"},
                    {"type": "string", "const": "person"}]}, {"type": "null"}]},
                "two": {"oneOf": [{"type": "integer"}, {"type": "number"}]}
            }
        });
        for accepted in [
            json!({"id": "a", "who": "model"}),
            json!({"id": null, "who": null}),
        ] {
            assert_eq!(validate(&schema, &accepted), Ok(()), "{accepted}");
        }
        assert_eq!(
            validate(&schema, &json!({"id": 1}))
                .unwrap_err()
                .to_string(),
            "`id` must be one of the types string, null (was integer)"
        );
        assert_eq!(
            validate(&schema, &json!({"who": "robot"}))
                .unwrap_err()
                .to_string(),
            "`who` must be \"model\" (was \"robot\")"
        );
        assert_eq!(
            validate(&schema, &json!({"two": 2}))
                .unwrap_err()
                .to_string(),
            "`two` matches 2 of the choices of `oneOf` (must match one)"
        );
    }
}
