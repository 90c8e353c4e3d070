//! Integrating a session branch into its base branch, all or nothing (`git session merge`).
//!
//! Two phases:
//! - [`compute`] makes the result as new objects only: `git merge-tree --write-tree` for each
//!   tree and `git commit-tree` for each commit. No ref, index or file of any worktree changes,
//!   so a conflict, Ctrl-C or the deadline here leaves nothing to undo (unreferenced objects are
//!   git's ordinary garbage).
//! - [`apply`] moves the refs with compare-and-swap (`git update-ref <ref> <new> <old>`) and
//!   brings the worktrees where they are checked out along (`git read-tree -m -u <old> <new>`,
//!   which refuses to overwrite anything that is not the old tree). Every step has its inverse;
//!   when a step fails, or Ctrl-C or the deadline arrive between steps, the steps done are
//!   undone in reverse order. A step itself is never killed (a killed checkout leaves a
//!   worktree half written and its index locked); the deadline is checked around it.
//!
//! Invariants a reader must not break:
//! - Nothing outside [`apply`] writes a ref, an index or a worktree file.
//! - The new base tip always descends from the old one, so the base only ever moves forward.
//! - A ref moves only from the value the computation started from: a base or session branch
//!   that moved meanwhile makes the step fail, and everything done is rolled back.
//! - No rebase or merge state (`rebase-merge/`, `MERGE_HEAD`) is ever written: git's porcelain
//!   that would leave one is not used.

use super::count;
use super::raw_commit::author_and_message;
use super::LifecycleError;
use crate::base::failpoint::reach;
use crate::config::MergeStrategy;
use crate::git::{Oid, Run, RunError};
use anyhow::{anyhow, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What stops an integration between steps: Ctrl-C (or SIGTERM/SIGHUP) and the deadline.
pub struct Watch<'a> {
    pub interrupted: &'a AtomicBool,
    pub started: Instant,
    pub deadline: Duration,
}

/// Why a watched integration stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    Interrupted,
    TimedOut(Duration),
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::Interrupted => f.write_str("interrupted"),
            Stopped::TimedOut(d) => write!(f, "did not finish within {}", humantime_secs(*d)),
        }
    }
}

impl std::error::Error for Stopped {}

fn humantime_secs(d: Duration) -> String {
    format!("{}s", d.as_secs())
}

impl Watch<'_> {
    fn check(&self) -> Result<(), Stopped> {
        if self.interrupted.load(Ordering::SeqCst) {
            return Err(Stopped::Interrupted);
        }
        if self.started.elapsed() >= self.deadline {
            return Err(Stopped::TimedOut(self.deadline));
        }
        Ok(())
    }

    fn left(&self) -> Duration {
        self.deadline.saturating_sub(self.started.elapsed())
    }
}

/// A step of [`apply`] is never killed; this only bounds a git that hangs for good.
const STEP_LIMIT: Duration = Duration::from_secs(3600);

/// One git run of the computation: interruptible, within what is left of the deadline.
pub(super) fn compute_git(
    dir: &Path,
    args: &[&str],
    watch: &Watch,
    also_ok: Option<i32>,
) -> Result<String> {
    compute_git_with(dir, args, watch, |run| match also_ok {
        Some(code) => run.also_ok(code),
        None => run,
    })
}

/// [`compute_git`], the run shaped further by `shape` (its stdin, its environment).
pub(super) fn compute_git_with<'r>(
    dir: &'r Path,
    args: &[&str],
    watch: &'r Watch<'_>,
    shape: impl FnOnce(Run<'r>) -> Run<'r>,
) -> Result<String> {
    watch.check()?;
    let run = Run::new(dir, args.iter().copied())
        .deadline(watch.left())
        .interrupt(watch.interrupted);
    run_git(shape(run), args, watch)
}

