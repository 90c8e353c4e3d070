//! What removing a session's worktree would lose: the one inspection every removal path uses.
//!
//! `cleanup`, `prune` and anything else that deletes a worktree ask [`inspect`] and remove nothing
//! while it reports a hazard (unless the user forced it, and then only after the archive holds
//! what it can). It reads ground truth, never the session record's idea of it:
//! - the branch tip against base (commits not in base);
//! - the worktree's own `HEAD` (its admin entry's `HEAD` file): detached, or on another branch,
//!   it may hold commits that no ref and not base holds, which die with the admin entry;
//! - an operation in progress (rebase, am, merge, cherry-pick, revert, bisect, a sequencer): the
//!   state files git keeps in the worktree's admin entry;
//! - uncommitted and untracked (not ignored) files;
//! - every submodule repository under the admin entry's `modules/` (initialised, or deinit'ed and
//!   kept): its uncommitted files, and commits reachable from its HEAD or local branches that are
//!   neither on one of its remote-tracking refs or tags nor the commit the superproject records;
//! - a `.git` link that points nowhere (then nothing can be judged: refuse);
//! - other processes working inside the worktree.
//!
//! Invariants a reader must not break:
//! - Anything that cannot be inspected is itself a hazard ([`Hazard::Uninspectable`]): deletion
//!   fails closed.
//! - The inspection only reads (libgit2 and the filesystem); it runs no program the repository
//!   names.

use crate::git::{self, Merged, Repo};
use crate::process::{self, Occupant};
use crate::session::{self, State, Status};
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How deep nested submodules (`modules/a/modules/b/...`) are followed.
const MAX_MODULE_DEPTH: usize = 8;
/// How many commits a message lists before "... and N more".
const LIST_LIMIT: usize = 20;

/// A git operation the worktree is in the middle of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Rebase,
    Am,
    Merge,
    CherryPick,
    Revert,
    Bisect,
    Sequencer,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Rebase => "rebase",
            Operation::Am => "am",
            Operation::Merge => "merge",
            Operation::CherryPick => "cherry-pick",
            Operation::Revert => "revert",
            Operation::Bisect => "bisect",
            Operation::Sequencer => "cherry-pick/revert sequence",
        }
    }

    /// The git command that finishes or abandons it.
    fn way_out(self) -> &'static str {
        match self {
            Operation::Rebase => "git rebase --continue or --abort",
            Operation::Am => "git am --continue or --abort",
            Operation::Merge => "git merge --continue or --abort",
            Operation::CherryPick | Operation::Sequencer => "git cherry-pick --continue or --abort",
            Operation::Revert => "git revert --continue or --abort",
            Operation::Bisect => "git bisect reset",
        }
    }
}

/// The operations in progress in the worktree whose admin directory is `admin`.
pub fn operations(admin: &Path) -> Vec<Operation> {
    let mut out = Vec::new();
    if admin.join("rebase-merge").is_dir() {
        out.push(Operation::Rebase);
    }
    if admin.join("rebase-apply").is_dir() {
        out.push(if admin.join("rebase-apply/applying").exists() {
            Operation::Am
        } else {
            Operation::Rebase
        });
    }
    for (file, op) in [
        ("MERGE_HEAD", Operation::Merge),
        ("CHERRY_PICK_HEAD", Operation::CherryPick),
        ("REVERT_HEAD", Operation::Revert),
        ("BISECT_LOG", Operation::Bisect),
    ] {
        if admin.join(file).exists() {
            out.push(op);
        }
    }
    if admin.join("sequencer").is_dir()
        && !out.contains(&Operation::CherryPick)
        && !out.contains(&Operation::Revert)
    {
        out.push(Operation::Sequencer);
    }
    out
}

/// What a worktree's `HEAD` file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// `ref: <full ref name>`.
    Branch(String),
    Detached(Oid),
}

/// Reads `<admin>/HEAD` as git wrote it (a symlinked HEAD is read through, as git does).
pub fn read_head(admin: &Path) -> Result<Head> {
    let path = admin.join("HEAD");
    let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&text);
    let text = text.trim();
    if let Some(target) = text.strip_prefix("ref:") {
        return Ok(Head::Branch(target.trim().to_string()));
    }
    Oid::from_str(text)
        .map(Head::Detached)
        .map_err(|_| anyhow::anyhow!("{} holds neither a ref nor a commit id", path.display()))
}

