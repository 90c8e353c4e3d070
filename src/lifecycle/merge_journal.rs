//! The write-ahead record of a merge (`merges/<label>.toml` in the store), and the recovery of a
//! merge whose process died between its steps ([`recover_merges`], run by every command that
//! runs [`super::recover_interrupted`]).
//!
//! A merge changes up to four things, in this order: the base ref, the index and files of the
//! worktree where the base is checked out, the session ref (rebase and squash only) and the
//! session's worktree. Before the first, [`Journal::begin`] records each move (ref, from, to,
//! worktree); after the last (or after every step was undone), [`Journal::end`] removes the
//! record. A record whose owner is provably dead (pid, start time, host) is judged from git's
//! own state, under the session's op lock:
//! - the base ref still at its `from`: nothing moved (the steps are undone in reverse order, so
//!   an undo that got as far as the base ref undid everything): the record goes, "rolled back";
//! - the base ref at its `to`: the merge happened; each later move is completed where that is
//!   safe: a ref still at its `from` is moved by compare-and-swap, and a worktree whose index and
//!   files are exactly `from`'s in every path the move changes, and whose other uncommitted
//!   changes are in the paths the record lists as dirty when the merge began (as the merge
//!   allowed), is brought to `to` with `git read-tree -m -u` (which refuses rather than
//!   overwrite, and keeps those changes); one whose index is exactly `from`'s and
//!   whose differing files are each exactly as `to` has them (that checkout, killed part way) is
//!   finished with `git read-tree --reset -u <to>`. A worktree that holds anything else (edits
//!   made since, a `git read-tree` still running, an index lock) is never touched: it
//!   is reported with the command that finishes it, and the record stays until its index holds
//!   the merge (or the ref moved on), so the next command says it again;
//! - the base ref anywhere else: someone moved it since; nothing is done, the record goes, and
//!   that is said.
//!
//! Invariants: a record is written before the first ref moves and removed only after the last
//! step (or its undo); a record of a live owner (or one whose liveness cannot be told, or from
//! another host) is never acted on; recovery moves refs through libgit2 (no program the
//! repository names runs under a read-only command) and never writes a file git would refuse to.

use crate::base::announce::{self, Announcement};
use crate::base::process::{Liveness, ProcessId};
use crate::git::{Oid, Repo, Run};
use crate::session::Label;
use crate::store::Store;
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One ref a merge moves, and the worktree that has it checked out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    /// `refs/heads/<branch>`.
    pub name: String,
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    /// The paths of `worktree` with uncommitted changes when the merge began (none of them a path
    /// the move changes): recovery lets exactly these through, and calls any other change one
    /// made since.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirty: Vec<String>,
}

/// What a running merge is about to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub label: String,
    pub owner: ProcessId,
    /// In the order the merge makes them; the first is the base.
    pub moves: Vec<Move>,
}

fn store_path(label: &Label) -> String {
    format!("merges/{}.toml", label.file_name())
}

impl Journal {
    /// Records the moves before the first of them is made.
    pub fn begin(store: &Store, label: &Label, moves: Vec<Move>) -> Result<()> {
        let journal = Journal {
            label: label.to_string(),
            owner: ProcessId::current(),
            moves,
        };
        store.update::<Journal, _>(&store_path(label), |_| Ok(Some(journal)))?;
        Ok(())
    }

    /// The merge is over (done, or every step undone).
    pub fn end(store: &Store, label: &Label) -> Result<()> {
        store.remove(&store_path(label))
    }
}

/// What recovery found a worktree of a move to be.
enum Tree {
    /// Its index holds the merge's side of every path the move changes.
    Done,
    /// Exactly the tree of `from`, index and files: safe to bring forward.
    Before,
    /// The index is `from`'s, and every file that differs is as `to` has it: a checkout from
    /// `from` to `to` killed part way. Safe to finish with `git read-tree --reset -u <to>`.
    CutShort,
    /// Anything else, said in words.
    Changed(String),
}

