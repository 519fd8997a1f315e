//! Pull (merge) requests and issue comments through the forge's REST API, in the shape
//! of the automation's forge:
//!
//! - GitHub: `GET`/`POST /repos/OWNER/NAME/pulls`, `PATCH …/pulls/N`, `POST
//!   …/issues/N/comments`, `POST …/issues`, `GET …/issues/N`; `Authorization: Bearer`, `Accept: application/vnd.github+json`,
//!   `X-GitHub-Api-Version`.
//! - Gitea and Forgejo (`/api/v1`): the same paths, `PATCH` answered 201, the open pull
//!   requests listed and matched by head branch; `Authorization: token`.
//! - GitLab (`/api/v4`): `GET`/`POST /projects/OWNER%2FNAME/merge_requests`, `PUT
//!   …/merge_requests/IID`, `POST …/issues/IID/notes`; `PRIVATE-TOKEN`.
//!
//! What it guarantees: the token goes in the forge's authentication header to the API
//! URL of the automation's definition only, from the server, never to the sandbox; a
//! second firing for the same issue finds the open pull request of its branch and
//! updates it instead of opening another.

use serde_json::json;
use serde_json::Value;
use wright_config::automations::Forge;

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

/// Where, in which shape, and as whom to ask.
pub struct Api<'a> {
    pub forge: Forge,
    pub base: &'a str,
    /// `OWNER/NAME`.
    pub repository: &'a str,
    pub token: Option<&'a str>,
}

/// The fields of a pull request in a forge's answers.
struct Fields {
    number: &'static str,
    url: &'static str,
    head: &'static [&'static str],
}

