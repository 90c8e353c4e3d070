//! `[resources]`: what each session is given besides its worktree: a block of TCP ports and
//! names built from its label (a database, a compose project), leased by `create`
//! (`ownership::leases`) and handed to its programs as `GIT_SESSION_*` environment.
//!
//! ```toml
//! [resources]
//! ports = 10                      # a block of 10 ports per session (default 0: none)
//! port_range = "20000-29999"      # where blocks come from (the default)
//! [resources.names]
//! database = "app_{label}"        # GIT_SESSION_DATABASE=app_fix_login for session fix-login
//! ```
//!
//! Invariants: a name's key becomes an environment variable (`GIT_SESSION_<KEY>`, upper-cased),
//! so it is `[a-z][a-z0-9_]*` (lower-case ASCII, at most 32 bytes) and never `port` or `ports`; a
//! template holds only `A-Z a-z 0-9 _` and `{label}` (at least once), so what it makes is a plain
//! identifier every database, compose project and shell accepts. The label is put in as
//! [`sanitize_label`] says.

use super::error::{bad, ConfigError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The most ports one session may lease.
pub const MAX_PORTS: u32 = 1000;
/// The longest value a name may have: PostgreSQL keeps 63 bytes of an identifier, MySQL 64.
pub const MAX_NAME: usize = 63;

/// What each session is given (`[resources]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resources {
    /// Ports per session; 0: none.
    pub ports: u32,
    /// The first and last port blocks are taken from (inclusive).
    pub port_range: (u16, u16),
    /// Name key (lower-case) to template holding `{label}`.
    pub names: BTreeMap<String, String>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            ports: 0,
            port_range: (20000, 29999),
            names: BTreeMap::new(),
        }
    }
}

