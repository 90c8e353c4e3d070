//! `[merge] union` and `[merge] regenerate` inside the computation of a merge
//! ([`super::integrate::compute`]): a `git merge-tree` that conflicts only in such files is
//! resolved here, as new objects, before the merge is refused.
//!
//! - A union file: the three versions git reports for it (the merge base's, ours, theirs) are
//!   read; when each side only added lines to the base's, the result is the base's lines with
//!   each side's additions in their places (ours first where both added at the same place), and
//!   a line both sides added is kept once. A side that changed or deleted a line, a binary or
//!   non-UTF-8 file, a file deleted on one side or changed in mode: the conflict stands.
//! - A generated file: ours (the base branch's side) is taken, and the path is returned to be
//!   rebuilt by its command on the result (in the check's scratch worktree,
//!   [`super::merge_regenerate`]).
//!
//! Invariants a reader must not break:
//! - Nothing but objects is written: the resolved tree is built in a temporary index file of
//!   our own (`GIT_INDEX_FILE`), never the repository's or a worktree's.
//! - Any conflicted path that is neither, or cannot be resolved as its kind says, leaves the
//!   whole merge-tree a conflict (`Ok(None)`): nothing is resolved halfway.

use super::integrate::{compute_git, Conflicted, Watch};
use crate::config::MergeFiles;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// A conflicting merge-tree resolved: the tree, and the generated paths to rebuild on it.
#[derive(Debug)]
pub struct Resolution {
    pub tree: String,
    pub regenerate: Vec<String>,
}

/// One side of a conflicted path, as `git merge-tree` reports it (`<mode> <object> <stage>`).
#[derive(Debug, Clone)]
struct Version {
    mode: String,
    oid: String,
}

/// Stages 1 (the merge base), 2 (ours) and 3 (theirs) of each conflicted path.
type Stages = BTreeMap<String, [Option<Version>; 3]>;