/// Commits at risk in one submodule repository.
#[derive(Debug, Clone)]
pub struct SubmoduleRisk {
    /// Its path relative to the worktree (its name under `modules/` when not checked out).
    pub path: String,
    /// Its git directory (under the worktree's admin entry).
    pub gitdir: PathBuf,
    /// Tips whose history holds the commits below (HEAD and local branches).
    pub tips: Vec<Oid>,
    /// Commits no remote-tracking ref, tag or recorded commit holds, newest first.
    pub commits: Vec<(Oid, String)>,
    /// Uncommitted and untracked files of its checked-out worktree, relative to it.
    pub dirty: Vec<String>,
}

/// One reason the worktree may not be removed without `--force`.
#[derive(Debug, Clone)]
pub enum Hazard {
    /// The session branch has commits not in base.
    Unmerged {
        branch: String,
        base: String,
        total: usize,
        commits: Vec<(Oid, String)>,
    },
    /// The worktree's HEAD (detached), its HEAD reflog or its per-worktree refs hold commits no
    /// ref or base holds.
    Head {
        head: Option<Oid>,
        commits: Vec<(Oid, String)>,
    },
    Operation(Operation),
    Dirty(Vec<String>),
    Submodule(SubmoduleRisk),
    /// The worktree's `.git` link points at no admin entry of this repository.
    BrokenLink(String),
    /// Something that had to be looked at could not be: refusing is the only safe answer.
    Uninspectable(String),
    Occupied(Vec<Occupant>),
}

