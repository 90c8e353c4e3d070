//! What the guard reads of a configuration that may be damaged.
//!
//! Invariant: a configuration error never switches the guard off. [`Config::load_for_guard`]
//! never fails: a file that is fine applies exactly as [`Config::load`] would apply it; a file the
//! strict reader refuses gives the guard only the keys it reads (`branch_prefix`, `live_for`,
//! `[guard] shared` and `escape`, `[claims] remote`, `ttl` and `timeout`), each taken when its value is good
//! and left at its default otherwise, and a file that does not parse (or is no text) gives none.
//! Every problem comes back as a [`Damage`] naming file, line and column, for the caller to warn.
//! The defaults are the strict choice: nothing shared, escapes denied, claims of this clone
//! only.
//!
//! One reader: the TOML parser the strict reader uses (`toml_edit`, underneath `toml`), read
//! here as a document with the spans of its keys and values.

use super::checks::{check_escape, check_prefix, check_remote, check_shared, duration};
use super::checks::{ESCAPE_ALLOWED, PREFIX_ALLOWED, REMOTE_ALLOWED, SHARED_ALLOWED};
use super::error::{bad, read_text, ConfigError, Position};
use super::{files, Config, DurationValue};
use chrono::Duration;
use std::ops::Range;
use std::path::Path;
use toml_edit::{ImDocument, Item, TableLike};

/// What the guard did about one problem in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// The problem is in a part the guard does not read: it enforces as configured.
    Unused,
    /// A key the guard reads is damaged: the guard uses that key's default.
    KeyDefault { key: String },
    /// The file cannot be read as TOML at all: the guard uses the defaults for all its keys.
    FileDefaults,
}

/// One problem the guard found in a configuration file, and what it did about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub error: ConfigError,
    pub fallback: Fallback,
}

const TABLE_ALLOWED: &str = "a table";
const DURATION_ALLOWED: &str = "a duration such as \"24h\"";

impl Config {
    /// The configuration as the guard reads it: never an error, and the problems found (see the
    /// module's invariant). A file without problems costs what [`Config::load`] costs.
    pub fn load_for_guard(repo_root: Option<&Path>) -> (Config, Vec<Damage>) {
        let mut config = Config::default();
        let mut damage = Vec::new();
        for (file, from_repo) in files(repo_root) {
            damage.extend(config.apply_for_guard(&file, from_repo));
        }
        (config, damage)
    }

    /// Applies one file as the guard reads it; returns its problems.
    fn apply_for_guard(&mut self, file: &Path, from_repo: bool) -> Vec<Damage> {
        let text = match read_text(file) {
            Ok(text) => text,
            Err(error) => {
                return vec![Damage {
                    error,
                    fallback: Fallback::FileDefaults,
                }]
            }
        };
        let Err(strict) = self.apply(file, &text, from_repo) else {
            return Vec::new();
        };
        let Ok(doc) = ImDocument::parse(text.as_str()) else {
            return vec![Damage {
                error: strict,
                fallback: Fallback::FileDefaults,
            }];
        };
        let found = self.apply_guard_keys(file, &text, doc.as_table());
        // The strict reader's first error, unless it lies in the value of one of the guard's own
        // keys (then the guard's account of it, with what it fell back to, says it).
        let within = |(_, span): &(Damage, Option<Range<usize>>)| {
            let span = span.clone().unwrap_or_default();
            let (start, end) = (
                Position::of(&text, span.start),
                Position::of(&text, span.end),
            );
            strict.at().is_some_and(|at| start <= at && at < end)
        };
        let mut damage = Vec::new();
        if !found.iter().any(within) {
            damage.push(Damage {
                error: strict,
                fallback: Fallback::Unused,
            });
        }
        damage.extend(found.into_iter().map(|(d, _)| d));
        damage
    }