impl Api<'_> {
    fn fields(&self) -> Fields {
        match self.forge {
            Forge::Gitlab => Fields {
                number: "iid",
                url: "web_url",
                head: &["source_branch"],
            },
            Forge::Github | Forge::Gitea => Fields {
                number: "number",
                url: "html_url",
                head: &["head", "ref"],
            },
        }
    }

    /// Where the repository's resources are.
    pub(super) fn repository_url(&self) -> String {
        match self.forge {
            Forge::Gitlab => format!(
                "{}/projects/{}",
                self.base,
                self.repository.replace('/', "%2F")
            ),
            Forge::Github | Forge::Gitea => format!("{}/repos/{}", self.base, self.repository),
        }
    }

    fn pulls_url(&self) -> String {
        match self.forge {
            Forge::Gitlab => format!("{}/merge_requests", self.repository_url()),
            Forge::Github | Forge::Gitea => format!("{}/pulls", self.repository_url()),
        }
    }

    pub(super) fn client(&self) -> Result<reqwest::Client, ForgeError> {
        reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .map_err(|err| ForgeError::Unreachable {
                url: self.base.to_string(),
                message: err.to_string(),
            })
    }

    pub(super) fn request(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        url: &str,
    ) -> reqwest::RequestBuilder {
        let request = client.request(method, url).header("User-Agent", "wright");
        let request = match self.forge {
            Forge::Github => request
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28"),
            Forge::Gitea | Forge::Gitlab => request.header("Accept", "application/json"),
        };
        match (self.token, self.forge) {
            (None, _) => request,
            (Some(token), Forge::Github) => request.bearer_auth(token),
            (Some(token), Forge::Gitea) => {
                request.header("Authorization", format!("token {token}"))
            }
            (Some(token), Forge::Gitlab) => request.header("PRIVATE-TOKEN", token),
        }
    }

    /// `GET url`, answered 200 with JSON.
    async fn get(&self, url: &str) -> Result<Value, ForgeError> {
        let client = self.client()?;
        self.send(
            self.request(&client, reqwest::Method::GET, url),
            "GET",
            url,
            &[200],
        )
        .await
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

    /// Comments on issue `number` (`on_pull`: pull request `number`, the same on GitHub
    /// and Gitea, a merge request's note on GitLab); the comment's address comes back
    /// (for GitLab, whose note has none, `issue_url#note_ID`).
    pub async fn comment(
        &self,
        number: u64,
        on_pull: bool,
        body: &str,
        issue_url: &str,
    ) -> Result<String, ForgeError> {
        let client = self.client()?;
        let url = match self.forge {
            Forge::Gitlab if on_pull => {
                format!("{}/merge_requests/{number}/notes", self.repository_url())
            }
            Forge::Gitlab => format!("{}/issues/{number}/notes", self.repository_url()),
            Forge::Github | Forge::Gitea => {
                format!("{}/issues/{number}/comments", self.repository_url())
            }
        };
        let answer = self
            .send(
                self.request(&client, reqwest::Method::POST, &url)
                    .json(&json!({"body": body})),
                "POST",
                &url,
                &[201],
            )
            .await?;
        let shape = || ForgeError::Shape {
            method: "POST",
            url: url.clone(),
        };
        match self.forge {
            Forge::Gitlab => answer["id"]
                .as_u64()
                .map(|id| format!("{issue_url}#note_{id}"))
                .ok_or_else(shape),
            Forge::Github | Forge::Gitea => answer["html_url"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(shape),
        }
    }

    /// Opens an issue (GitHub, Gitea: `POST …/issues` with `title`, `body`; GitLab:
    /// `POST …/issues` with `title`, `description`); its number and address come back.
    pub async fn open_issue(&self, title: &str, body: &str) -> Result<(u64, String), ForgeError> {
        let client = self.client()?;
        let url = format!("{}/issues", self.repository_url());
        let fields = match self.forge {
            Forge::Gitlab => json!({"title": title, "description": body}),
            Forge::Github | Forge::Gitea => json!({"title": title, "body": body}),
        };
        let answer = self
            .send(
                self.request(&client, reqwest::Method::POST, &url)
                    .json(&fields),
                "POST",
                &url,
                &[201],
            )
            .await?;
        let (number, address) = match self.forge {
            Forge::Gitlab => (answer["iid"].as_u64(), answer["web_url"].as_str()),
            Forge::Github | Forge::Gitea => {
                (answer["number"].as_u64(), answer["html_url"].as_str())
            }
        };
        match (number, address) {
            (Some(number), Some(address)) => Ok((number, address.to_string())),
            _ => Err(ForgeError::Shape {
                method: "POST",
                url,
            }),
        }
    }

    /// Whether issue `number` is open (GitHub, Gitea: `state` `open`; GitLab: `opened`),
    /// and its address.
    pub async fn issue_open(&self, number: u64) -> Result<(bool, String), ForgeError> {
        let url = format!("{}/issues/{number}", self.repository_url());
        let answer = self.get(&url).await?;
        let (state, address) = match self.forge {
            Forge::Gitlab => (answer["state"].as_str(), answer["web_url"].as_str()),
            Forge::Github | Forge::Gitea => (answer["state"].as_str(), answer["html_url"].as_str()),
        };
        match (state, address) {
            (Some(state), Some(address)) => {
                Ok((matches!(state, "open" | "opened"), address.to_string()))
            }
            _ => Err(ForgeError::Shape { method: "GET", url }),
        }
    }

    /// Pull request `number`'s head branch, and whether it is a branch of this repository
    /// (not a fork's): GitHub, Gitea `GET …/pulls/N` (`head.ref`, `head.repo.full_name`);
    /// GitLab `GET …/merge_requests/IID` (`source_branch`, `source_project_id` against
    /// `target_project_id`).
    pub async fn pull_head(&self, number: u64) -> Result<(String, bool), ForgeError> {
        let url = format!("{}/{number}", self.pulls_url());
        let answer = self.get(&url).await?;
        let (head, ours) = match self.forge {
            Forge::Gitlab => (
                answer["source_branch"].as_str(),
                answer["source_project_id"].is_u64()
                    && answer["source_project_id"] == answer["target_project_id"],
            ),
            Forge::Github | Forge::Gitea => (
                answer["head"]["ref"].as_str(),
                answer["head"]["repo"]["full_name"].as_str() == Some(self.repository),
            ),
        };
        match head {
            Some(head) => Ok((head.to_string(), ours)),
            None => Err(ForgeError::Shape { method: "GET", url }),
        }
    }

    /// The open pull request of `head`, if there is one.
    async fn open_of(
        &self,
        client: &reqwest::Client,
        head: &str,
    ) -> Result<Option<u64>, ForgeError> {
        let pulls = self.pulls_url();
        let owner = self.repository.split('/').next().unwrap_or_default();
        let query: Vec<(&str, String)> = match self.forge {
            Forge::Github => vec![
                ("head", format!("{owner}:{head}")),
                ("state", "open".into()),
            ],
            // Gitea's list does not filter by head: the open ones are read and matched.
            Forge::Gitea => vec![("state", "open".into()), ("limit", "50".into())],
            Forge::Gitlab => vec![("source_branch", head.into()), ("state", "opened".into())],
        };
        let listed = self
            .send(
                self.request(client, reqwest::Method::GET, &pulls)
                    .query(&query),
                "GET",
                &pulls,
                &[200],
            )
            .await?;
        let fields = self.fields();
        let list = listed.as_array().ok_or(ForgeError::Shape {
            method: "GET",
            url: pulls.clone(),
        })?;
        Ok(list
            .iter()
            .find(|pull| {
                let mut at = *pull;
                for key in fields.head {
                    at = &at[*key];
                }
                at.as_str() == Some(head)
            })
            .and_then(|pull| pull[fields.number].as_u64()))
    }

    /// Opens a pull request of `head` into `base`, or updates the open one of `head`.
    pub async fn open_or_update(
        &self,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<PullRequest, ForgeError> {
        let client = self.client()?;
        let pulls = self.pulls_url();
        let existing = self.open_of(&client, head).await?;
        let (answer, updated, method) = match existing {
            Some(number) => {
                let url = format!("{pulls}/{number}");
                let (request, wanted): (_, &[u16]) = match self.forge {
                    Forge::Github => (
                        self.request(&client, reqwest::Method::PATCH, &url)
                            .json(&json!({"title": title, "body": body})),
                        &[200],
                    ),
                    // Gitea documents 201 for an edit.
                    Forge::Gitea => (
                        self.request(&client, reqwest::Method::PATCH, &url)
                            .json(&json!({"title": title, "body": body})),
                        &[200, 201],
                    ),
                    Forge::Gitlab => (
                        self.request(&client, reqwest::Method::PUT, &url)
                            .json(&json!({"title": title, "description": body})),
                        &[200],
                    ),
                };
                let method = match self.forge {
                    Forge::Gitlab => "PUT",
                    Forge::Github | Forge::Gitea => "PATCH",
                };
                (
                    self.send(request, method, &url, wanted).await?,
                    true,
                    method,
                )
            }
            None => {
                let fields = match self.forge {
                    Forge::Gitlab => json!({"source_branch": head, "target_branch": base,
                                            "title": title, "description": body}),
                    Forge::Github | Forge::Gitea => {
                        json!({"title": title, "head": head, "base": base, "body": body})
                    }
                };
                let answer = self
                    .send(
                        self.request(&client, reqwest::Method::POST, &pulls)
                            .json(&fields),
                        "POST",
                        &pulls,
                        &[201],
                    )
                    .await?;
                (answer, false, "POST")
            }
        };
        let fields = self.fields();
        let number = answer[fields.number].as_u64().ok_or(ForgeError::Shape {
            method,
            url: pulls.clone(),
        })?;
        let url = answer[fields.url].as_str().unwrap_or_default().to_string();
        Ok(PullRequest {
            number,
            url,
            updated,
        })
    }
}