fn run_git(run: Run, args: &[&str], watch: &Watch) -> Result<String> {
    match run.run() {
        Ok(out) if out.code == 0 => Ok(out.stdout),
        Ok(out) => Err(Conflicted(out.stdout).into()),
        Err(RunError::Interrupted) => Err(Stopped::Interrupted.into()),
        Err(RunError::TimedOut(_)) => Err(Stopped::TimedOut(watch.deadline).into()),
        Err(e) => Err(anyhow!("git {}: {e}", args.join(" "))),
    }
}

/// `git merge-tree` answered with conflicts (exit 1): its output.
#[derive(Debug)]
pub(super) struct Conflicted(pub(super) String);

impl std::fmt::Display for Conflicted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("conflicts")
    }
}

impl std::error::Error for Conflicted {}

/// What the session and its base are, as the merge starts.
pub struct Sides<'a> {
    /// Where git runs for the computation (any directory of the repository).
    pub dir: &'a Path,
    pub label: &'a str,
    /// Short names: `session/fix-login`, `main`.
    pub branch: &'a str,
    pub base: &'a str,
    pub tip: Oid,
    pub base_tip: Oid,
    /// `[merge] union` and `regenerate`: conflicts in these files are resolved, not refused.
    pub files: &'a crate::config::MergeFiles,
}

/// The computed result: the new base tip and how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computed {
    pub new_tip: Oid,
    /// The session branch must move to `new_tip` too (its commits were rewritten or squashed),
    /// so it counts as merged and its worktree continues from the result.
    pub move_session: bool,
    /// One line for the user: `fast-forward`, `2 commits rebased`, `merge commit`, ...
    pub how: String,
    /// Generated files (`[merge] regenerate`) that conflicted: `new_tip` holds the base's
    /// version; they are rebuilt on it before the check, in a commit of their own.
    pub regenerate: Vec<String>,
}