    /// Takes each key the guard reads whose value is good; returns the others as damage, each
    /// with the span of its value.
    fn apply_guard_keys(
        &mut self,
        file: &Path,
        text: &str,
        top: &dyn TableLike,
    ) -> Vec<(Damage, Option<Range<usize>>)> {
        let mut found = Vec::new();
        let mut note = |key: &str, item: &Item, error: ConfigError| {
            let damage = Damage {
                error: error.located(Position::of_span(text, item.span())),
                fallback: Fallback::KeyDefault {
                    key: key.to_string(),
                },
            };
            found.push((damage, item.span()))
        };
        if let Some(item) = top.get("branch_prefix") {
            let key = "branch_prefix";
            match string(file, key, PREFIX_ALLOWED, item).and_then(|p| check_prefix(file, p)) {
                Ok(prefix) => self.branch_prefix = prefix,
                Err(e) => note(key, item, e),
            }
        }
        if let Some(item) = top.get("live_for") {
            match duration_of(file, "live_for", item) {
                Ok(d) => self.live_for = d,
                Err(e) => note("live_for", item, e),
            }
        }
        if let Some(item) = top.get("guard") {
            match item.as_table_like() {
                None => note("guard", item, bad(file, "guard", TABLE_ALLOWED)),
                Some(guard) => {
                    if let Some(item) = guard.get("shared") {
                        let key = "guard.shared";
                        match strings(file, key, SHARED_ALLOWED, item)
                            .and_then(|s| check_shared(file, s))
                        {
                            Ok(shared) => self.guard_shared = shared,
                            Err(e) => note(key, item, e),
                        }
                    }
                    if let Some(item) = guard.get("escape") {
                        let key = "guard.escape";
                        match string(file, key, ESCAPE_ALLOWED, item)
                            .and_then(|e| check_escape(file, &e))
                        {
                            Ok(escape) => self.guard_escape = escape,
                            Err(e) => note(key, item, e),
                        }
                    }
                }
            }
        }
        if let Some(item) = top.get("claims") {
            match item.as_table_like() {
                None => note("claims", item, bad(file, "claims", TABLE_ALLOWED)),
                Some(claims) => {
                    if let Some(item) = claims.get("remote") {
                        let key = "claims.remote";
                        match string(file, key, REMOTE_ALLOWED, item)
                            .and_then(|r| check_remote(file, r))
                        {
                            Ok(remote) => self.claims_remote = Some(remote),
                            Err(e) => note(key, item, e),
                        }
                    }
                    if let Some(item) = claims.get("ttl") {
                        match duration_of(file, "claims.ttl", item) {
                            Ok(d) => self.claims_ttl = d,
                            Err(e) => note("claims.ttl", item, e),
                        }
                    }
                    if let Some(item) = claims.get("timeout") {
                        match duration_of(file, "claims.timeout", item) {
                            Ok(d) => self.claims_timeout = d,
                            Err(e) => note("claims.timeout", item, e),
                        }
                    }
                }
            }
        }
        found
    }
}

fn string(file: &Path, key: &str, allowed: &str, item: &Item) -> Result<String, ConfigError> {
    item.as_str()
        .map(str::to_string)
        .ok_or_else(|| bad(file, key, allowed))
}

fn strings(file: &Path, key: &str, allowed: &str, item: &Item) -> Result<Vec<String>, ConfigError> {
    let array = item.as_array().ok_or_else(|| bad(file, key, allowed))?;
    array
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad(file, key, allowed))
}

fn duration_of(file: &Path, key: &str, item: &Item) -> Result<Duration, ConfigError> {
    let value = match (item.as_integer(), item.as_str()) {
        (Some(n), _) => DurationValue::Seconds(n),
        (_, Some(text)) => DurationValue::Text(text.to_string()),
        _ => return Err(bad(file, key, DURATION_ALLOWED)),
    };
    duration(file, key, value)
}

/// The dotted key whose key or value holds byte `offset` of `text` (the deepest one), for an
/// error of the TOML reader that names no key (a value of the wrong type).
pub(super) fn key_at(text: &str, offset: usize) -> Option<String> {
    let doc = ImDocument::parse(text).ok()?;
    let mut path = Vec::new();
    holding(doc.as_table(), offset, &mut path).then(|| path.join("."))
}

fn holding(table: &dyn TableLike, offset: usize, path: &mut Vec<String>) -> bool {
    let holds = |span: Option<Range<usize>>| span.is_some_and(|s| s.contains(&offset));
    for (key, item) in table.iter() {
        path.push(key.to_string());
        if item
            .as_table_like()
            .is_some_and(|inner| holding(inner, offset, path))
        {
            return true;
        }
        if holds(item.span()) || holds(table.key(key).and_then(toml_edit::Key::span)) {
            return true;
        }
        path.pop();
    }
    false
}