impl Hazard {
    /// The lines a refusal shows: a summary, then indented detail.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Hazard::Unmerged {
                branch,
                base,
                total,
                commits,
            } => {
                out.push(format!(
                    "branch {branch} has {} not in {base}:",
                    crate::output::count(*total, "commit")
                ));
                push_commits(&mut out, commits, *total);
            }
            Hazard::Head { head, commits } => {
                let n = crate::output::count(commits.len(), "commit");
                out.push(match head {
                    Some(h) => format!(
                        "HEAD is detached at {} with {n} that no branch, tag or base holds:",
                        &h.to_string()[..10]
                    ),
                    None => format!(
                        "the worktree's HEAD reflog holds {n} that no branch, tag or base \
                         holds (made on a detached HEAD, then left):"
                    ),
                });
                push_commits(&mut out, commits, commits.len());
            }
            Hazard::Operation(op) => out.push(format!(
                "a {} is in progress (finish or abandon it: {})",
                op.as_str(),
                op.way_out()
            )),
            Hazard::Dirty(files) => {
                out.push(format!(
                    "worktree has {} uncommitted or untracked file{}:",
                    files.len(),
                    if files.len() == 1 { "" } else { "s" }
                ));
                push_list(&mut out, files);
            }
            Hazard::Submodule(s) => {
                if !s.commits.is_empty() {
                    out.push(format!(
                        "submodule {} has {} on no remote-tracking ref, tag or recorded commit:",
                        s.path,
                        crate::output::count(s.commits.len(), "commit")
                    ));
                    push_commits(&mut out, &s.commits, s.commits.len());
                }
                if !s.dirty.is_empty() {
                    out.push(format!(
                        "submodule {} has {} uncommitted or untracked file{}:",
                        s.path,
                        s.dirty.len(),
                        if s.dirty.len() == 1 { "" } else { "s" }
                    ));
                    push_list(&mut out, &s.dirty);
                }
            }
            Hazard::BrokenLink(what) => out.push(format!(
                "the worktree's .git link is broken ({what}); repair it with `git worktree repair`"
            )),
            Hazard::Uninspectable(what) => out.push(format!("cannot inspect {what}")),
            Hazard::Occupied(list) => {
                out.push(format!(
                    "{} working inside the worktree:",
                    if list.len() == 1 {
                        "1 process is".to_string()
                    } else {
                        format!("{} processes are", list.len())
                    }
                ));
                for o in list {
                    out.push(format!("    pid {}: {}", o.pid, o.command));
                }
            }
        }
        out
    }

    /// What keeps this work without `--force`: a command or step for this hazard alone, with the
    /// worktree's path (shell-quoted) where the step runs there. `None` for what `--force` cannot
    /// pass either (the refusal then says how to repair).
    pub fn remedy(&self, worktree: &str) -> Option<String> {
        Some(match self {
            Hazard::Unmerged { branch, base, .. } => {
                format!("merge it into {base} (git merge {branch}) or rebase it there")
            }
            Hazard::Head {
                head: Some(h),
                commits,
            } if !commits.is_empty() => format!(
                "put the detached commits on a branch (git -C {worktree} switch -c NAME {})",
                &h.to_string()[..10]
            ),
            Hazard::Head { commits, .. } => format!(
                "keep the listed commits on a branch (git branch NAME {})",
                commits
                    .first()
                    .map(|(id, _)| id.to_string()[..10].to_string())
                    .unwrap_or_else(|| "COMMIT".to_string())
            ),
            Hazard::Operation(op) => {
                format!("finish or abandon the {} ({})", op.as_str(), op.way_out())
            }
            Hazard::Dirty(_) => format!(
                "commit the files (git -C {worktree} add -A && git -C {worktree} commit) or                  remove them"
            ),
            Hazard::Submodule(s) if !s.commits.is_empty() => format!(
                "push submodule {}'s commits (git -C {worktree}/{} push)",
                s.path, s.path
            ),
            Hazard::Submodule(s) => format!(
                "commit or remove the files in submodule {} (git -C {worktree}/{} status)",
                s.path, s.path
            ),
            Hazard::Occupied(_) => {
                "stop those processes or move them out of the worktree".to_string()
            }
            Hazard::BrokenLink(_) | Hazard::Uninspectable(_) => return None,
        })
    }

    /// Whether `cleanup --force` may go past it (after archiving). A worktree that cannot be
    /// judged at all, or whose link is broken, is never removed: there is nothing sound to
    /// archive from.
    pub fn forceable(&self) -> bool {
        !matches!(self, Hazard::BrokenLink(_) | Hazard::Uninspectable(_))
    }

    /// A short phrase for one-line reports (`prune`'s "kept X: ...").
    pub fn summary(&self) -> String {
        match self {
            Hazard::Unmerged { total, base, .. } => {
                format!("{} not in {base}", crate::output::count(*total, "commit"))
            }
            Hazard::Head { commits, .. } => format!(
                "its HEAD or HEAD reflog holds {} that no ref holds",
                crate::output::count(commits.len(), "commit")
            ),
            Hazard::Operation(op) => format!("{} in progress", op.as_str()),
            Hazard::Dirty(files) => format!(
                "{} uncommitted or untracked",
                crate::output::count(files.len(), "file")
            ),
            Hazard::Submodule(s) => format!("submodule {} holds unpushed work", s.path),
            Hazard::BrokenLink(_) => "its .git link is broken".to_string(),
            Hazard::Uninspectable(what) => format!("cannot inspect {what}"),
            Hazard::Occupied(list) => match list.first() {
                Some(o) => format!("process {} ({}) works inside it", o.pid, o.command),
                None => "processes work inside it".to_string(),
            },
        }
    }
}

fn push_commits(out: &mut Vec<String>, commits: &[(Oid, String)], total: usize) {
    for (id, summary) in commits.iter().take(LIST_LIMIT) {
        out.push(format!("    {} {summary}", &id.to_string()[..10]));
    }
    let shown = commits.len().min(LIST_LIMIT);
    if total > shown {
        out.push(format!("    ... and {} more", total - shown));
    }
}

fn push_list(out: &mut Vec<String>, items: &[String]) {
    for f in items.iter().take(LIST_LIMIT) {
        out.push(format!("    {f}"));
    }
    if items.len() > LIST_LIMIT {
        out.push(format!("    ... and {} more", items.len() - LIST_LIMIT));
    }
}

