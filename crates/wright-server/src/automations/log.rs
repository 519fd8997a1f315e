//! The failing job's log of a check run, which no webhook payload carries: fetched on
//! the host through the forge's API, with the token from the secrets store —
//!
//! - GitHub: `GET /repos/OWNER/NAME/actions/jobs/JOB/logs` (for GitHub Actions the
//!   check run's id is its job's), answered `302` with a short-lived download URL, which
//!   is fetched without the token (it carries its own signature, and is another host);
//! - GitLab: `GET /projects/OWNER%2FNAME/jobs/JOB/trace`, answered with the log;
//! - Gitea and Forgejo: no check run event, so no log.
//!
//! What it guarantees: at most `LOG_LIMIT` bytes of it are kept, its end (where a
//! failure is said); the whole body is read within `LOG_DEADLINE`, in pieces, never held
//! whole; the token goes to the API URL of the automation's definition only; what comes
//! back is only text for the task (wrapped there as untrusted).

use super::forge::Api;
use super::forge::ForgeError;
use futures_util::StreamExt;
use wright_config::automations::Forge;

/// How much of the log's end the task gets.
pub const LOG_LIMIT: usize = 64 * 1024;

/// How long fetching a log may take, the redirect and the download included.
const LOG_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// How many redirects a download may take (GitHub answers one).
const MAX_REDIRECTS: usize = 3;

impl Api<'_> {
    /// The end of job `job`'s log.
    pub async fn job_log(&self, job: u64) -> Result<String, ForgeError> {
        let url = match self.forge {
            Forge::Github | Forge::Gitea => {
                format!("{}/actions/jobs/{job}/logs", self.repository_url())
            }
            Forge::Gitlab => format!("{}/jobs/{job}/trace", self.repository_url()),
        };
        let fetched = tokio::time::timeout(LOG_DEADLINE, self.follow(&url)).await;
        fetched.unwrap_or_else(|_| {
            Err(ForgeError::Unreachable {
                url: url.clone(),
                message: format!("no whole log within {} s", LOG_DEADLINE.as_secs()),
            })
        })
    }

    async fn follow(&self, url: &str) -> Result<String, ForgeError> {
        let unreachable = |url: &str, err: reqwest::Error| ForgeError::Unreachable {
            url: url.to_string(),
            message: err.to_string(),
        };
        // Redirects are followed here, so that the token never goes past the API.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(LOG_DEADLINE)
            .build()
            .map_err(|err| unreachable(url, err))?;
        let mut response = self
            .request(&client, reqwest::Method::GET, url)
            .send()
            .await
            .map_err(|err| unreachable(url, err))?;
        let mut at = url.to_string();
        for _ in 0..MAX_REDIRECTS {
            if !response.status().is_redirection() {
                break;
            }
            let Some(next) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|location| response.url().join(location).ok())
            else {
                return Err(ForgeError::Shape {
                    method: "GET",
                    url: at,
                });
            };
            if !matches!(next.scheme(), "https" | "http") {
                return Err(ForgeError::Shape {
                    method: "GET",
                    url: at,
                });
            }
            at = next.to_string();
            response = client
                .get(next)
                .header("User-Agent", "wright")
                .send()
                .await
                .map_err(|err| unreachable(&at, err))?;
        }
        let status = response.status().as_u16();
        if status != 200 {
            let said = response.text().await.unwrap_or_default();
            return Err(ForgeError::Refused {
                method: "GET",
                url: at,
                status,
                said: said.chars().take(300).collect(),
            });
        }
        let mut kept: Vec<u8> = Vec::new();
        let mut cut = false;
        let mut body = response.bytes_stream();
        while let Some(piece) = body.next().await {
            let piece = piece.map_err(|err| unreachable(&at, err))?;
            kept.extend_from_slice(&piece);
            if kept.len() > 2 * LOG_LIMIT {
                kept.drain(..kept.len() - LOG_LIMIT);
                cut = true;
            }
        }
        if kept.len() > LOG_LIMIT {
            kept.drain(..kept.len() - LOG_LIMIT);
            cut = true;
        }
        let text = String::from_utf8_lossy(&kept).into_owned();
        Ok(match cut {
            true => format!(
                "[… the log's start is left out: its last {LOG_LIMIT} bytes follow]\n{text}"
            ),
            false => text,
        })
    }
}