/// `e` with the position of its key's value in `text` (the deepest part of the dotted key the
/// document has), when it has none yet.
pub(super) fn locate(e: ConfigError, text: &str) -> ConfigError {
    let (None, Some(key)) = (e.at(), e.key()) else {
        return e;
    };
    let Ok(doc) = ImDocument::parse(text) else {
        return e;
    };
    let mut span = None;
    let mut table: Option<&dyn TableLike> = Some(doc.as_table());
    for part in key.split('.') {
        let Some(item) = table.and_then(|t| t.get(part)) else {
            break;
        };
        span = item.span().or(span);
        table = item.as_table_like();
    }
    let at = Position::of_span(text, span);
    e.located(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard's reading of `text` as a repository's file: the configuration and the problems
    /// as `(line, column, fallback, error)`.
    fn guard_reads(text: &[u8]) -> (Config, Vec<(usize, usize, Fallback, String)>) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".git-session.toml");
        std::fs::write(&file, text).unwrap();
        let mut config = Config::default();
        let damage = config.apply_for_guard(&file, true);
        let damage = damage
            .into_iter()
            .map(|d| {
                let at = d
                    .error
                    .at()
                    .expect("every problem in a file's text is located");
                (at.line, at.column, d.fallback, d.error.to_string())
            })
            .collect();
        (config, damage)
    }

    #[test]
    fn a_good_file_applies_as_the_strict_reader_applies_it() {
        let (c, damage) =
            guard_reads(b"branch_prefix = \"agent/\"\n[guard]\nshared = [\"*.lock\"]\n");
        assert!(damage.is_empty(), "{damage:?}");
        assert_eq!(c.branch_prefix, "agent/");
        assert_eq!(c.guard_shared, ["*.lock"]);
    }

    #[test]
    fn an_unknown_key_leaves_the_guard_its_keys_and_is_located() {
        let (c, damage) = guard_reads(
            b"live_for = \"2h\"\nwortrees_dir = \"x\"\n[guard]\nshared = [\"*.lock\"]\n",
        );
        assert_eq!(c.guard_shared, ["*.lock"]);
        assert_eq!(c.live_for, Duration::hours(2));
        assert_eq!(damage.len(), 1, "{damage:?}");
        let (line, column, fallback, error) = &damage[0];
        assert_eq!((*line, *column, fallback), (2, 1, &Fallback::Unused));
        assert!(error.contains("unknown field `wortrees_dir`"), "{error}");
    }

    #[test]
    fn a_bad_value_of_a_key_the_guard_does_not_read_is_only_reported() {
        let (c, damage) =
            guard_reads(b"[merge]\nstrategy = \"octopus\"\n[claims]\nremote = \"origin\"\n");
        assert_eq!(c.claims_remote.as_deref(), Some("origin"));
        assert_eq!(damage.len(), 1, "{damage:?}");
        assert_eq!((damage[0].0, damage[0].1), (2, 12));
        assert_eq!(damage[0].2, Fallback::Unused);
    }

    #[test]
    fn a_bad_value_of_a_key_the_guard_reads_falls_back_to_its_default_once() {
        for (text, key, at) in [
            (&b"[guard]\nshared = 3\n"[..], "guard.shared", (2, 10)),
            (b"[guard]\nshared = [\"a\", 3]\n", "guard.shared", (2, 10)),
            (b"[guard]\nshared = [\"[x\"]\n", "guard.shared", (2, 10)),
            (b"live_for = \"forever\"\n", "live_for", (1, 12)),
            (b"live_for = true\n", "live_for", (1, 12)),
            (b"branch_prefix = \"no-slash\"\n", "branch_prefix", (1, 17)),
            (b"guard = 3\n", "guard", (1, 9)),
            (
                b"[claims]\nremote = \"-x\"\nttl = \"1h\"\n",
                "claims.remote",
                (2, 10),
            ),
        ] {
            let (c, damage) = guard_reads(text);
            let said = String::from_utf8_lossy(text);
            assert_eq!(damage.len(), 1, "{said}: {damage:?}");
            let (line, column, fallback, _) = &damage[0];
            assert_eq!((*line, *column), at, "{said}");
            assert_eq!(
                fallback,
                &Fallback::KeyDefault { key: key.into() },
                "{said}"
            );
            assert!(c.guard_shared.is_empty(), "{said}");
            assert_eq!(c.live_for, Duration::hours(24), "{said}");
            assert_eq!(c.branch_prefix, "session/", "{said}");
            assert_eq!(c.claims_remote, None, "{said}");
        }
    }

    #[test]
    fn escape_is_read_where_good_and_denied_where_not() {
        let (c, damage) = guard_reads(b"wortrees_dir = 1\n[guard]\nescape = \"allow\"\n");
        assert_eq!(c.guard_escape, super::super::Escape::Allow);
        assert_eq!(damage.len(), 1, "{damage:?}");
        let (c, damage) = guard_reads(b"[guard]\nescape = \"off\"\n");
        assert_eq!(c.guard_escape, super::super::Escape::Deny);
        assert_eq!(damage.len(), 1, "{damage:?}");
        assert_eq!((damage[0].0, damage[0].1), (2, 10));
        assert_eq!(
            damage[0].2,
            Fallback::KeyDefault {
                key: "guard.escape".into()
            }
        );
    }

    #[test]
    fn a_file_that_is_no_toml_gives_the_guard_every_default() {
        for (text, at) in [
            (&b"[guard]\nshared = [\"*.lock\"\n"[..], (3, 1)),
            (b"live_for = \"2h\"\n\n= x\n", (3, 1)),
            (b"live_for = \"2h\"\n\x00\x01\x02\n", (2, 1)),
            (b"live_for = \"2h\"\n\xff\xfe\x00garbage", (2, 1)),
        ] {
            let (c, damage) = guard_reads(text);
            let said = String::from_utf8_lossy(text);
            assert_eq!(damage.len(), 1, "{said}: {damage:?}");
            let (line, column, fallback, _) = &damage[0];
            assert_eq!((*line, *column), at, "{said}: {damage:?}");
            assert_eq!(fallback, &Fallback::FileDefaults, "{said}");
            assert_eq!(c.live_for, Duration::hours(24), "{said}");
        }
    }
}