impl Resources {
    /// Whether a session gets anything at all (then `create` takes a lease).
    pub fn any(&self) -> bool {
        self.ports > 0 || !self.names.is_empty()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResources {
    ports: Option<i64>,
    port_range: Option<String>,
    names: Option<BTreeMap<String, String>>,
}

const PORTS_ALLOWED: &str = "a number of ports from 0 to 1000";
const RANGE_ALLOWED: &str = "a range of ports such as \"20000-29999\" (1024 to 65535)";
const KEY_ALLOWED: &str =
    "a name key of lower-case letters, digits and `_`, starting with a letter, not `port`/`ports`";
const TEMPLATE_ALLOWED: &str =
    "a template of letters, digits and `_` holding `{label}`, such as \"app_{label}\"";

impl Resources {
    /// Applies `[resources]` of one file over `self` (key by key, as every section).
    pub(super) fn apply(&mut self, file: &Path, raw: RawResources) -> Result<(), ConfigError> {
        if let Some(n) = raw.ports {
            match u32::try_from(n) {
                Ok(n) if n <= MAX_PORTS => self.ports = n,
                _ => return Err(bad(file, "resources.ports", PORTS_ALLOWED)),
            }
        }
        if let Some(range) = raw.port_range {
            self.port_range = parse_range(&range)
                .ok_or_else(|| bad(file, "resources.port_range", RANGE_ALLOWED))?;
        }
        if let Some(names) = raw.names {
            for (key, template) in &names {
                if !key_ok(key) {
                    return Err(bad(file, &format!("resources.names.{key}"), KEY_ALLOWED));
                }
                if !template_ok(template) {
                    return Err(bad(
                        file,
                        &format!("resources.names.{key}"),
                        TEMPLATE_ALLOWED,
                    ));
                }
            }
            self.names = names;
        }
        let (first, last) = self.port_range;
        if self.ports > u32::from(last - first) + 1 {
            return Err(bad(
                file,
                "resources.ports",
                "no more ports than `resources.port_range` holds",
            ));
        }
        Ok(())
    }
}

/// `"20000-29999"` as (20000, 29999): both ends inclusive, unprivileged (1024 up), in order.
fn parse_range(text: &str) -> Option<(u16, u16)> {
    let (a, b) = text.trim().split_once('-')?;
    let (a, b): (u16, u16) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a >= 1024 && a <= b).then_some((a, b))
}

fn key_ok(key: &str) -> bool {
    key.len() <= 32
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && key != "port"
        && key != "ports"
}

fn template_ok(template: &str) -> bool {
    template.contains("{label}")
        && template
            .replace("{label}", "")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The label as a name puts it in: lower-cased, each character other than `a-z 0-9 _` (a `-`,
/// `.` or `/` of a label) made `_`. So `Fix-Login/2` is `fix_login_2`: a plain identifier for
/// PostgreSQL, MySQL, compose projects and environment values alike. Two labels can come out
/// the same (`a-b`, `a.b`); the lease then tells them apart (`ownership::leases`).
pub fn sanitize_label(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The value `template` gives for `label`, before any suffix that keeps it unique: the sanitized
/// label put in for each `{label}`, cut to [`MAX_NAME`] bytes less `room` (kept for a suffix).
pub fn name_for(template: &str, label: &str, room: usize) -> String {
    let mut value = template.replace("{label}", &sanitize_label(label));
    value.truncate(MAX_NAME.saturating_sub(room));
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str) -> Result<Resources, ConfigError> {
        #[derive(Deserialize)]
        struct Doc {
            resources: RawResources,
        }
        let doc: Doc = toml::from_str(text).unwrap();
        let mut r = Resources::default();
        r.apply(Path::new("f.toml"), doc.resources)?;
        Ok(r)
    }

    #[test]
    fn good_values_apply_and_defaults_stand() {
        let r = apply("[resources]\nports = 10\n[resources.names]\ndatabase = \"app_{label}\"\n")
            .unwrap();
        assert_eq!(r.ports, 10);
        assert_eq!(r.port_range, (20000, 29999));
        assert_eq!(r.names["database"], "app_{label}");
        let r = apply("[resources]\nport_range = \" 3000 - 3009 \"\nports = 10\n").unwrap();
        assert_eq!(r.port_range, (3000, 3009));
    }

    #[test]
    fn bad_values_are_refused_with_what_is_allowed() {
        for (text, key) in [
            ("[resources]\nports = -1\n", "resources.ports"),
            ("[resources]\nports = 1001\n", "resources.ports"),
            (
                "[resources]\nport_range = \"80-90\"\n",
                "resources.port_range",
            ),
            (
                "[resources]\nport_range = \"3010-3000\"\n",
                "resources.port_range",
            ),
            (
                "[resources]\nport_range = \"3000-70000\"\n",
                "resources.port_range",
            ),
            (
                "[resources]\nports = 20\nport_range = \"3000-3009\"\n",
                "resources.ports",
            ),
            (
                "[resources.names]\nPORT = \"x_{label}\"\n",
                "resources.names.PORT",
            ),
            (
                "[resources.names]\nports = \"x_{label}\"\n",
                "resources.names.ports",
            ),
            ("[resources.names]\ndb = \"app\"\n", "resources.names.db"),
            (
                "[resources.names]\ndb = \"app;{label}\"\n",
                "resources.names.db",
            ),
            (
                "[resources.names]\ndb = \"$(x){label}\"\n",
                "resources.names.db",
            ),
        ] {
            let err = apply(text).unwrap_err().to_string();
            assert!(err.contains(&format!("`{key}`")), "{text}: {err}");
        }
    }

    #[test]
    fn labels_become_plain_identifiers_cut_to_the_longest_name() {
        assert_eq!(sanitize_label("Fix-Login/2.b"), "fix_login_2_b");
        assert_eq!(name_for("app_{label}", "fix-login", 0), "app_fix_login");
        let long = "a".repeat(200);
        assert_eq!(name_for("db_{label}", &long, 0).len(), MAX_NAME);
        assert_eq!(name_for("db_{label}", &long, 4).len(), MAX_NAME - 4);
    }
}