/// Makes the integration as new objects only (see the module doc). `Ok(None)`: the base already
/// holds everything of the session; nothing to do. A conflict is a refusal naming the paths.
pub fn compute(sides: &Sides, strategy: MergeStrategy, watch: &Watch) -> Result<Option<Computed>> {
    let (tip, base) = (sides.tip, sides.base_tip);
    if tip == base || is_ancestor(sides.dir, tip, base, watch)? {
        return Ok(None);
    }
    let fast_forward = is_ancestor(sides.dir, base, tip, watch)?;
    let mut regen = Vec::new();
    let computed = match strategy {
        MergeStrategy::Rebase if fast_forward => Computed {
            new_tip: tip,
            move_session: false,
            how: "fast-forward".to_string(),
            regenerate: Vec::new(),
        },
        MergeStrategy::Rebase => {
            let commits = lines(&compute_git(
                sides.dir,
                &[
                    "rev-list",
                    "--reverse",
                    "--topo-order",
                    "--no-merges",
                    "--right-only",
                    "--cherry-pick",
                    &format!("{base}...{tip}"),
                ],
                watch,
                None,
            )?);
            let mut current = base;
            let mut replayed = 0;
            for commit in &commits {
                let parent = format!("{commit}^");
                let ours = current.to_string();
                let tree = merge_tree(sides, Some(&parent), &ours, commit, &mut regen, watch)?;
                if tree == tree_of(sides.dir, &current.to_string(), watch)? {
                    continue;
                }
                let raw = compute_git(sides.dir, &["cat-file", "commit", commit], watch, None)?;
                let (author, message) = author_and_message(&raw)?;
                current =
                    commit_tree(sides.dir, &tree, &[current], &message, Some(&author), watch)?;
                replayed += 1;
            }
            if replayed == 0 {
                return Ok(None);
            }
            Computed {
                new_tip: current,
                move_session: true,
                how: format!(
                    "{} rebased onto {}, then fast-forward",
                    count(replayed, "commit"),
                    sides.base
                ),
                regenerate: regen,
            }
        }
        MergeStrategy::Merge => {
            let (b, t) = (base.to_string(), tip.to_string());
            let tree = merge_tree(sides, None, &b, &t, &mut regen, watch)?;
            let message = format!("Merge branch '{}' into {}\n", sides.branch, sides.base);
            Computed {
                new_tip: commit_tree(sides.dir, &tree, &[base, tip], &message, None, watch)?,
                move_session: false,
                how: "merge commit".to_string(),
                regenerate: regen,
            }
        }
        MergeStrategy::Squash => {
            let (b, t) = (base.to_string(), tip.to_string());
            let tree = merge_tree(sides, None, &b, &t, &mut regen, watch)?;
            if tree == tree_of(sides.dir, &base.to_string(), watch)? {
                return Ok(None);
            }
            let log = compute_git(
                sides.dir,
                &[
                    "log",
                    "--reverse",
                    "--no-merges",
                    "--format=%s",
                    &format!("{base}..{tip}"),
                ],
                watch,
                None,
            )?;
            let subjects = lines(&log);
            let mut message = format!(
                "Squash {} ({})\n\n",
                sides.branch,
                count(subjects.len(), "commit")
            );
            for s in &subjects {
                message.push_str(&format!("* {s}\n"));
            }
            Computed {
                new_tip: commit_tree(sides.dir, &tree, &[base], &message, None, watch)?,
                move_session: true,
                how: format!("{} squashed into one", count(subjects.len(), "commit")),
                regenerate: regen,
            }
        }
    };
    Ok(Some(computed))
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn is_ancestor(dir: &Path, ancestor: Oid, of: Oid, watch: &Watch) -> Result<bool> {
    let a = ancestor.to_string();
    let b = of.to_string();
    let args = ["merge-base", "--is-ancestor", &a, &b];
    match compute_git(dir, &args, watch, Some(1)) {
        Ok(_) => Ok(true),
        Err(e) if e.downcast_ref::<Conflicted>().is_some() => Ok(false),
        Err(e) => Err(e),
    }
}

fn tree_of(dir: &Path, commit: &str, watch: &Watch) -> Result<String> {
    let rev = format!("{commit}^{{tree}}");
    Ok(
        compute_git(dir, &["rev-parse", "--verify", "-q", &rev], watch, None)?
            .trim()
            .to_string(),
    )
}

/// `git merge-tree --write-tree -z --no-messages [--name-only] [--merge-base=B] OURS THEIRS`:
/// the one spelling of the merge every route computes (conflicted paths alone with
/// `name_only`, else with their stages).
pub(super) fn merge_tree_args(
    merge_base: Option<&str>,
    ours: &str,
    theirs: &str,
    name_only: bool,
) -> Vec<String> {
    let mut args = vec!["merge-tree", "--write-tree", "-z", "--no-messages"];
    if name_only {
        args.push("--name-only");
    }
    let mut args: Vec<String> = args.into_iter().map(str::to_string).collect();
    if let Some(b) = merge_base {
        args.push(format!("--merge-base={b}"));
    }
    args.push(ours.to_string());
    args.push(theirs.to_string());
    args
}

/// `git merge-tree --write-tree`: the merged tree, or a refusal naming the conflicted paths.
/// Conflicts only in `[merge] union` and `regenerate` files are resolved; the generated files
/// to rebuild are added to `regen`.
fn merge_tree(
    sides: &Sides,
    merge_base: Option<&str>,
    ours: &str,
    theirs: &str,
    regen: &mut Vec<String>,
    watch: &Watch,
) -> Result<String> {
    let args = merge_tree_args(merge_base, ours, theirs, true);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match compute_git(sides.dir, &args, watch, Some(1)) {
        Ok(out) => Ok(out.split('\0').next().unwrap_or("").trim().to_string()),
        Err(e) => match e.downcast::<Conflicted>() {
            Ok(Conflicted(out)) => {
                let mut paths: Vec<String> = out
                    .split('\0')
                    .skip(1)
                    .take_while(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect();
                paths.dedup();
                let (dir, files) = (sides.dir, sides.files);
                let resolved = super::merge_union::resolve(
                    dir, files, merge_base, ours, theirs, &paths, watch,
                )?;
                if let Some(r) = resolved {
                    for path in r.regenerate {
                        if !regen.contains(&path) {
                            regen.push(path);
                        }
                    }
                    return Ok(r.tree);
                }
                Err(conflict(sides, merge_base.map(|_| theirs), &paths, watch).into())
            }
            Err(e) => Err(e),
        },
    }
}

/// The refusal of a conflicting integration: the paths, and where to resolve them.
fn conflict(
    sides: &Sides,
    commit: Option<&str>,
    paths: &[String],
    watch: &Watch,
) -> LifecycleError {
    let at = commit
        .and_then(|c| {
            compute_git(
                sides.dir,
                &["log", "-1", "--format=%h \"%s\"", c],
                watch,
                None,
            )
            .ok()
        })
        .map(|s| format!(" (at commit {})", s.trim()))
        .unwrap_or_default();
    LifecycleError::Conflict {
        label: sides.label.to_string(),
        base: sides.base.to_string(),
        at,
        paths: paths.to_vec(),
    }
}

fn commit_tree(
    dir: &Path,
    tree: &str,
    parents: &[Oid],
    message: &str,
    author: Option<&[(String, String)]>,
    watch: &Watch,
) -> Result<Oid> {
    watch.check()?;
    let mut file = tempfile::NamedTempFile::new().context("a file for the commit message")?;
    std::io::Write::write_all(&mut file, message.as_bytes())
        .context("writing the commit message")?;
    let mut args: Vec<OsString> = vec!["commit-tree".into(), tree.into()];
    for p in parents {
        args.push("-p".into());
        args.push(p.to_string().into());
    }
    args.push("-F".into());
    args.push(file.path().as_os_str().to_owned());
    let mut run = Run::new(dir, args)
        .deadline(watch.left())
        .interrupt(watch.interrupted);
    for (k, v) in author.unwrap_or_default() {
        run = run.env(k, v);
    }
    let out = run_git(run, &["commit-tree"], watch)?;
    Oid::from_str(out.trim()).with_context(|| format!("git commit-tree printed {out:?}"))
}

/// Where the integration lands: the refs to move and the worktrees that have them checked out.
#[derive(Debug, Clone)]
pub struct Target {
    /// Where git runs when no worktree has the ref checked out.
    pub repo_dir: PathBuf,
    /// `refs/heads/<base>`, and the worktree that has it checked out (if any).
    pub base_ref: String,
    pub base_worktree: Option<PathBuf>,
    pub base_tip: Oid,
    /// `refs/heads/<session branch>`, and the session's worktree (when it still exists).
    pub session_ref: String,
    pub session_worktree: Option<PathBuf>,
    pub tip: Oid,
}

/// One done step of [`apply`] and how to undo it.
enum Done {
    Ref {
        dir: PathBuf,
        name: String,
        from: Oid,
        to: Oid,
    },
    Tree {
        worktree: PathBuf,
        from: Oid,
        to: Oid,
    },
}

/// A ref moved from `from` to `to` only if it is still at `from`.
fn move_ref(dir: &Path, name: &str, from: Oid, to: Oid, why: &str) -> Result<()> {
    let (f, t) = (from.to_string(), to.to_string());
    let args = ["update-ref", "-m", why, "--end-of-options", name, &t, &f];
    Run::new(dir, args)
        .deadline(STEP_LIMIT)
        .run()
        .map(|_| ())
        .map_err(|e| anyhow!("git update-ref {name}: {e}"))
}

/// The index and files of `worktree` from the tree of `from` to that of `to`; git refuses (and
/// changes nothing) when a file in the way is not as `from` has it.
fn move_tree(worktree: &Path, from: Oid, to: Oid) -> Result<()> {
    let (f, t) = (from.to_string(), to.to_string());
    Run::new(worktree, ["read-tree", "-m", "-u", &f, &t])
        .deadline(STEP_LIMIT)
        .run()
        .map(|_| ())
        .map_err(|e| anyhow!("updating the worktree {}: {e}", worktree.display()))
}

/// Carries the computed result out (see the module doc): the base branch and its worktree, then
/// (when `computed.move_session`) the session branch and its worktree. On any failure, and on
/// Ctrl-C or the deadline between steps, every step done is undone, and the error says what
/// stopped it; if an undo itself fails, the error says what is left where.
pub fn apply(target: &Target, computed: &Computed, label: &str, watch: &Watch) -> Result<()> {
    let why = format!("git-session merge: session {label}");
    let mut done: Vec<Done> = Vec::new();
    let outcome = (|| -> Result<()> {
        watch.check()?;
        let dir = target
            .base_worktree
            .clone()
            .unwrap_or_else(|| target.repo_dir.clone());
        let new = computed.new_tip;
        move_ref(&dir, &target.base_ref, target.base_tip, new, &why)?;
        reach("merge", "base-moved");
        done.push(Done::Ref {
            dir: dir.clone(),
            name: target.base_ref.clone(),
            from: target.base_tip,
            to: new,
        });
        if let Some(wt) = &target.base_worktree {
            move_tree(wt, target.base_tip, new)?;
            reach("merge", "base-worktree-updated");
            done.push(Done::Tree {
                worktree: wt.clone(),
                from: target.base_tip,
                to: new,
            });
        }
        watch.check()?;
        if computed.move_session && target.tip != new {
            let dir = target
                .session_worktree
                .clone()
                .unwrap_or_else(|| target.repo_dir.clone());
            move_ref(&dir, &target.session_ref, target.tip, new, &why)?;
            reach("merge", "session-moved");
            done.push(Done::Ref {
                dir,
                name: target.session_ref.clone(),
                from: target.tip,
                to: new,
            });
            if let Some(wt) = &target.session_worktree {
                move_tree(wt, target.tip, new)?;
                reach("merge", "session-worktree-updated");
                done.push(Done::Tree {
                    worktree: wt.clone(),
                    from: target.tip,
                    to: new,
                });
            }
        }
        watch.check()?;
        Ok(())
    })();
    let Err(error) = outcome else {
        return Ok(());
    };
    let mut left = Vec::new();
    for step in done.iter().rev() {
        let undone = match step {
            Done::Ref {
                dir,
                name,
                from,
                to,
            } => move_ref(dir, name, *to, *from, &why)
                .map_err(|e| format!("{name} is at {to}, was {from} ({e:#})")),
            Done::Tree { worktree, from, to } => move_tree(worktree, *to, *from).map_err(|e| {
                format!(
                    "the files of {} are those of {to}, were {from} ({e:#})",
                    worktree.display()
                )
            }),
        };
        if let Err(line) = undone {
            left.push(line);
        }
    }
    if left.is_empty() {
        return Err(error);
    }
    Err(LifecycleError::MergeNotRolledBack {
        label: label.to_string(),
        error: format!("{error:#}"),
        left,
    }
    .into())
}

/// The worktree that has `branch_ref` checked out, from `git worktree list --porcelain -z`.
pub fn worktree_of(dir: &Path, branch_ref: &str) -> Result<Option<PathBuf>> {
    let out = Run::new(dir, ["worktree", "list", "--porcelain", "-z"])
        .run()
        .map_err(|e| anyhow!("git worktree list: {e}"))?;
    let mut path: Option<PathBuf> = None;
    for field in out.stdout.split('\0') {
        if let Some(p) = field.strip_prefix("worktree ") {
            path = Some(PathBuf::from(p));
        } else if field.strip_prefix("branch ") == Some(branch_ref) {
            return Ok(path);
        }
    }
    Ok(None)
}
