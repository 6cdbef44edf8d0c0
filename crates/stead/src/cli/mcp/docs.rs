//! The documentation an agent can read as MCP resources: a job's fields, the scheduling
//! syntax (cron, zones, durations), an example job file and how `stead mcp` itself works.
//!
//! The fields page is rendered from the JSON schema of the job spec the `job_put` tool
//! takes, whose descriptions are the spec's own doc comments: it cannot drift from what
//! the server accepts. The others are the repository's documents, built in.

use std::fmt::Write as _;

use rmcp::model::{ReadResourceResult, Resource, ResourceContents};
use serde_json::{Map, Value};
use stead_protocol::JobSpec;

/// One resource: where it is, what it is, and how to produce it.
struct Doc {
    uri: &'static str,
    name: &'static str,
    description: &'static str,
    mime: &'static str,
    text: fn() -> String,
}

const DOCS: &[Doc] = &[
    Doc {
        uri: "stead://docs/job-fields",
        name: "job-fields",
        description: "Every field of a job (a [[job]] table of an apply file, the `job` of \
                      job_put): type, default and meaning",
        mime: "text/markdown",
        text: job_fields,
    },
    Doc {
        uri: "stead://docs/scheduling",
        name: "scheduling",
        description: "Cron expressions, time zones, daylight saving time, interval \
                      schedules, durations and pauses",
        mime: "text/markdown",
        text: || include_str!("../../../../../docs/scheduling.md").to_string(),
    },
    Doc {
        uri: "stead://examples/jobs.toml",
        name: "jobs.toml",
        description: "An example apply file: jobs, services, queues and notifiers",
        mime: "application/toml",
        text: || include_str!("../../../../../examples/jobs.toml").to_string(),
    },
    Doc {
        uri: "stead://docs/mcp",
        name: "mcp",
        description: "The tools of this server, what they answer, and how restarts go \
                      through the gate",
        mime: "text/markdown",
        text: || include_str!("../../../../../docs/mcp.md").to_string(),
    },
];

pub fn list() -> Vec<Resource> {
    DOCS.iter()
        .map(|d| {
            Resource::new(d.uri, d.name)
                .with_description(d.description)
                .with_mime_type(d.mime)
        })
        .collect()
}

pub fn read(uri: &str) -> Option<ReadResourceResult> {
    let doc = DOCS.iter().find(|d| d.uri == uri)?;
    Some(ReadResourceResult::new(vec![
        ResourceContents::TextResourceContents {
            uri: doc.uri.to_string(),
            mime_type: Some(doc.mime.to_string()),
            text: (doc.text)(),
            meta: None,
        },
    ]))
}

/// The job fields page: a table of the spec's properties, required ones first, then the
/// values of each field that takes one of a few words. (The schema carries no defaults:
/// schemars leaves out a default its field would not serialize, so each field's
/// description says its own.)
fn job_fields() -> String {
    let schema = schemars::schema_for!(JobSpec).to_value();
    let empty = Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    let defs = schema["$defs"].as_object().unwrap_or(&empty);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = props.keys().collect();
    names.sort_by_key(|n| (!required.contains(&n.as_str()), n.as_str()));

    let mut out = String::from(
        "# Job fields\n\nThe fields of a job: a `[[job]]` table of an apply file \
         (`stead apply`), and the `job` argument of the `job_put` tool, as JSON. Only \
         `name` and `command` are required; a job with neither `cron` nor `every` runs \
         only when asked (`run_now`). Durations are strings such as `\"90s\"`, `\"15m\"`, \
         `\"1h30m\"` (resource stead://docs/scheduling).\n\n\
         Every field but those two may be left out; what that means is in its \
         description.\n\n\
         | field | type | meaning |\n| --- | --- | --- |\n",
    );
    for name in names {
        let prop = &props[name.as_str()];
        let required = if required.contains(&name.as_str()) {
            ", required"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| `{name}` | {}{required} | {} |",
            type_of(prop, defs),
            one_line(prop)
        );
    }
    for (name, def) in defs {
        let _ = writeln!(out, "\n## {name}\n");
        for value in def["oneOf"].as_array().into_iter().flatten() {
            let word = value.get("const").map_or(String::new(), Value::to_string);
            let _ = writeln!(out, "- `{word}`: {}", one_line(value));
        }
    }
    out
}

/// A property's type in words: `string`, `list of string`, one of a few values...
fn type_of(prop: &Value, defs: &Map<String, Value>) -> String {
    if let Some(name) = prop["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        let words: Vec<String> = defs.get(name).map_or(Vec::new(), |def| {
            def["oneOf"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.get("const").map(|c| format!("`{c}`")))
                .collect()
        });
        return if words.is_empty() {
            name.to_string()
        } else {
            format!("one of {} ({name})", words.join(", "))
        };
    }
    let kind = match &prop["type"] {
        Value::String(t) => t.clone(),
        // `["string", "null"]`: an optional field; absent reads as the default.
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_string(),
    };
    match kind.as_str() {
        "array" => format!("list of {}", type_of(&prop["items"], defs)),
        "object" => format!("table of {}", type_of(&prop["additionalProperties"], defs)),
        _ => kind,
    }
}

fn one_line(schema: &Value) -> String {
    schema["description"]
        .as_str()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_fields_page_has_a_row_for_every_field_of_a_job() {
        let page = job_fields();
        for field in [
            "name",
            "command",
            "cron",
            "tz",
            "every",
            "concurrency",
            "retries",
        ] {
            assert!(page.contains(&format!("| `{field}` |")), "{field}:\n{page}");
        }
        assert!(page.contains("| `name` | string, required |"), "{page}");
        assert!(
            page.contains("| `cron` | string | A five-field cron"),
            "{page}"
        );
        assert!(
            page.contains("one of `\"allow\"`, `\"forbid\"`, `\"replace\"`"),
            "{page}"
        );
        assert!(page.contains("- `\"once\"`: One run, for the latest missed fire"));
    }

    #[test]
    fn every_resource_listed_can_be_read() {
        for resource in list() {
            let read = read(&resource.uri).expect("listed, so readable");
            match &read.contents[..] {
                [ResourceContents::TextResourceContents { text, uri, .. }] => {
                    assert_eq!(uri, &resource.uri);
                    assert!(text.len() > 200, "{uri} is nearly empty");
                }
                other => panic!("{}: {other:?}", resource.uri),
            }
        }
        assert!(read("stead://docs/nothing").is_none());
    }
}
