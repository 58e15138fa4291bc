//! The published JSON Schemas (`schema/` in the repository): one per command's `--json`
//! output and one per event, generated from the Rust types that print them.
//!
//! `tests/cmd/schema.rs` compares every file of `schema/` with [`documents`] and validates
//! the real output of every command against its schema; `GIT_TASK_BLESS=1 cargo test schema`
//! writes the files again after a change.

use schemars::generate::SchemaSettings;
use schemars::Schema;
use schemars::SchemaGenerator;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The dialect of every published schema.
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The settings every schema is generated with: JSON Schema 2020-12, describing what is
/// written (a field serde skips when empty is not required).
fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
}

/// One schema document: `shapes` (a `$ref` each, `anyOf` when there are several), with the
/// definitions they use.
fn document(title: &str, shapes: Vec<Schema>, mut generator: SchemaGenerator) -> Value {
    let defs: serde_json::Map<String, Value> = generator.take_definitions(true);
    let shapes: Vec<Value> = shapes.into_iter().map(Schema::to_value).collect();
    let mut doc = match <[Value; 1]>::try_from(shapes) {
        Ok([Value::Object(one)]) => one,
        Ok([other]) => json!({ "allOf": [other] })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        Err(shapes) => json!({ "anyOf": shapes })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    let mut defs = defs;
    close(&mut doc, &mut defs);
    doc.insert("$schema".into(), DIALECT.into());
    doc.insert("title".into(), title.into());
    if !defs.is_empty() {
        doc.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(doc)
}

/// Forbids properties a schema does not name (`unevaluatedProperties: false`), so a field the
/// types do not declare fails validation, on every definition that describes a whole object:
/// not on those only used as a part of another (a `$ref` beside other keywords, or in `allOf`:
/// there the whole closes it), which could not see their partner's properties.
fn close(root: &mut serde_json::Map<String, Value>, defs: &mut serde_json::Map<String, Value>) {
    fn parts(value: &Value, composed: bool, out: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                let with_others = map.keys().any(|k| {
                    !matches!(
                        k.as_str(),
                        "$ref" | "$defs" | "$schema" | "title" | "description"
                    )
                });
                if let Some(Value::String(target)) = map.get("$ref") {
                    if composed || with_others {
                        out.insert(target.trim_start_matches("#/$defs/").to_owned());
                    }
                }
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("allOf", Value::Array(items)) => {
                            items.iter().for_each(|i| parts(i, true, out))
                        }
                        _ => parts(v, false, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| parts(i, false, out)),
            _ => {}
        }
    }
    let mut composed = BTreeSet::new();
    parts(&Value::Object(root.clone()), false, &mut composed);
    parts(&Value::Object(defs.clone()), false, &mut composed);
    let object_like = |map: &serde_json::Map<String, Value>| {
        map.contains_key("properties") || map.get("type") == Some(&json!("object"))
    };
    for (name, def) in defs.iter_mut() {
        if let Value::Object(map) = def {
            if !composed.contains(name)
                && object_like(map)
                && !map.contains_key("additionalProperties")
            {
                map.insert("unevaluatedProperties".into(), false.into());
            }
        }
    }
    if root.contains_key("allOf") {
        root.insert("unevaluatedProperties".into(), false.into());
    }
}

/// An event's schema with the `state` its record commit stores beside it: the task's state
/// after the event (`task.toml` as JSON), which `log --json` leaves out of the details.
fn with_state(event: Schema, generator: &mut SchemaGenerator) -> Schema {
    let state = generator
        .subschema_for::<crate::task::TaskState>()
        .to_value();
    let mut value = event.to_value();
    let part = json!({
        "type": "object",
        "properties": {
            "state": {
                "description": "In the record commit's message only (not in `log --json`): the task's state after the event, as its `task.toml`.",
                "allOf": [state],
            },
        },
    });
    match value.get_mut("allOf").and_then(Value::as_array_mut) {
        Some(parts) => parts.push(part),
        None => value = json!({ "allOf": [value, part] }),
    }
    Schema::try_from(value).unwrap_or_else(|_| Schema::default())
}

/// Every published schema: its path under `schema/` and its content.
pub fn documents() -> Vec<(String, Value)> {
    let mut docs = Vec::new();
    for (name, title, schemas) in super::JSON_SCHEMAS {
        let mut generator = generator();
        let shapes = schemas(&mut generator);
        docs.push((format!("{name}.json"), document(title, shapes, generator)));
    }
    for name in crate::record::event::TYPED {
        let mut generator = generator();
        if let Some(shape) = crate::record::event::schema(name, &mut generator) {
            let title = format!("the '{name}' event, as the `details` of `git task log --json`, and as stored in its record commit (with `state`)");
            let shape = with_state(shape, &mut generator);
            docs.push((
                format!("events/{name}.json"),
                document(&title, vec![shape], generator),
            ));
        }
    }
    docs
}