/// Everything removing one session's worktree would lose, plus what an archive needs to hold it.
#[derive(Debug, Clone, Default)]
pub struct Hazards {
    pub items: Vec<Hazard>,
    /// The worktree's HEAD commit when it differs from the branch tip (an archive parent).
    pub head: Option<Oid>,
    /// Other tips only this worktree holds (its HEAD reflog, per-worktree refs): archive parents.
    pub reflog_tips: Vec<Oid>,
    /// The worktree's admin entry, when there is one.
    pub admin: Option<PathBuf>,
    /// Submodule repositories live under the admin entry: git removes such a worktree only
    /// when forced, so a user's `--force` must reach git (after the archive).
    pub has_modules: bool,
}

impl Hazards {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn lines(&self) -> Vec<String> {
        self.items.iter().flat_map(Hazard::lines).collect()
    }

    /// One hint for a refusal: each hazard's own remedy, once, in the order found, then what
    /// `--force` does instead.
    pub fn hint(&self, worktree: &Path) -> String {
        let path = crate::lifecycle::shell_quote(&worktree.display().to_string());
        let mut steps: Vec<String> = Vec::new();
        for step in self.items.iter().filter_map(|h| h.remedy(&path)) {
            if !steps.contains(&step) {
                steps.push(step);
            }
        }
        steps.push(
            "or pass --force to archive everything under refs/session-archive/ and remove it"
                .to_string(),
        );
        steps.join("; ")
    }

    /// The first hazard `--force` may not override, if any.
    pub fn unforceable(&self) -> Option<&Hazard> {
        self.items.iter().find(|h| !h.forceable())
    }

    pub fn submodules(&self) -> impl Iterator<Item = &SubmoduleRisk> {
        self.items.iter().filter_map(|h| match h {
            Hazard::Submodule(s) => Some(s),
            _ => None,
        })
    }
}

/// Inspects what removing the session's worktree (and its branch) would lose.
pub fn inspect(repo: &Repo, status: &Status) -> Hazards {
    let mut out = Hazards::default();
    let record = &status.record;
    if record.attached {
        // An attached session owns no worktree or branch: removing it deletes only its record.
        return out;
    }
    let missing = status.state == State::Missing;
    // A missing worktree's unmerged branch is kept, not removed, so it blocks nothing.
    if status.merged == Merged::No && !missing {
        if let (Some(tip), Some(base)) = (status.tip, status.base_tip) {
            match repo.unmerged_commits(tip, base, LIST_LIMIT) {
                Ok(commits) if !commits.is_empty() => out.items.push(Hazard::Unmerged {
                    branch: record.branch.clone(),
                    base: record.base.clone(),
                    total: status.ahead.max(commits.len()),
                    commits,
                }),
                Ok(_) => {}
                Err(e) => out.items.push(Hazard::Uninspectable(format!(
                    "the commits of {}: {e:#}",
                    record.branch
                ))),
            }
        }
    }
    // The admin entry: found through git's registry (works when the directory is gone, where
    // the admin entry, its HEAD and its submodules still sit), else through the `.git` link.
    let registered = git::worktree_entry(&repo.common_dir, &record.path).map(|e| e.admin);
    let linked = if record.path.is_dir() {
        session::admin_dir_of(&record.path)
    } else {
        None
    };
    if record.path.is_dir() {
        match &linked {
            Some(admin) if admin.is_dir() && admin.starts_with(&repo.common_dir) => {}
            Some(admin) => out.items.push(Hazard::BrokenLink(format!(
                "it points at {}, which {}",
                admin.display(),
                if admin.is_dir() {
                    "is not this repository's"
                } else {
                    "does not exist"
                }
            ))),
            None => out.items.push(Hazard::BrokenLink(
                "there is no readable .git file in it".to_string(),
            )),
        }
    }
    let admin = registered.or(linked).filter(|a| a.is_dir());
    out.admin = admin.clone();
    if let Some(admin) = &admin {
        head_hazard(repo, status, admin, &mut out);
        for op in operations(admin) {
            out.items.push(Hazard::Operation(op));
        }
        submodule_hazards(repo, status, admin, &mut out);
    }
    if !missing {
        if status.dirty_unknown {
            out.items.push(Hazard::Uninspectable(
                "the worktree's uncommitted files (see `git session info`)".to_string(),
            ));
        }
        if !status.dirty.is_empty() {
            out.items.push(Hazard::Dirty(status.dirty.clone()));
        }
        let occupants = process::occupants(&record.path);
        if !occupants.is_empty() {
            out.items.push(Hazard::Occupied(occupants));
        }
    }
    out
}

