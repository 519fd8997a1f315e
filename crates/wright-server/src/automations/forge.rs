//! Pull requests through the forge's REST API (GitHub's shape: `GET`/`POST`/`PATCH
//! /repos/OWNER/NAME/pulls`), and the text a pull request says, cleaned.
//!
//! What it guarantees: the token goes in the `Authorization` header to the API URL of
//! the automation's definition only, from the server, never to the sandbox; a second
//! firing for the same issue finds the open pull request of its branch and updates it
//! instead of opening another; the agent's summary can neither notify anyone (`@name`)
//! nor close an issue (GitHub's closing keywords before `#N`, `OWNER/NAME#N` or an
//! issue's URL) — it did not earn either.

use serde_json::json;
use serde_json::Value;

/// Why the forge's API did not do it.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("the forge's API at {url} cannot be reached: {message}")]
    Unreachable { url: String, message: String },
    #[error("the forge's API answered {status} to {method} {url}: {said}")]
    Refused {
        method: &'static str,
        url: String,
        status: u16,
        said: String,
    },
    #[error("the forge's API answered {method} {url} with a body not of its documented shape")]
    Shape { method: &'static str, url: String },
}

/// A pull request opened or updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    pub url: String,
    /// An open one of the branch existed, and was updated.
    pub updated: bool,
}

/// Where and as whom to ask.
pub struct Api<'a> {
    pub base: &'a str,
    /// `OWNER/NAME`.
    pub repository: &'a str,
    pub token: Option<&'a str>,
}

impl Api<'_> {
    fn request(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        url: &str,
    ) -> reqwest::RequestBuilder {
        let request = client
            .request(method, url)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .header("User-Agent", "wright");
        match self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        method: &'static str,
        url: &str,
        wanted: &[u16],
    ) -> Result<Value, ForgeError> {
        let response = request
            .send()
            .await
            .map_err(|err| ForgeError::Unreachable {
                url: url.to_string(),
                message: err.to_string(),
            })?;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        if !wanted.contains(&status) {
            return Err(ForgeError::Refused {
                method,
                url: url.to_string(),
                status,
                said: text.chars().take(300).collect(),
            });
        }
        serde_json::from_str(&text).map_err(|_| ForgeError::Shape {
            method,
            url: url.to_string(),
        })
    }

    /// Opens a pull request of `head` into `base`, or updates the open one of `head`.
    pub async fn open_or_update(
        &self,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<PullRequest, ForgeError> {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .map_err(|err| ForgeError::Unreachable {
                url: self.base.to_string(),
                message: err.to_string(),
            })?;
        let pulls = format!("{}/repos/{}/pulls", self.base, self.repository);
        let owner = self.repository.split('/').next().unwrap_or_default();
        let listed = self
            .send(
                self.request(&client, reqwest::Method::GET, &pulls).query(&[
                    ("head", format!("{owner}:{head}")),
                    ("state", "open".into()),
                ]),
                "GET",
                &pulls,
                &[200],
            )
            .await?;
        let shape = |method| ForgeError::Shape {
            method,
            url: pulls.clone(),
        };
        let existing = listed
            .as_array()
            .ok_or_else(|| shape("GET"))?
            .first()
            .and_then(|pull| pull["number"].as_u64());
        let (answer, updated, method) = match existing {
            Some(number) => {
                let url = format!("{pulls}/{number}");
                let answer = self
                    .send(
                        self.request(&client, reqwest::Method::PATCH, &url)
                            .json(&json!({"title": title, "body": body})),
                        "PATCH",
                        &url,
                        &[200],
                    )
                    .await?;
                (answer, true, "PATCH")
            }
            None => {
                let answer = self
                    .send(
                        self.request(&client, reqwest::Method::POST, &pulls).json(
                            &json!({"title": title, "head": head, "base": base, "body": body}),
                        ),
                        "POST",
                        &pulls,
                        &[201],
                    )
                    .await?;
                (answer, false, "POST")
            }
        };
        let number = answer["number"].as_u64().ok_or_else(|| shape(method))?;
        let url = answer["html_url"].as_str().unwrap_or_default().to_string();
        Ok(PullRequest {
            number,
            url,
            updated,
        })
    }
}

const CLOSING: &[&str] = &[
    "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved",
];

/// Whether `word` names an issue the way a closing keyword takes it.
fn names_an_issue(word: &str) -> bool {
    let word = word.trim_end_matches(['.', ',', ';', ')']);
    let number_after_hash = |w: &str| {
        w.rsplit_once('#')
            .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    number_after_hash(word)
        || (word.starts_with("http") && word.contains("/issues/"))
        || (word.starts_with("http") && word.contains("/pull/"))
}

/// The agent's summary, unable to notify anyone or close an issue.
pub fn clean(summary: &str) -> String {
    // `@name` → `@\u{200b}name`: shown the same, notifies nobody.
    let mut out = String::with_capacity(summary.len());
    let mut previous: Option<char> = None;
    let mut chars = summary.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        let starts_mention = c == '@'
            && !previous.is_some_and(|p| p.is_alphanumeric())
            && chars.peek().is_some_and(|n| n.is_alphanumeric());
        if starts_mention {
            out.push('\u{200b}');
        }
        previous = Some(c);
    }
    // A closing keyword followed by an issue's reference: the keyword is kept, the
    // reference is no longer one (`#12` → `# 12`, a URL in backquotes).
    let words: Vec<&str> = out.split_inclusive(char::is_whitespace).collect();
    let mut cleaned = String::with_capacity(out.len());
    let mut after_keyword = false;
    for word in words {
        let bare = word.trim().trim_end_matches(':').to_lowercase();
        if after_keyword && names_an_issue(word.trim()) {
            let space = &word[word.trim_end().len()..];
            let reference = word.trim();
            if reference.starts_with("http") {
                cleaned.push_str(&format!("`{reference}`{space}"));
            } else {
                cleaned.push_str(&format!("{}{space}", reference.replace('#', "# ")));
            }
            after_keyword = false;
            continue;
        }
        after_keyword = CLOSING.contains(&bare.as_str());
        cleaned.push_str(word);
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_and_closing_keywords_are_defused() {
        assert_eq!(clean("thanks @octocat!"), "thanks @\u{200b}octocat!");
        assert_eq!(clean("mail a@b.c"), "mail a@b.c");
        assert_eq!(
            clean("Fixes #12 and closes: o/r#3."),
            "Fixes # 12 and closes: o/r# 3."
        );
        assert_eq!(
            clean("resolves https://github.com/o/r/issues/4 now"),
            "resolves `https://github.com/o/r/issues/4` now"
        );
        assert_eq!(clean("see #12, it was fixed"), "see #12, it was fixed");
    }
}
