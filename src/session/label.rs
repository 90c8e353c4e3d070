//! [`Label`]: a session's name, checked once, where it enters the program.
//!
//! Invariants a reader must not break:
//! - A `Label` exists only if [`Label::new`] accepted its text (serde goes through it too), so
//!   every `Label` is a valid tail of a ref name (`session/fix/login`), and its
//!   [`Label::file_name`] (each `/` written as `+`, a character no label has) a plain file name:
//!   `sessions/<file name>.toml` and the worktree directory `<worktrees dir>/<file name>` stay
//!   one component inside their directory, and two labels never share one (`a/b` is `a+b`, `a-b`
//!   stays `a-b`), except on a case-insensitive file system, where `Fix` and `fix` do: creation
//!   refuses a label that is the case twin of an existing one ([`Label::is_case_twin_of`]).
//!   Store paths of per-session files take a `&Label`, so text from arguments,
//!   the environment, hook payloads or directory listings reaches the filesystem only after this
//!   check; names read back from a directory go through [`Label::from_file_name`].
//! - The check is free of the branch prefix. It used to take one, but the configuration only
//!   accepts a prefix that ends in `/` and makes a valid ref with any valid last component
//!   ([`crate::config`]), so `refs/heads/<prefix><label>` is valid exactly when the label is valid
//!   as a component of its own: [`crate::session::Layout::branch`] needs no second check.
//! - A record on disk keeps its label as a plain string. One that does not pass the check does
//!   not parse: the store sets the file aside and reports it, and other records are read as usual.