/// What an admin entry whose worktree directory is gone still holds: a detached HEAD with
/// commits no ref holds, or submodule repositories. `None` when removing it loses nothing.
pub fn admin_holds_work(repo: &Repo, admin: &Path) -> Option<String> {
    if !module_gitdirs(admin).is_empty() {
        return Some("it holds submodule repositories".to_string());
    }
    let Ok(Head::Detached(oid)) = read_head(admin) else {
        return None;
    };
    let held = (|| -> Result<bool> {
        let mut walk = repo.git.revwalk()?;
        hide_refs(&repo.git, &mut walk, &|_| true);
        Ok(walk_commits(&repo.git, walk, &[oid], 1)?.is_empty())
    })();
    match held {
        Ok(true) => None,
        Ok(false) => Some(format!(
            "its detached HEAD {} has commits no ref holds",
            &oid.to_string()[..10]
        )),
        Err(e) => Some(format!("its HEAD cannot be judged ({e:#})")),
    }
}

/// Every commit any ref of `repo` points at (peeled), plus extra tips to treat as held.
fn hide_refs(repo: &Repository, walk: &mut git2::Revwalk, only: &dyn Fn(&str) -> bool) {
    if let Ok(refs) = repo.references() {
        for r in refs.flatten() {
            if !r.name().is_some_and(only) {
                continue;
            }
            if let Ok(c) = r.peel_to_commit() {
                let _ = walk.hide(c.id());
            }
        }
    }
}

/// Commits reachable from `tips` but not hidden, newest first, at most `limit` (+ the count).
fn walk_commits(
    repo: &Repository,
    mut walk: git2::Revwalk,
    tips: &[Oid],
    limit: usize,
) -> Result<Vec<(Oid, String)>> {
    for t in tips {
        walk.push(*t)?;
    }
    git::summarize(repo, walk, limit)
}

/// The new values a reflog file records, newest last (at most the last `limit` lines).
fn reflog_new_ids(path: &Path, limit: usize) -> Vec<Oid> {
    let Ok(crate::store::StateBytes::Bytes(bytes, _)) =
        crate::store::read_state_bytes(path, 64 << 20)
    else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(limit);
    lines[from..]
        .iter()
        .filter_map(|l| l.split(' ').nth(1))
        .filter_map(|id| Oid::from_str(id).ok())
        .filter(|id| !id.is_zero())
        .collect()
}

/// Refs kept in the worktree's own admin entry (`refs/bisect/*`, `refs/worktree/*`, ...): they
/// go with it.
fn per_worktree_ref_ids(admin: &Path) -> Vec<Oid> {
    let mut out = Vec::new();
    let mut stack = vec![(admin.join("refs"), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && depth < MAX_MODULE_DEPTH {
                stack.push((e.path(), depth + 1));
            } else if kind.is_file() {
                if let Ok(text) = std::fs::read_to_string(e.path()) {
                    out.extend(Oid::from_str(text.trim()).ok());
                }
            }
        }
    }
    out
}