/// Resolves the conflicts of `git merge-tree [--merge-base=<merge_base>] <ours> <theirs>` in
/// `paths` when every one is a union or generated file and resolvable (see the module doc).
pub fn resolve(
    dir: &Path,
    files: &MergeFiles,
    merge_base: Option<&str>,
    ours: &str,
    theirs: &str,
    paths: &[String],
    watch: &Watch,
) -> Result<Option<Resolution>> {
    let known = |p: &String| files.is_union(p) || files.regenerate_command(p).is_some();
    if paths.is_empty() || !paths.iter().all(known) {
        return Ok(None);
    }
    let args = super::integrate::merge_tree_args(merge_base, ours, theirs, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = match compute_git(dir, &args, watch, Some(1)) {
        // No conflict this time (cannot happen for the same inputs): nothing to resolve here.
        Ok(_) => return Ok(None),
        Err(e) => match e.downcast::<Conflicted>() {
            Ok(Conflicted(out)) => out,
            Err(e) => return Err(e),
        },
    };
    let mut fields = out.split('\0');
    let tree = fields.next().unwrap_or("").trim().to_string();
    let Some(stages) = stages(fields.take_while(|f| !f.is_empty())) else {
        return Ok(None);
    };
    let mut entries = Vec::new();
    let mut regenerate = Vec::new();
    for (path, [base, ours, theirs]) in &stages {
        let regular = |v: &Option<Version>| {
            v.as_ref()
                .is_some_and(|v| v.mode == "100644" || v.mode == "100755")
        };
        if files.is_union(path) {
            let (Some(o), Some(t)) = (ours, theirs) else {
                return Ok(None);
            };
            if !regular(ours) || o.mode != t.mode || (base.is_some() && !regular(base)) {
                return Ok(None);
            }
            let read = |v: &Version| blob_text(dir, &v.oid, watch);
            let base_text = match base {
                Some(b) => read(b)?,
                None => Some(String::new()),
            };
            let (Some(b), Some(o_text), Some(t_text)) = (base_text, read(o)?, read(t)?) else {
                return Ok(None);
            };
            let Some(merged) = union(&b, &o_text, &t_text) else {
                return Ok(None);
            };
            let oid = stdin_git(
                dir,
                &["hash-object", "-w", "--no-filters", "--stdin"],
                merged.into_bytes(),
                watch,
            )?;
            entries.push((o.mode.clone(), oid, path.clone()));
        } else {
            // A path the names did not list (a rename's other side) is resolved only as what
            // it is itself.
            let (Some(o), Some(_)) = (ours, files.regenerate_command(path)) else {
                return Ok(None);
            };
            entries.push((o.mode.clone(), o.oid.clone(), path.clone()));
            regenerate.push(path.clone());
        }
    }
    let tree = with_entries(dir, &tree, &entries, watch)?;
    Ok(Some(Resolution { tree, regenerate }))
}

/// The conflicted-file lines of `git merge-tree -z` (`<mode> <object> <stage>\t<path>`) by path;
/// `None` for a line that is not one (a future format): then nothing is resolved.
fn stages<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Stages> {
    let mut by_path = Stages::new();
    for line in lines {
        let (info, path) = line.split_once('\t')?;
        let mut parts = info.split(' ');
        let (mode, oid, stage) = (parts.next()?, parts.next()?, parts.next()?);
        let slot: usize = stage.parse::<usize>().ok()?.checked_sub(1)?;
        let versions = by_path.entry(path.to_string()).or_default();
        *versions.get_mut(slot)? = Some(Version {
            mode: mode.to_string(),
            oid: oid.to_string(),
        });
    }
    Some(by_path)
}

/// A blob as text; `None` when it is not UTF-8 text (a NUL byte, or bytes git's output lost).
fn blob_text(dir: &Path, oid: &str, watch: &Watch) -> Result<Option<String>> {
    let text = compute_git(dir, &["cat-file", "blob", oid], watch, None)?;
    Ok((!text.contains('\0') && !text.contains('\u{FFFD}')).then_some(text))
}

/// A git run given `input` on its stdin; its stdout, trimmed.
fn stdin_git(dir: &Path, args: &[&str], input: Vec<u8>, watch: &Watch) -> Result<String> {
    super::integrate::compute_git_with(dir, args, watch, |run| run.stdin(input))
        .map(|s| s.trim().to_string())
}

/// `tree` with `entries` (mode, blob, path) put in, through a temporary index of our own.
fn with_entries(
    dir: &Path,
    tree: &str,
    entries: &[(String, String, String)],
    watch: &Watch,
) -> Result<String> {
    let scratch = tempfile::Builder::new()
        .prefix("git-session-union")
        .tempdir()
        .context("a temporary index")?;
    let index = scratch.path().join("index");
    let with_index = |args: &[&str], input: Option<Vec<u8>>| {
        let index = index.clone();
        super::integrate::compute_git_with(dir, args, watch, move |run| {
            let run = run.env("GIT_INDEX_FILE", index);
            match input {
                Some(bytes) => run.stdin(bytes),
                None => run,
            }
        })
    };
    with_index(&["read-tree", tree], None)?;
    let mut info = Vec::new();
    for (mode, oid, path) in entries {
        info.extend_from_slice(format!("{mode} {oid}\t{path}\0").as_bytes());
    }
    with_index(&["update-index", "-z", "--index-info"], Some(info))?;
    Ok(with_index(&["write-tree"], None)?.trim().to_string())
}

/// A text's lines (without their `\n`) and whether it ends with one.
fn lines_of(text: &str) -> (Vec<&str>, bool) {
    let mut lines: Vec<&str> = text.split('\n').collect();
    let ends = lines.last() == Some(&"");
    if ends {
        lines.pop();
    }
    (lines, ends)
}

/// What `side` added to `base`, as the lines inserted before each of base's lines (and after
/// the last); `None` when `side` is not `base` with lines inserted (it changed or deleted one).
fn insertions<'a>(base: &[&str], side: &[&'a str]) -> Option<Vec<Vec<&'a str>>> {
    let mut gaps = vec![Vec::new(); base.len() + 1];
    let mut at = 0;
    for line in side {
        if at < base.len() && *line == base[at] {
            at += 1;
        } else {
            gaps[at].push(*line);
        }
    }
    (at == base.len()).then_some(gaps)
}

