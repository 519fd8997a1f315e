//! An MCP tool's result as the text of an observation, read from its wire form (the
//! spec's JSON, so a content kind this SDK's types do not know still reads): text as it
//! is, an image or audio described (a text-only model cannot see it, and its base64
//! would fill the window), an embedded resource's text with its URI, a blob or a link
//! named. Bounded: a server cannot flood the conversation.

use serde_json::Value;

/// The most characters of a result an observation keeps.
pub const MAX_CHARS: usize = 30_000;

/// The observation's text for a result (`result` as the server sent it), and whether the
/// server said the call failed.
pub fn result_text(result: &Value) -> (String, bool) {
    let is_error = result["isError"].as_bool().unwrap_or(false);
    let mut parts: Vec<String> = result["content"]
        .as_array()
        .map(|blocks| blocks.iter().map(block).collect())
        .unwrap_or_default();
    if parts.is_empty() {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            parts.push(structured.to_string());
        }
    }
    let text = if parts.is_empty() {
        "(the tool returned nothing)".to_string()
    } else {
        parts.join("\n")
    };
    (bounded(text), is_error)
}

fn block(block: &Value) -> String {
    let kind = block["type"].as_str().unwrap_or("");
    let mime = |v: &Value| v["mimeType"].as_str().unwrap_or("unknown type").to_string();
    let size = |data: &Value| data.as_str().map_or(0, |d| d.len() / 4 * 3);
    match kind {
        "text" => block["text"].as_str().unwrap_or("").to_string(),
        "image" => format!(
            "[an image, {}, about {} bytes: not shown]",
            mime(block),
            size(&block["data"])
        ),
        "audio" => format!(
            "[audio, {}, about {} bytes: not played]",
            mime(block),
            size(&block["data"])
        ),
        "resource" => {
            let resource = &block["resource"];
            let uri = resource["uri"].as_str().unwrap_or("?");
            match resource["text"].as_str() {
                Some(text) => format!("[resource {uri}:]\n{text}"),
                None => format!(
                    "[resource {uri}: {}, about {} bytes of binary content, not shown]",
                    mime(resource),
                    size(&resource["blob"])
                ),
            }
        }
        "resource_link" => {
            let uri = block["uri"].as_str().unwrap_or("?");
            match block["description"].as_str().or(block["name"].as_str()) {
                Some(about) => format!("[a link to resource {uri}: {about}]"),
                None => format!("[a link to resource {uri}]"),
            }
        }
        other => format!("[content of a kind wright does not read: {other:?}]"),
    }
}

fn bounded(text: String) -> String {
    if text.chars().count() <= MAX_CHARS {
        return text;
    }
    let kept: String = text.chars().take(MAX_CHARS).collect();
    format!("{kept}\n[… cut: the result was longer than {MAX_CHARS} characters]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_of_content_reads() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "in a"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAAAA", "mimeType": "application/octet-stream"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "hologram"}
        ], "isError": true});
        let (text, is_error) = result_text(&result);
        assert!(is_error);
        assert_eq!(
            text,
            "hello\n[an image, image/png, about 3 bytes: not shown]\n[resource file:///a.txt:]\nin a\n[resource file:///b.bin: application/octet-stream, about 6 bytes of binary content, not shown]\n[a link to resource file:///c: c]\n[content of a kind wright does not read: \"hologram\"]"
        );
    }

    #[test]
    fn structured_only_empty_and_long() {
        assert_eq!(
            result_text(&json!({"content": [], "structuredContent": {"n": 1}})),
            ("{\"n\":1}".to_string(), false)
        );
        assert_eq!(result_text(&json!({})).0, "(the tool returned nothing)");
        let long = "x".repeat(MAX_CHARS + 5);
        let (text, _) = result_text(&json!({"content": [{"type": "text", "text": long}]}));
        assert!(
            text.ends_with("longer than 30000 characters]"),
            "{}",
            &text[text.len() - 60..]
        );
    }
}