/// What only this worktree's admin entry holds: its detached HEAD, what its HEAD reflog recorded
/// (commits made on a detached HEAD, then left), its per-worktree refs. Commits a branch, tag,
/// other ref, base, another worktree's HEAD, or the session branch's own reflog (amended or
/// rebased away on purpose) holds are not at risk.
fn head_hazard(repo: &Repo, status: &Status, admin: &Path, out: &mut Hazards) {
    let head = match read_head(admin) {
        Ok(h) => h,
        Err(e) => {
            out.items
                .push(Hazard::Uninspectable(format!("the worktree's HEAD: {e:#}")));
            return;
        }
    };
    let detached = match head {
        Head::Detached(oid) => Some(oid),
        Head::Branch(_) => None,
    };
    if let Some(oid) = detached.filter(|o| Some(*o) != status.tip) {
        out.head = Some(oid);
    }
    let mut tips: Vec<Oid> = detached.into_iter().collect();
    tips.extend(reflog_new_ids(&admin.join("logs/HEAD"), 1000));
    tips.extend(per_worktree_ref_ids(admin));
    tips.sort();
    tips.dedup();
    if tips.is_empty() {
        return;
    }
    let branch_log = repo
        .common_dir
        .join("logs/refs/heads")
        .join(&status.record.branch);
    let result = (|| -> Result<Vec<(Oid, String)>> {
        let mut walk = repo.git.revwalk()?;
        hide_refs(&repo.git, &mut walk, &|_| true);
        if let Some(base) = status.base_tip {
            walk.hide(base)?;
        }
        for id in reflog_new_ids(&branch_log, 10_000) {
            let _ = walk.hide(id);
        }
        // Another worktree's HEAD holds what it points at; removing this one does not lose it.
        for w in git::linked_worktrees(&repo.common_dir) {
            if w.admin != admin {
                if let Ok(Head::Detached(other)) = read_head(&w.admin) {
                    let _ = walk.hide(other);
                }
            }
        }
        let present: Vec<Oid> = tips
            .iter()
            .copied()
            .filter(|t| repo.git.find_commit(*t).is_ok())
            .collect();
        walk_commits(&repo.git, walk, &present, 1000)
    })();
    match result {
        Ok(commits) if commits.is_empty() => {}
        Ok(commits) => {
            // The archive keeps every tip that is itself one of those commits.
            out.reflog_tips = tips
                .iter()
                .copied()
                .filter(|t| Some(*t) != detached && commits.iter().any(|(c, _)| c == t))
                .take(64)
                .collect();
            out.items.push(Hazard::Head {
                head: detached,
                commits,
            })
        }
        Err(e) => out.items.push(Hazard::Uninspectable(format!(
            "what the worktree's HEAD holds: {e:#}"
        ))),
    }
}

