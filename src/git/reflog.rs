//! The one reader of git's reflog files (`logs/HEAD`, `logs/refs/...`), read as bytes from the
//! file, newest last. Each line is `<old> <new> <name> <<email>> <time> <tz>\t<message>`; a line
//! that does not parse is skipped, never an error (a reflog is git's history of a ref, not ours
//! to judge).

use super::Oid;
use std::path::Path;

/// One reflog line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReflogEntry {
    pub old: Oid,
    pub new: Oid,
    /// Seconds since the epoch.
    pub time: i64,
    pub message: String,
}

impl ReflogEntry {
    /// Whether this entry records a commit made in the worktree whose HEAD it logs (`git
    /// commit`, `--amend`, a merge concluded by commit, a cherry-pick, a revert, a rebase's
    /// pick), as opposed to HEAD moving onto commits made elsewhere (checkout, reset, a
    /// fast-forward merge or pull, a rebase starting or finishing).
    pub fn makes_commit(&self) -> bool {
        let m = self.message.as_str();
        m.starts_with("commit")
            || m.starts_with("cherry-pick")
            || m.starts_with("revert")
            || (m.starts_with("rebase")
                && !m.contains("(start)")
                && !m.contains("(finish)")
                && !m.contains("(abort)"))
    }
}

/// The last `limit` entries of the reflog file at `path`, newest last; empty when it is missing
/// or unreadable.
pub fn read(path: &Path, limit: usize) -> Vec<ReflogEntry> {
    let Ok(crate::base::files::StateBytes::Bytes(bytes, _)) =
        crate::base::files::read_state_bytes(path, 64 << 20)
    else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(limit);
    lines[from..].iter().filter_map(|l| parse(l)).collect()
}

fn parse(line: &str) -> Option<ReflogEntry> {
    let (head, message) = line.split_once('\t').unwrap_or((line, ""));
    let mut fields = head.splitn(3, ' ');
    let old = Oid::from_str(fields.next()?).ok()?;
    let new = Oid::from_str(fields.next()?).ok()?;
    let who = fields.next()?;
    // `<name> <<email>> <time> <tz>`: the time follows the last `>`.
    let after = &who[who.rfind('>')? + 1..];
    let time = after.split_whitespace().next()?.parse().ok()?;
    Some(ReflogEntry {
        old,
        new,
        time,
        message: message.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_tell_commits_from_moves() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let line = |msg: &str| format!("{a} {b} A U Thor <a@x> 1767225600 +0000\t{msg}");
        let e = parse(&line("commit: fix it")).unwrap();
        assert_eq!(e.time, 1_767_225_600);
        assert!(e.makes_commit());
        for msg in [
            "commit (amend): x",
            "cherry-pick: x",
            "rebase (pick): x",
            "revert: x",
        ] {
            assert!(parse(&line(msg)).unwrap().makes_commit(), "{msg}");
        }
        for msg in [
            "merge main: Fast-forward",
            "reset: moving to HEAD~",
            "checkout: moving from a to b",
            "rebase (finish): returning to refs/heads/x",
            "pull: Fast-forward",
        ] {
            assert!(!parse(&line(msg)).unwrap().makes_commit(), "{msg}");
        }
        assert!(parse(&format!("{z} {b} odd")).is_none());
        assert!(parse("garbage").is_none());
    }
}