use super::SessionError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The rule, as every refusal of a label states it (DESIGN.md's wording).
pub const RULE: &str =
    "a label is 1 to 64 characters of A-Z a-z 0-9 . _ - /, not starting with -, \
                    . or /, not ending in / or ., without .. or //, no part starting with . or \
                    ending in .lock, and not HEAD";

/// The longest label, in bytes (all allowed characters are ASCII).
pub const MAX_LEN: usize = 64;

/// A session label that passed [`Label::new`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(String);

impl Label {
    /// Checks `text` against the rule DESIGN.md states; the refusal is one line with the rule as
    /// its hint, and shows the text escaped (and shortened), so it can never break a terminal.
    pub fn new(text: &str) -> Result<Label, SessionError> {
        if is_valid(text) {
            Ok(Label(text.to_string()))
        } else {
            Err(SessionError::InvalidLabel {
                text: text.to_string(),
            })
        }
    }

    /// [`Label::new`] for text that is owned already.
    pub fn from_string(text: String) -> Result<Label, SessionError> {
        if is_valid(&text) {
            Ok(Label(text))
        } else {
            Label::new(&text)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The label as one path component: each `/` written as `+` (which no label holds, so two
    /// labels never share a file name). The name of its store files and its worktree directory.
    pub fn file_name(&self) -> String {
        self.0.replace('/', "+")
    }

    /// Whether `other` is this label in another ASCII case only (`Fix` for `fix`, `team/API`
    /// for `team/api`; the label itself is not). A case-insensitive file system (APFS, NTFS by
    /// default) gives two such labels one worktree directory, one store file and one branch file,
    /// so a new label must not be the case twin of an existing one on any platform.
    pub fn is_case_twin_of(&self, other: &str) -> bool {
        self.0 != other && self.0.eq_ignore_ascii_case(other)
    }

    /// The label a [`Label::file_name`] was made from; a name that is none is refused as
    /// [`Label::new`] refuses (a `/` in it, or anything else the rule excludes).
    pub fn from_file_name(name: &str) -> Result<Label, SessionError> {
        if name.contains('/') {
            return Err(SessionError::InvalidLabelFileName {
                name: name.to_string(),
            });
        }
        Label::from_string(name.replace('+', "/"))
    }
}

fn is_valid(label: &str) -> bool {
    let chars_ok = label
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    // `HEAD` and git's other all-caps pseudo-refs (`FETCH_HEAD`, `ORIG_HEAD` ...) would be
    // ambiguous as revisions.
    let reserved = label.eq_ignore_ascii_case("HEAD")
        || (label.ends_with("HEAD") && label.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
    !label.is_empty()
        && label.len() <= MAX_LEN
        && chars_ok
        && !label.starts_with('-')
        && !label.starts_with('.')
        && !label.starts_with('/')
        && !label.ends_with('/')
        && !label.contains("..")
        && !label.contains("//")
        && !reserved
        // Valid ref components of their own: no `.lock` suffix, no trailing `.`, no part starting
        // with `.` (see the module doc).
        && crate::git::is_valid_ref_name(&format!("refs/heads/x/{label}"))
}

impl std::ops::Deref for Label {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Label {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Label {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for Label {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Label {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Label {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<Label> for str {
    fn eq(&self, other: &Label) -> bool {
        self == other.0
    }
}

impl PartialEq<Label> for String {
    fn eq(&self, other: &Label) -> bool {
        *self == other.0
    }
}

impl From<Label> for String {
    fn from(label: Label) -> String {
        label.0
    }
}

impl Serialize for Label {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Label, D::Error> {
        let text = String::deserialize(d)?;
        Label::from_string(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_rule() {
        for good in [
            "fix-login",
            "a",
            "A_b.c-9",
            &"x".repeat(64),
            "a.b",
            "head-1",
            "Head_x",
            "fix/login",
            "a/b/c",
            "feature/x.y-z",
        ] {
            assert_eq!(Label::new(good).unwrap().as_str(), good);
        }
    }

    #[test]
    fn case_twins_differ_in_ascii_case_alone() {
        let fix = Label::new("fix").unwrap();
        for twin in ["Fix", "FIX", "fiX"] {
            assert!(fix.is_case_twin_of(twin), "{twin}");
        }
        for other in ["fix", "fix2", "Fixed", "fi", "f-x"] {
            assert!(!fix.is_case_twin_of(other), "{other}");
        }
        let slash = Label::new("team/api").unwrap();
        assert!(slash.is_case_twin_of("team/API") && slash.is_case_twin_of("Team/api"));
        assert!(!slash.is_case_twin_of("team+api") && !slash.is_case_twin_of("team-api"));
    }

    #[test]
    fn refuses_every_kind_of_bad_input() {
        let long = "y".repeat(65);
        let huge = "y".repeat(300);
        for bad in [
            // empty, traversal, absolute, options
            "",
            "..",
            "../x",
            "../../x",
            "a..b",
            "/abs",
            "-rf",
            "--orphan",
            // slashes git refuses in a ref: at either end, doubled, before a hidden or lock part
            "a/",
            "a//b",
            "a/.b",
            "a/b.lock",
            "a/../b",
            // characters git or a shell would read
            "a b",
            "a:b",
            "a~1",
            "a^",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "@",
            "a@{1}",
            // control characters, NUL, newline, non-ASCII
            "a\nb",
            "a\0b",
            "a\tb",
            "a\x7fb",
            "\x1b[31m",
            "é",
            // hidden, lock files, trailing dot: invalid refs
            ".hidden",
            "x.",
            "x.lock",
            // reserved
            "HEAD",
            "head",
            "FETCH_HEAD",
            "ORIG_HEAD",
            // too long
            &long,
            &huge,
        ] {
            let err = Label::new(bad).expect_err(bad);
            assert_eq!(
                err,
                SessionError::InvalidLabel {
                    text: bad.to_string()
                }
            );
        }
    }

    #[test]
    fn every_label_makes_a_valid_branch_under_any_accepted_prefix() {
        // The claim of the module doc: the prefix the configuration accepts changes nothing.
        for prefix in ["session/", "a/b/", "x.y/", "agents_/"] {
            for label in ["a", "x-lock", "lock", "a.b", &"z".repeat(64), "_", "9"] {
                let label = Label::new(label).unwrap();
                assert!(
                    crate::git::is_valid_ref_name(&format!("refs/heads/{prefix}{label}")),
                    "{prefix}{label}"
                );
            }
        }
    }

    #[test]
    fn file_names_are_one_component_and_never_shared() {
        let cases = [
            ("fix/login", "fix+login"),
            ("a-b", "a-b"),
            ("a/b/c", "a+b+c"),
        ];
        for (label, name) in cases {
            let label = Label::new(label).unwrap();
            assert_eq!(label.file_name(), name);
            assert_eq!(Label::from_file_name(name).unwrap(), label);
        }
        assert_ne!(
            Label::new("a/b").unwrap().file_name(),
            Label::new("a-b").unwrap().file_name()
        );
        for bad in ["a/b", "+a", "a+", "a++b", "..", "", "a+.b"] {
            assert!(Label::from_file_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn serde_keeps_the_bytes_and_refuses_bad_text() {
        #[derive(Serialize, Deserialize)]
        struct R {
            label: Label,
        }
        let text = toml::to_string(&R {
            label: Label::new("fix-1").unwrap(),
        })
        .unwrap();
        assert_eq!(text, "label = \"fix-1\"\n");
        assert_eq!(toml::from_str::<R>(&text).unwrap().label, "fix-1");
        for bad in [
            "label = \"../x\"",
            "label = \"\"",
            "label = \"a\\nb\"",
            "label = 3",
        ] {
            assert!(toml::from_str::<R>(bad).is_err(), "{bad}");
        }
    }
}
