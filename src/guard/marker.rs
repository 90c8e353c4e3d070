//! The marker the pre-commit leaves in the worktree's git directory for the post-commit: the
//! parent it checked against, a digest and the list of the paths it checked, and the session
//! whose claims are in flight for that commit: three lines, then each checked path followed by
//! a NUL.
//!
//! Invariant: advisory. A missing or torn marker only makes the post-commit check the whole
//! commit (and leaves the claims in flight to be judged by HEAD and the git process).

use crate::git::{Oid, Repo};

/// The marker file the pre-commit leaves in the worktree's git directory.
pub(super) const MARKER: &str = "git-session-guard";

/// A marker larger than this is not one the pre-commit wrote (it lists the checked paths).
pub(super) const MAX_MARKER: u64 = 64 << 20;

/// A digest of a set of changed paths, to recognise the same change in post-commit: 64 bits
/// over the paths, each followed by a NUL, taken eight bytes at a time (a rotate, an xor and a
/// multiply each; the tail zero-padded and the length mixed in last). The marker is advisory (a
/// mismatch only makes post-commit check the commit itself), so a fast hash is enough: a
/// cryptographic one, and then a byte-at-a-time one, each cost a noticeable share of the hook
/// on a thousand staged paths.
pub fn fingerprint(paths: &[String]) -> String {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let (mut word, mut filled, mut len) = ([0u8; 8], 0usize, 0u64);
    for p in paths {
        for chunk in [p.as_bytes(), &[0]] {
            let mut rest = chunk;
            len += rest.len() as u64;
            while !rest.is_empty() {
                let take = (8 - filled).min(rest.len());
                word[filled..filled + take].copy_from_slice(&rest[..take]);
                (filled, rest) = (filled + take, &rest[take..]);
                if filled == 8 {
                    hash = mix(hash, u64::from_le_bytes(word));
                    filled = 0;
                }
            }
        }
    }
    if filled > 0 {
        word[filled..].fill(0);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    format!("{:016x}", mix(hash, len))
}

/// The marker: the commit's parent, the digest of the checked paths, the session whose claims
/// are in flight for it (or nothing), then the checked paths, escaped, one per line.
pub(super) fn marker_text(parent: Option<Oid>, paths: &[String], claimed: Option<&str>) -> String {
    let parent = parent.map(|o| o.to_string()).unwrap_or_default();
    let fingerprint = fingerprint(paths);
    let claimed = claimed.unwrap_or("");
    let size = paths.iter().map(|p| p.len() + 1).sum::<usize>();
    let mut text =
        String::with_capacity(parent.len() + fingerprint.len() + claimed.len() + 3 + size);
    for line in [&parent, &fingerprint, claimed] {
        text.push_str(line);
        text.push('\n');
    }
    // NUL-terminated: the one byte no path holds, so no path is escaped (the guard's marker is
    // written on every commit, for every staged path).
    for p in paths {
        text.push_str(p);
        text.push('\0');
    }
    text
}

/// The marker as the post-commit reads it.
pub(super) struct Marker {
    pub parent: String,
    pub fingerprint: String,
    pub claimed: Option<String>,
    pub paths: Vec<String>,
}

pub(super) fn parse_marker(text: &str) -> Option<Marker> {
    let mut parts = text.splitn(4, '\n');
    let parent = parts.next()?.to_string();
    let fingerprint = parts.next()?.to_string();
    let claimed = Some(parts.next()?.to_string()).filter(|l| !l.is_empty());
    let paths = parts
        .next()?
        .split_terminator('\0')
        .map(str::to_string)
        .collect();
    Some(Marker {
        parent,
        fingerprint,
        claimed,
        paths,
    })
}

/// Best effort: without it, post-commit checks the commit itself, which is only slower.
pub(super) fn write_marker(
    repo: &Repo,
    head: Option<Oid>,
    staged: &[String],
    claimed: Option<&str>,
) {
    let text = marker_text(head, staged, claimed);
    let path = repo.gitdir().join(MARKER);
    // Overwrite in place and shorten only when needed: truncating an existing file costs a
    // journal transaction, a noticeable share of a commit hook that must cost about as much as
    // starting a process. The marker is advisory; a torn one only makes post-commit re-check.
    // Never through a symlink, and never waiting on a FIFO someone put there: then there is
    // simply no marker.
    use std::os::unix::fs::OpenOptionsExt;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&path)
        .and_then(|mut f| {
            use std::io::Write;
            let before = f.metadata()?;
            if !before.is_file() {
                return Err(std::io::ErrorKind::InvalidInput.into());
            }
            f.write_all(text.as_bytes())?;
            // Written from the start, the file is now as long as the longer of the two texts.
            if before.len() > text.len() as u64 {
                f.set_len(text.len() as u64)?;
            }
            Ok(())
        });
    let _ = written;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same paths, same digest; moving a boundary between paths, reordering, adding an empty
    /// path or a byte across a word boundary gives another.
    #[test]
    fn the_digest_tells_path_sets_apart() {
        let set = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        let cases = [
            set(&[]),
            set(&[""]),
            set(&["", ""]),
            set(&["ab", "c"]),
            set(&["a", "bc"]),
            set(&["c", "ab"]),
            set(&["1234567"]),
            set(&["12345678"]),
            set(&["123456789"]),
            set(&["d0490/f049000.txt", "d0490/f049001.txt"]),
            set(&["d0490/f049001.txt", "d0490/f049000.txt"]),
        ];
        let digests: Vec<String> = cases.iter().map(|c| fingerprint(c)).collect();
        for (i, a) in digests.iter().enumerate() {
            assert_eq!(a.len(), 16);
            assert_eq!(*a, fingerprint(&cases[i]), "stable");
            for (j, b) in digests.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "{:?} and {:?}", cases[i], cases[j]);
            }
        }
    }

    #[test]
    fn the_marker_reads_back_what_was_checked() {
        let paths = vec![
            "a.txt".to_string(),
            "new\nline.txt".to_string(),
            "tab\there".to_string(),
        ];
        let parent = Oid::from_str("0123456789abcdef0123456789abcdef01234567").ok();
        for claimed in [None, Some("s1")] {
            let m = parse_marker(&marker_text(parent, &paths, claimed)).unwrap();
            assert_eq!(m.parent, "0123456789abcdef0123456789abcdef01234567");
            assert_eq!(m.fingerprint, fingerprint(&paths));
            assert_eq!(m.claimed.as_deref(), claimed);
            assert_eq!(m.paths, paths);
        }
        let m = parse_marker(&marker_text(None, &[], None)).unwrap();
        assert!(m.paths.is_empty() && m.parent.is_empty());
        assert!(parse_marker("only one line").is_none());
    }
}