/// The union of two sides that only added lines to `base`: base's lines, ours' additions, then
/// theirs' in each place; a non-blank line theirs added that ours added too is left out (and a
/// place where theirs then adds only blank lines gets none of them). `None`: a side did more
/// than add lines.
pub fn union(base: &str, ours: &str, theirs: &str) -> Option<String> {
    let (base, _) = lines_of(base);
    let (ours, ours_end) = lines_of(ours);
    let (theirs, theirs_end) = lines_of(theirs);
    let ours_gaps = insertions(&base, &ours)?;
    let theirs_gaps = insertions(&base, &theirs)?;
    let blank = |l: &str| l.trim().is_empty();
    let mut added_by_ours: BTreeMap<&str, usize> = BTreeMap::new();
    for line in ours_gaps.iter().flatten().filter(|l| !blank(l)) {
        *added_by_ours.entry(line).or_default() += 1;
    }
    let mut out: Vec<&str> = Vec::new();
    for (at, (mine, other)) in ours_gaps.iter().zip(&theirs_gaps).enumerate() {
        out.extend(mine);
        let rest: Vec<&str> = other
            .iter()
            .copied()
            .filter(|l| {
                if blank(l) {
                    return true;
                }
                match added_by_ours.get_mut(l) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                }
            })
            .collect();
        if rest.iter().any(|l| !blank(l)) {
            out.extend(rest);
        }
        if let Some(line) = base.get(at) {
            out.push(line);
        }
    }
    let mut text = out.join("\n");
    if !out.is_empty() && (ours_end || theirs_end) {
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::union;

    #[test]
    fn additions_of_both_sides_are_kept_once_in_order() {
        let base = "# Changelog\n\n## Unreleased\n- one\n";
        let a = "# Changelog\n\n## Unreleased\n- one\n- two\n";
        let b = "# Changelog\n\n## Unreleased\n- one\n- three\n";
        assert_eq!(
            union(base, a, b).unwrap(),
            "# Changelog\n\n## Unreleased\n- one\n- two\n- three\n"
        );
        // At the top of a section too, each in its place.
        let a = "# Changelog\n\n## Unreleased\n- two\n- one\n";
        let b = "# Changelog\n\n## Unreleased\n- three\n- one\n";
        assert_eq!(
            union(base, a, b).unwrap(),
            "# Changelog\n\n## Unreleased\n- two\n- three\n- one\n"
        );
    }

    #[test]
    fn a_line_both_sides_added_appears_once_and_its_blank_lines_are_not_doubled() {
        let base = "a\n";
        assert_eq!(union(base, "a\nx\n", "a\nx\n").unwrap(), "a\nx\n");
        assert_eq!(union(base, "a\nx\n\n", "a\nx\n\n").unwrap(), "a\nx\n\n");
        assert_eq!(
            union(base, "a\nx\ny\n", "a\ny\nz\n").unwrap(),
            "a\nx\ny\nz\n"
        );
        // Blank separators of different entries stay.
        assert_eq!(
            union(base, "a\n\nx\n", "a\n\ny\n").unwrap(),
            "a\n\nx\n\ny\n"
        );
    }

    #[test]
    fn a_changed_or_deleted_line_is_no_union() {
        let base = "a\nb\n";
        assert_eq!(union(base, "a\nB\n", "a\nb\nc\n"), None);
        assert_eq!(union(base, "a\nb\nc\n", "b\nd\n"), None);
        // A file both sides created: everything is an addition.
        assert_eq!(union("", "x\n", "y\n").unwrap(), "x\ny\n");
        // No newline at the end of the base's last line.
        assert_eq!(union("a", "a\nb\n", "a\nc\n").unwrap(), "a\nb\nc\n");
        assert_eq!(union("a\n", "a\nb", "a\nc\n").unwrap(), "a\nb\nc\n");
    }
}
