//! One walk per worktree while `list` gathers its sessions. Sessions attached to one worktree
//! (`create --attach`) have the same dirty files; walking the worktree once per session made 50
//! sessions attached to a 10k-file worktree cost 50 walks where `git status` costs one.
//!
//! Scope: only inside [`one_walk_per_worktree`], which `cli::gather::gather` wraps around its
//! inspection of every session (`prune` shares that gathering for its first look, then judges
//! each candidate again under its lock, outside any scope). Outside a scope every call walks.
//! Within one, the first call for a worktree walks it and every other call for it (concurrent
//! ones wait) gets the same answer, as if all its sessions had been inspected at that moment;
//! nothing outlives the scope, so no answer is older than the command that asked.
//!
//! Why a scope rather than a value handed down: the walk is called deep inside a session's
//! inspection, which `cleanup`, `info` and the worktree hook share with `list`, and only `list`
//! inspects many sessions at once.
//!
//! A worktree is known by its canonical path; one that cannot be canonicalised is walked on its
//! own. An error is shared as its message (`{:#}`), which is how callers show it.
//!
//! A scope also says how its walks find untracked names ([`Untracked`]): `list` opens it with
//! [`Untracked::AsGitStatus`], `prune`'s gathering with [`Untracked::FullWalk`] (what it gathers
//! decides removals); a scope opened inside another can only make the walks full.

use super::Untracked;
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

type Answer = std::result::Result<Vec<String>, String>;

/// The answers of one scope, by worktree and by how its untracked names were found.
#[derive(Default)]
struct Answers(Mutex<BTreeMap<Key, Arc<OnceLock<Answer>>>>);

/// A canonical worktree path, and whether its walk was the full one.
type Key = (PathBuf, bool);

impl Answers {
    /// The answer for `worktree`: `walk`'s, if no other call of this scope walked it first
    /// the same way.
    fn get(
        &self,
        worktree: &Path,
        untracked: Untracked,
        walk: impl FnOnce(&Path, Untracked) -> Result<Vec<String>>,
    ) -> Result<Vec<String>> {
        let Ok(key) = std::fs::canonicalize(worktree) else {
            return walk(worktree, untracked);
        };
        let key = (key, untracked == Untracked::FullWalk);
        let cell = lock(&self.0).entry(key).or_default().clone();
        cell.get_or_init(|| walk(worktree, untracked).map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(|message| anyhow!(message))
    }
}

/// The open scope: how many are open (nested), how untracked names are found (the full walk as
/// soon as any open scope asks for it), and the answers.
static SCOPE: Mutex<Option<(usize, Untracked, Arc<Answers>)>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing is left half-done under these locks, so a panic elsewhere cannot poison the data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` with one walk per distinct worktree: within it, `status::dirty_files` of a worktree
/// already walked (or being walked) returns that walk's answer. `untracked` says how the walks
/// find untracked names; a scope opened inside another can make its walks full, never less.
pub fn one_walk_per_worktree<T>(untracked: Untracked, f: impl FnOnce() -> T) -> T {
    struct Close;
    impl Drop for Close {
        fn drop(&mut self) {
            let mut scope = lock(&SCOPE);
            if let Some((open, _, _)) = scope.as_mut() {
                *open -= 1;
                if *open == 0 {
                    *scope = None;
                }
            }
        }
    }
    {
        let mut scope = lock(&SCOPE);
        match scope.as_mut() {
            Some((open, how, _)) => {
                *open += 1;
                if untracked == Untracked::FullWalk {
                    *how = Untracked::FullWalk;
                }
            }
            None => *scope = Some((1, untracked, Arc::default())),
        }
    }
    let _close = Close;
    f()
}

/// `walk(worktree)`, or, within a scope, the answer of the scope's one walk of that worktree.
pub(super) fn dirty_files(
    worktree: &Path,
    walk: impl FnOnce(&Path, Untracked) -> Result<Vec<String>>,
) -> Result<Vec<String>> {
    let scope = lock(&SCOPE)
        .as_ref()
        .map(|(_, how, a)| (*how, Arc::clone(a)));
    match scope {
        Some((how, answers)) => answers.get(worktree, how, walk),
        None => walk(worktree, Untracked::FullWalk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counting<'a>(
        walks: &'a AtomicUsize,
        answer: &'a str,
    ) -> impl FnOnce(&Path, Untracked) -> Result<Vec<String>> + 'a {
        move |_, _| {
            walks.fetch_add(1, Ordering::SeqCst);
            // Long enough for the other threads to arrive while the walk runs.
            std::thread::sleep(std::time::Duration::from_millis(20));
            if answer.is_empty() {
                Err(anyhow!("unreadable")).map_err(|e| e.context("its files"))
            } else {
                Ok(vec![answer.to_string()])
            }
        }
    }

    #[test]
    fn each_worktree_is_walked_once_whoever_asks() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(a.join("sub")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let walks = AtomicUsize::new(0);
        let shared = Answers::default();
        let answers: Vec<Vec<String>> = std::thread::scope(|t| {
            let threads: Vec<_> = (0..8)
                .map(|i| {
                    // The same worktree, spelled two ways, asked for at the same time.
                    let path = if i % 2 == 0 {
                        a.clone()
                    } else {
                        a.join("sub/..")
                    };
                    let (walks, shared) = (&walks, &shared);
                    t.spawn(move || {
                        shared
                            .get(&path, Untracked::FullWalk, counting(walks, "x"))
                            .unwrap()
                    })
                })
                .collect();
            threads.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(walks.load(Ordering::SeqCst), 1);
        assert!(answers.iter().all(|a| a == &["x".to_string()]));

        // Another worktree is another walk; an error is shared as its message.
        for _ in 0..3 {
            let e = shared
                .get(&b, Untracked::FullWalk, counting(&walks, ""))
                .unwrap_err();
            assert_eq!(format!("{e:#}"), "its files: unreadable");
        }
        assert_eq!(walks.load(Ordering::SeqCst), 2);

        // A path that cannot be canonicalised is walked every time.
        let gone = dir.path().join("gone");
        for _ in 0..2 {
            shared
                .get(&gone, Untracked::FullWalk, counting(&walks, "x"))
                .unwrap();
        }
        assert_eq!(walks.load(Ordering::SeqCst), 4);
    }
}