fn short(hex: &str) -> String {
    hex.chars().take(12).collect()
}

fn branch_of(name: &str) -> String {
    name.strip_prefix("refs/heads/").unwrap_or(name).to_string()
}

/// What git prints NUL-separated (`-z`) for `args` in `dir`, one name each.
pub(super) fn names(dir: &Path, args: &[&str]) -> Result<Vec<String>> {
    let out = Run::new(dir, args.iter().copied())
        .deadline(Duration::from_secs(300))
        .run()
        .map_err(|e| anyhow!("git {} in {}: {e}", args.join(" "), dir.display()))?;
    Ok(out
        .stdout
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// One path the move changes: its blob (and mode) in `from` and in `to`; `None` where that side
/// has no such path.
struct Changed {
    path: String,
    from: Option<(String, String)>,
    to: Option<(String, String)>,
}

/// `git diff --raw -z <from> <to>`: every path the move changes.
fn changes(wt: &Path, m: &Move) -> Result<Vec<Changed>> {
    let fields = names(
        wt,
        &[
            "diff",
            "--raw",
            "-z",
            "--no-abbrev",
            "--no-renames",
            &m.from,
            &m.to,
        ],
    )?;
    let mut out = Vec::new();
    for pair in fields.chunks(2) {
        let [meta, path] = pair else { break };
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [from_mode, to_mode, from_id, to_id, _status] = parts[..] else {
            return Err(anyhow!("git diff --raw printed {meta:?}"));
        };
        let side = |mode: &str, id: &str| {
            (!id.bytes().all(|b| b == b'0')).then(|| (mode.to_string(), id.to_string()))
        };
        out.push(Changed {
            path: path.clone(),
            from: side(from_mode, from_id),
            to: side(to_mode, to_id),
        });
    }
    Ok(out)
}

/// Where the worktree at `wt` stands against the move (see [`Tree`]).
fn judge_tree(wt: &Path, m: &Move) -> Result<Tree> {
    let Some(admin) = crate::session::admin_dir_of(wt) else {
        return Ok(Tree::Changed("is no worktree of this repository".into()));
    };
    let head = crate::git::read_head(&admin).ok();
    if head != Some(crate::git::Head::Branch(m.name.clone())) {
        return Ok(Tree::Changed(format!(
            "is no longer on {}",
            branch_of(&m.name)
        )));
    }
    if admin.join("index.lock").exists() {
        return Ok(Tree::Changed(format!(
            "has its index locked ({})",
            admin.join("index.lock").display()
        )));
    }
    let changed = changes(wt, m)?;
    let off_to = names(
        wt,
        &["diff-index", "--cached", "--name-only", "-z", &m.to, "--"],
    )?;
    if !changed.iter().any(|c| off_to.contains(&c.path)) {
        return Ok(Tree::Done);
    }
    // Uncommitted changes to paths the move does not change were let through by the merge (git's
    // rule for `read-tree -m -u`), and that step keeps them; those to paths it changes were not.
    let off_from = names(
        wt,
        &["diff-index", "--cached", "--name-only", "-z", &m.from, "--"],
    )?;
    if changed.iter().any(|c| off_from.contains(&c.path)) {
        return Ok(Tree::Changed("has changes made since".into()));
    }
    let off_index = names(wt, &["diff", "--no-ext-diff", "--name-only", "-z"])?;
    let since = off_from
        .iter()
        .chain(&off_index)
        .any(|p| !m.dirty.contains(p) && !changed.iter().any(|c| &c.path == p));
    if since {
        return Ok(Tree::Changed("has changes made since".into()));
    }
    let added_on_disk = changed.iter().any(|c| {
        c.from.is_none()
            && !off_index.contains(&c.path)
            && std::fs::symlink_metadata(wt.join(&c.path)).is_ok()
    });
    if !added_on_disk && !changed.iter().any(|c| off_index.contains(&c.path)) {
        return Ok(Tree::Before);
    }
    // `--reset` rewrites every file that differs from the index: only when nothing but the cut
    // checkout differs.
    if off_from.is_empty() && checkout_cut_short(wt, &changed, &off_index)? {
        return Ok(Tree::CutShort);
    }
    Ok(Tree::Changed("has changes made since".into()))
}

/// Whether the worktree's files are those of a `git read-tree -m -u <from> <to>` killed part way
/// (its index still that of `from`): every file that differs from the index is a path the move
/// changes, and each such path, and each path the move adds, is absent or exactly as `to` has
/// it (regular files only).
fn checkout_cut_short(wt: &Path, changed: &[Changed], off_index: &[String]) -> Result<bool> {
    let mut to_check: Vec<(&str, &str)> = Vec::new();
    for path in off_index {
        let Some(c) = changed.iter().find(|c| &c.path == path) else {
            return Ok(false);
        };
        let present = std::fs::symlink_metadata(wt.join(path)).is_ok();
        match (&c.to, present) {
            (None, false) => {}
            (None, true) | (Some(_), false) => return Ok(false),
            (Some((mode, id)), true) if mode.starts_with("100") => to_check.push((path, id)),
            (Some(_), true) => return Ok(false),
        }
    }
    for c in changed.iter().filter(|c| c.from.is_none()) {
        let present = std::fs::symlink_metadata(wt.join(&c.path));
        match (&c.to, present) {
            (_, Err(_)) => {}
            (Some((mode, id)), Ok(meta)) if mode.starts_with("100") && meta.is_file() => {
                if !to_check.iter().any(|(p, _)| *p == c.path) {
                    to_check.push((&c.path, id));
                }
            }
            _ => return Ok(false),
        }
    }
    if to_check.is_empty() {
        return Ok(true);
    }
    let list: String = to_check.iter().map(|(p, _)| format!("{p}\n")).collect();
    let out = Run::new(wt, ["hash-object", "--stdin-paths"])
        .stdin(list.into_bytes())
        .deadline(Duration::from_secs(300))
        .run()
        .map_err(|e| anyhow!("git hash-object in {}: {e}", wt.display()))?;
    let ids: Vec<&str> = out.stdout.lines().collect();
    Ok(ids.len() == to_check.len() && ids.iter().zip(&to_check).all(|(a, (_, b))| a == b))
}

/// What recovery did with one journal.
enum Verdict {
    Undone,
    Completed(Vec<PathBuf>),
    /// Left for the user: the worktree, the move, and why; the journal stays.
    Left(PathBuf, Move, String),
    /// The base moved elsewhere since: nothing done, the journal goes.
    Moved(String, Oid),
}

/// Completes or undoes every merge whose process died (see the module doc), saying which in one
/// line each.
pub fn recover_merges(repo: &Repo, store: &Store) -> Result<()> {
    // A check's scratch worktree first: its merge never moved anything while it ran.
    super::merge_check::recover(repo, store)?;
    for name in store.list("merges")? {
        let Ok(label) = Label::from_file_name(&name) else {
            continue;
        };
        let rel = store_path(&label);
        let Some(journal) = store.read::<Journal>(&rel)? else {
            continue;
        };
        if journal.owner.liveness() != Liveness::Dead {
            continue;
        }
        // The dead merge's op lock is broken on the way (its owner is dead); a live one is busy.
        let Some(_op) = super::lock_session_op(store, &label, Duration::from_secs(2))? else {
            continue;
        };
        let Some(journal) = store.read::<Journal>(&rel)? else {
            continue;
        };
        if journal.owner.liveness() != Liveness::Dead || journal.moves.is_empty() {
            continue;
        }
        let base = branch_of(&journal.moves[0].name);
        let label_s = label.to_string();
        // A git that fails here must not fail every command: said, and judged again next time.
        let verdict = match judge(repo, &journal) {
            Ok(verdict) => verdict,
            Err(e) => {
                let m = journal.moves[0].clone();
                let worktree = m
                    .worktree
                    .clone()
                    .unwrap_or_else(|| repo.common_dir.clone());
                Verdict::Left(worktree, m, format!("could not be judged ({e:#})"))
            }
        };
        match verdict {
            Verdict::Undone => {
                Journal::end(store, &label)?;
                store.audit("merge-undone", serde_json::json!({"label": label_s}));
                announce::emit(Announcement::MergeUndone {
                    label: label_s,
                    base,
                });
            }
            Verdict::Completed(worktrees) => {
                Journal::end(store, &label)?;
                let tip = short(&journal.moves[0].to);
                store.audit(
                    "merge-completed",
                    serde_json::json!({"label": label_s, "tip": journal.moves[0].to}),
                );
                announce::emit(Announcement::MergeCompleted {
                    label: label_s,
                    base,
                    tip,
                    worktrees,
                });
            }
            Verdict::Left(worktree, m, why) => announce::emit(Announcement::MergeLeft {
                label: label_s,
                branch: branch_of(&m.name),
                worktree,
                from: m.from,
                to: m.to,
                why,
            }),
            Verdict::Moved(branch, at) => {
                Journal::end(store, &label)?;
                store.audit(
                    "merge-abandoned",
                    serde_json::json!({"label": label_s, "branch": branch, "at": at.to_string()}),
                );
                announce::emit(Announcement::MergeOvertaken {
                    label: label_s,
                    branch,
                    at: short(&at.to_string()),
                });
            }
        }
    }
    Ok(())
}

/// Decides and carries out the recovery of one dead merge.
fn judge(repo: &Repo, journal: &Journal) -> Result<Verdict> {
    let base = &journal.moves[0];
    let (base_from, base_to) = (Oid::from_str(&base.from)?, Oid::from_str(&base.to)?);
    match repo.ref_target(&base.name)? {
        Some(at) if at == base_from => return Ok(Verdict::Undone),
        Some(at) if at == base_to => {}
        Some(at) => return Ok(Verdict::Moved(branch_of(&base.name), at)),
        None => return Ok(Verdict::Moved(branch_of(&base.name), Oid::zero())),
    }
    let why = format!(
        "git-session: completing the interrupted merge of session {}",
        journal.label
    );
    let mut updated = Vec::new();
    for m in &journal.moves {
        let (from, to) = (Oid::from_str(&m.from)?, Oid::from_str(&m.to)?);
        match repo.ref_target(&m.name)? {
            Some(at) if at == to => {}
            Some(at) if at == from => repo.move_ref_quietly(&m.name, from, to, &why)?,
            Some(at) => return Ok(Verdict::Moved(branch_of(&m.name), at)),
            None => return Ok(Verdict::Moved(branch_of(&m.name), Oid::zero())),
        }
        let Some(wt) = m.worktree.as_ref().filter(|w| w.is_dir()) else {
            continue;
        };
        match judge_tree(wt, m)? {
            Tree::Done => {}
            tree @ (Tree::Before | Tree::CutShort) => {
                // Before: `read-tree -m -u` (which refuses rather than overwrite); a checkout cut
                // short: finished with `--reset`, every differing file being the merge's already.
                let args: Vec<&str> = match tree {
                    Tree::Before => vec!["read-tree", "-m", "-u", &m.from, &m.to],
                    _ => vec!["read-tree", "--reset", "-u", &m.to],
                };
                let out = Run::new(wt, args).deadline(Duration::from_secs(3600)).run();
                if let Err(e) = out {
                    return Ok(Verdict::Left(
                        wt.clone(),
                        m.clone(),
                        format!("refused: {e}"),
                    ));
                }
                updated.push(wt.clone());
            }
            Tree::Changed(why) => return Ok(Verdict::Left(wt.clone(), m.clone(), why)),
        }
    }
    Ok(Verdict::Completed(updated))
}
