//! The hosts the agent's side may reach (`--allow-host HOST[:PORT]`, repeatable, globs such
//! as `*.pypi.org`), and the decision for one host and port. A rule without a port allows
//! 80 and 443 only, so an allowed name is not a way to every service on that machine.
//! Names compare case-insensitively; a glob matches whole names only (`*.pypi.org`
//! matches `files.pypi.org`, not `pypi.org`). What a grant allows beyond the name is
//! `Grant::exact`: only a rule naming the host exactly may lead to a loopback, link-local
//! or private address (see `address`).

use globset::GlobBuilder;
use globset::GlobMatcher;

/// Ports a rule without one allows.
const WEB_PORTS: [u16; 2] = [80, 443];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule:?} is not a host to allow ({why}); write HOST or HOST:PORT, e.g. pypi.org, *.pythonhosted.org or localhost:8080")]
pub struct BadRule {
    pub rule: String,
    pub why: &'static str,
}

#[derive(Debug, Clone)]
enum Pattern {
    Exact(String),
    Glob(GlobMatcher),
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: Pattern,
    /// `None`: 80 and 443.
    port: Option<u16>,
}

/// What the agent may reach: every public host (`--network`, for `fetch`), or the
/// allowed ones.
#[derive(Debug, Clone)]
pub struct AllowList {
    /// `None`: every public host.
    rules: Option<Vec<Rule>>,
}

/// An allowed connection: whether the rule named the host exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub exact: bool,
}

impl AllowList {
    /// Parses the rules as the user wrote them.
    pub fn parse<S: AsRef<str>>(rules: &[S]) -> Result<Self, BadRule> {
        rules
            .iter()
            .map(|rule| parse_rule(rule.as_ref()))
            .collect::<Result<Vec<_>, _>>()
            .map(|rules| AllowList { rules: Some(rules) })
    }

    /// Every public host, on any port (`--network`).
    pub fn any_public() -> Self {
        AllowList { rules: None }
    }

    /// Whether `host:port` may be reached, and by which kind of rule.
    pub fn decide(&self, host: &str, port: u16) -> Option<Grant> {
        let host = normalize(host);
        let Some(rules) = &self.rules else {
            return Some(Grant { exact: false });
        };
        let port_ok = |rule: &Rule| rule.port.map_or(WEB_PORTS.contains(&port), |p| p == port);
        let exact = rules.iter().any(|rule| {
            port_ok(rule) && matches!(&rule.pattern, Pattern::Exact(name) if *name == host)
        });
        if exact {
            return Some(Grant { exact: true });
        }
        rules
            .iter()
            .any(|rule| {
                port_ok(rule)
                    && matches!(&rule.pattern, Pattern::Glob(glob) if glob.is_match(&host))
            })
            .then_some(Grant { exact: false })
    }
}

fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

fn parse_rule(rule: &str) -> Result<Rule, BadRule> {
    let bad = |why| BadRule {
        rule: rule.to_string(),
        why,
    };
    let text = rule.trim();
    // `[v6]:port`, `[v6]`, `host:port`, `host`, or a bare v6 address.
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| bad("an unclosed ["))?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(bad("text after ]")),
        }
    } else if text.matches(':').count() == 1 {
        let (host, port) = text.split_once(':').ok_or_else(|| bad("no host"))?;
        (host, Some(port))
    } else {
        (text, None)
    };
    let port = match port {
        None => None,
        Some(port) => Some(
            port.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?,
        ),
    };
    let host = normalize(host);
    if host.is_empty() {
        return Err(bad("no host"));
    }
    if host.contains('/') || host.contains('@') || host.chars().any(char::is_whitespace) {
        return Err(bad("a host name, not a URL"));
    }
    let pattern = if host.contains(['*', '?', '[']) {
        if host == "*" || !host.contains('.') {
            return Err(bad("a glob must keep a domain, as in *.example.org"));
        }
        let glob = GlobBuilder::new(&host)
            .case_insensitive(true)
            .build()
            .map_err(|_| bad("not a valid glob"))?;
        Pattern::Glob(glob.compile_matcher())
    } else {
        Pattern::Exact(host)
    };
    Ok(Rule { pattern, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rules: &[&str]) -> AllowList {
        AllowList::parse(rules).unwrap()
    }

    #[test]
    fn a_rule_without_port_allows_the_web_ports_only() {
        let allow = list(&["pypi.org"]);
        assert_eq!(allow.decide("pypi.org", 443), Some(Grant { exact: true }));
        assert_eq!(allow.decide("PyPI.org.", 80), Some(Grant { exact: true }));
        assert_eq!(allow.decide("pypi.org", 22), None);
        assert_eq!(allow.decide("evil.org", 443), None);
    }

    #[test]
    fn globs_match_whole_subdomains_and_never_grant_exactly() {
        let allow = list(&["*.pythonhosted.org", "localhost:8080"]);
        assert_eq!(
            allow.decide("files.pythonhosted.org", 443),
            Some(Grant { exact: false })
        );
        assert_eq!(allow.decide("pythonhosted.org", 443), None);
        assert_eq!(allow.decide("files.pythonhosted.org.evil.com", 443), None);
        assert_eq!(allow.decide("localhost", 8080), Some(Grant { exact: true }));
        assert_eq!(allow.decide("localhost", 8081), None);
    }

    #[test]
    fn bad_rules_are_refused_with_the_reason() {
        for bad in [
            "",
            "*",
            "*:443",
            "https://pypi.org",
            "host:0",
            "host:x",
            "[::1",
        ] {
            assert!(AllowList::parse(&[bad]).is_err(), "{bad}");
        }
        let v6 = list(&["[::1]:9000"]);
        assert_eq!(v6.decide("::1", 9000), Some(Grant { exact: true }));
    }
}
