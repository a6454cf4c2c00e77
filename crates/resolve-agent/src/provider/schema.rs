//! Tool schemas as providers receive them: `$schema` stripped (some providers reject a schema
//! that carries it), and OpenAI's `strict` flag only where OpenAI's strict rules accept the
//! schema.
//!
//! Owned here: those two schema rules. Not owned: the rest of the wire formats (`openai`,
//! `anthropic`).

use serde_json::Value;

/// The schema to send: the spec's schema without a top-level `$schema` key.
pub(super) fn wire_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    schema
}

/// Whether OpenAI strict mode accepts `schema`: every object lists all its properties as
/// required and sets `additionalProperties: false`, recursively. An optional field or an open
/// object (like `resolve`'s `extra`) makes it unacceptable.
pub fn openai_strict_accepts(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    let is_object_type = match object.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => object.contains_key("properties"),
    };
    if is_object_type {
        if object.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let properties = match object.get("properties") {
            Some(Value::Object(properties)) => properties.clone(),
            None => serde_json::Map::new(),
            Some(_) => return false,
        };
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !properties
            .keys()
            .all(|key| required.contains(&key.as_str()))
        {
            return false;
        }
        if !properties.values().all(openai_strict_accepts) {
            return false;
        }
    }
    if let Some(items) = object.get("items")
        && !openai_strict_accepts(items)
    {
        return false;
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = object.get(key)
            && !branches.iter().all(openai_strict_accepts)
        {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolve_schema_is_not_strict_representable() {
        assert!(!openai_strict_accepts(
            &resolve_core::resolve_tool_spec().input_schema
        ));
    }

    #[test]
    fn closed_fully_required_schema_is_strict_representable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "ops": {"type": "array", "items": {"type": "object",
                    "properties": {"pat": {"type": "string"}, "out": {"type": "string"}},
                    "required": ["pat", "out"], "additionalProperties": false}},
                "lang": {"type": "string"}
            },
            "required": ["ops", "lang"],
            "additionalProperties": false
        });
        assert!(openai_strict_accepts(&schema));
    }

    #[test]
    fn dollar_schema_is_stripped() {
        let schema =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"});
        assert_eq!(wire_schema(&schema), json!({"type": "object"}));
    }
}