/// Git directories of submodules under `<admin>/modules`, with their names (their paths under
/// `modules/`, nested ones joined by `/modules/`), depth-limited.
fn module_gitdirs(admin: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut stack = vec![(admin.join("modules"), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if !kind.is_dir() {
                continue;
            }
            let path = entry.path();
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if path.join("HEAD").is_file() && path.join("objects").is_dir() {
                found.push((name.clone(), path.clone()));
                if depth + 1 < MAX_MODULE_DEPTH {
                    stack.push((path.join("modules"), format!("{name}/"), depth + 1));
                }
            } else if depth + 1 < MAX_MODULE_DEPTH {
                // Submodule names may hold slashes: `modules/lib/a` for the submodule "lib/a".
                stack.push((path, format!("{name}/"), depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// The commit ids the superproject worktree records for gitlinks (HEAD's tree and the index),
/// keyed by nothing: any recorded commit counts as held for any submodule.
fn recorded_gitlinks(worktree_head: Option<Oid>, repo: &Repo, admin: &Path) -> BTreeSet<Oid> {
    let mut out = BTreeSet::new();
    if let Some(head) = worktree_head {
        if let Ok(tree) = repo.git.find_commit(head).and_then(|c| c.tree()) {
            let _ = tree.walk(git2::TreeWalkMode::PreOrder, |_, entry| {
                if entry.filemode() == 0o160000 {
                    out.insert(entry.id());
                }
                git2::TreeWalkResult::Ok
            });
        }
    }
    let index_path = admin.join("index");
    let index = crate::status::fit_for_libgit2(&index_path)
        .and_then(|()| git2::Index::open(&index_path).map_err(anyhow::Error::from));
    if let Ok(index) = index {
        for e in index.iter() {
            if e.mode == 0o160000 {
                out.insert(e.id);
            }
        }
    }
    out
}

fn submodule_hazards(repo: &Repo, status: &Status, admin: &Path, out: &mut Hazards) {
    let modules = module_gitdirs(admin);
    if modules.is_empty() {
        return;
    }
    out.has_modules = true;
    let head = match read_head(admin) {
        Ok(Head::Detached(oid)) => Some(oid),
        Ok(Head::Branch(name)) => repo.ref_target(&name).ok().flatten(),
        Err(_) => status.tip,
    };
    let recorded = recorded_gitlinks(head, repo, admin);
    for (name, gitdir) in modules {
        match submodule_risk(&name, &gitdir, &recorded, &status.record.path) {
            Ok(Some(risk)) => out.items.push(Hazard::Submodule(risk)),
            Ok(None) => {}
            Err(e) => out
                .items
                .push(Hazard::Uninspectable(format!("submodule {name}: {e:#}"))),
        }
    }
}

fn submodule_risk(
    name: &str,
    gitdir: &Path,
    recorded: &BTreeSet<Oid>,
    worktree_root: &Path,
) -> Result<Option<SubmoduleRisk>> {
    let sub = Repository::open(gitdir).with_context(|| format!("opening {}", gitdir.display()))?;
    let mut tips = Vec::new();
    match read_head(gitdir) {
        Ok(Head::Detached(oid)) => tips.push(oid),
        // An unborn branch holds nothing; its commits, if any, are among the branches below.
        Ok(Head::Branch(r)) => tips.extend(sub.refname_to_id(&r).ok()),
        Err(_) => {}
    }
    for r in sub.references()?.flatten() {
        if r.name().is_some_and(|n| n.starts_with("refs/heads/")) {
            if let Ok(c) = r.peel_to_commit() {
                tips.push(c.id());
            }
        }
    }
    tips.sort();
    tips.dedup();
    let mut walk = sub.revwalk()?;
    hide_refs(&sub, &mut walk, &|n| {
        n.starts_with("refs/remotes/") || n.starts_with("refs/tags/")
    });
    for id in recorded {
        // A recorded commit this submodule does not have is simply not there to hide.
        if sub.find_commit(*id).is_ok() {
            walk.hide(*id)?;
        }
    }
    let commits = walk_commits(&sub, walk, &tips, 1000)?;
    let worktree = sub.workdir().map(Path::to_path_buf);
    let dirty = match worktree {
        // Only a checked-out submodule (its `.git` links back to this git dir) has files.
        Some(dir) if session::admin_dir_of(&dir).is_some_and(|a| same_dir(&a, gitdir)) => {
            crate::status::dirty_files(&dir)?
        }
        _ => Vec::new(),
    };
    if commits.is_empty() && dirty.is_empty() {
        return Ok(None);
    }
    // Shown as its path in the worktree when it has one there, else by its module name.
    let root = std::fs::canonicalize(worktree_root).unwrap_or_else(|_| worktree_root.into());
    let path = sub
        .workdir()
        .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()))
        .and_then(|w| {
            w.strip_prefix(&root)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| name.to_string());
    Ok(Some(SubmoduleRisk {
        path,
        gitdir: gitdir.to_path_buf(),
        tips,
        commits,
        dirty,
    }))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let ca = std::fs::canonicalize(a).unwrap_or_else(|_| a.to_path_buf());
    let cb = std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf());
    ca == cb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_read_from_state_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(operations(dir.path()).is_empty());
        std::fs::create_dir(dir.path().join("rebase-merge")).unwrap();
        std::fs::write(dir.path().join("BISECT_LOG"), "").unwrap();
        assert_eq!(
            operations(dir.path()),
            vec![Operation::Rebase, Operation::Bisect]
        );
        std::fs::create_dir(dir.path().join("rebase-apply")).unwrap();
        std::fs::write(dir.path().join("rebase-apply/applying"), "").unwrap();
        assert!(operations(dir.path()).contains(&Operation::Am));
    }

    #[test]
    fn head_file_forms() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("HEAD"), "ref: refs/heads/x\n").unwrap();
        assert_eq!(
            read_head(dir.path()).unwrap(),
            Head::Branch("refs/heads/x".into())
        );
        let id = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(dir.path().join("HEAD"), format!("{id}\n")).unwrap();
        assert_eq!(
            read_head(dir.path()).unwrap(),
            Head::Detached(Oid::from_str(id).unwrap())
        );
        std::fs::write(dir.path().join("HEAD"), "garbage").unwrap();
        assert!(read_head(dir.path()).is_err());
    }
}
