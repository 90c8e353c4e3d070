//! The commit guard: what the installed pre-commit and post-commit hooks run.
//!
//! Invariants a reader must not break:
//! - Fails closed only on a confirmed conflict: a staged path owned by another live session.
//!   Every internal error (unreadable store, odd index, broken repository) lets the commit
//!   through, loudly: a warning on stderr and an `guard-error` line in the audit log.
//! - Reads only: the index file git hands the hook (`GIT_INDEX_FILE`, which differs for
//!   `commit -a`, `commit <path>` and `--only`), HEAD's trees through [`crate::git`], the store. It
//!   never runs a program, so a hostile repository configuration cannot make it execute anything.
//! - Writes only after the check passed: the acting session's commit claims (through
//!   [`ownership::claim`], under the store's locks) and a small marker in the worktree's own git
//!   directory that tells the post-commit hook the pre-commit saw this commit.
//! - Paths are data: they are compared and printed (escaped), never handed to a shell.

pub mod unguarded;

use crate::base::announce::{self, Announcement, Unseen};
use crate::base::clock;
use crate::config::Config;
use crate::git::staged;
use crate::git::{Oid, Repo};
use crate::ownership::refresh::with_view;
use crate::ownership::{self, ClaimsView, Owner, Resolver};
use crate::session::{self, ClaimHow};
use crate::store::Store;
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// The marker file the pre-commit leaves in the worktree's git directory.
const MARKER: &str = "git-session-guard";

/// How long the guard waits for a busy index lock before skipping the (optional) index rewrite.
const INDEX_WRITE_WAIT: Duration = Duration::from_millis(20);

/// What a hook decided.
pub enum Verdict {
    Pass,
    Refuse(Refusal),
}

/// Why a commit or a push is refused, as data; the command line words it.
#[derive(Debug)]
pub enum Refusal {
    /// Staged paths other live sessions of this clone own; `me` is the session committing.
    Owned {
        conflicts: Vec<(String, Owner)>,
        me: Option<String>,
        now: clock::Time,
    },
    /// Staged paths that claims of other clones hold (as last synced).
    HeldElsewhere {
        held: Vec<(String, crate::shared_claims::SharedClaim)>,
        remote: String,
    },
    /// Pushed commits change paths that sessions of other clones hold.
    PushHeld {
        conflicts: Vec<crate::shared_claims::PushConflict>,
        remote: String,
    },
}

/// `GIT_SESSION_GUARD=off`: the deliberate, audited bypass.
pub fn guard_off() -> bool {
    std::env::var("GIT_SESSION_GUARD").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off"))
}

/// The index the commit will be made from.
fn index_path(repo: &Repo) -> PathBuf {
    match std::env::var_os("GIT_INDEX_FILE") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
            }
        }
        _ => repo.gitdir().join("index"),
    }
}

/// Oids named in MERGE_HEAD: concluding a merge of a session's branch is not stealing its paths.
fn merge_heads(repo: &Repo) -> Vec<Oid> {
    crate::git::read_admin_file(&repo.gitdir().join("MERGE_HEAD"))
        .map(|t| {
            t.lines()
                .filter_map(|l| Oid::from_str(l.trim()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A digest of a set of changed paths, to recognise the same change in post-commit: 64-bit
/// FNV-1a over the paths, each followed by a NUL. The marker is advisory (a mismatch only makes
/// post-commit check the commit itself), so a fast hash is enough; a cryptographic one cost a
/// noticeable share of the hook on a thousand staged paths.
pub fn fingerprint(paths: &[String]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in paths.iter().flat_map(|p| p.bytes().chain([0])) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn head_oid(repo: &Repo) -> Option<Oid> {
    repo.head_id()
}

/// Runs the pre-commit check. `Err` is an internal error: the caller fails open.
pub fn pre_commit(repo: &Repo, config: &Config) -> Result<Verdict> {
    let store = crate::store::Store::of(repo);
    // One thread: with the index read as two trees (see `staged`), a second thread for the
    // claims cost more to start and join than it overlapped.
    let staged = staged::staged_paths(repo.objects(), &index_path(repo))?;
    // A damaged block of the claims index makes this run again on an index rebuilt from the
    // store: a damaged derived file is never a reason to refuse or to fail open.
    // With claims shared across machines, the synced view is asked about the staged paths
    // `[guard] shared` leaves owned by someone: those are the ones the resolver asks about
    // here, so its matcher (compiled once) sorts them, not a second compilation per path.
    let shared_claims = config.claims_remote.is_some();
    // `mine` and `unshared` borrow the staged paths: most runs record none of them, and a
    // copy of each would be an allocation per staged path.
    let (me, conflicts, lapsed, mine, unshared) =
        with_view(&store, Some(INDEX_WRITE_WAIT), |view| {
            let me = acting(repo, view);
            sweep_unguarded(repo, config, &store, view, me.as_deref(), head_oid(repo));
            let mut conflicts: Vec<(String, Owner)> = Vec::new();
            let mut lapsed: Vec<(String, Owner)> = Vec::new();
            let mut mine: Vec<&str> = Vec::new();
            let mut unshared: Vec<&str> = Vec::new();
            let mut resolver = Resolver::new(repo, config, &store, view).merging(merge_heads(repo));
            for path in &staged {
                if resolver.is_shared(path) {
                    continue;
                }
                if shared_claims {
                    unshared.push(path);
                }
                let res = resolver.resolve(path, me.as_deref())?;
                match res.owner {
                    Some(owner) => conflicts.push((path.clone(), owner)),
                    None => {
                        lapsed.extend(res.lapsed.into_iter().map(|o| (path.clone(), o)));
                        // Already held (any claim kind is at least as durable as a commit
                        // claim): nothing to record.
                        if !res.held {
                            mine.push(path);
                        }
                    }
                }
            }
            Ok((me, conflicts, lapsed, mine, unshared))
        })?;
    if !conflicts.is_empty() {
        store.audit(
            "guard-refused",
            json!({
                "session": me,
                "paths": conflicts.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>(),
            }),
        );
        return Ok(Verdict::Refuse(Refusal::Owned {
            conflicts,
            me,
            now: clock::now(),
        }));
    }
    let now = clock::now();
    if config.claims_remote.is_some() {
        // Claims of other clones, as the last sync saw them: never the network.
        let text = crate::shared_claims::view::text(&store);
        if let Some(view) = text.as_deref().and_then(crate::shared_claims::view::parse) {
            let held = crate::shared_claims::view::conflicts(&view, &unshared, now);
            if !held.is_empty() {
                store.audit(
                    "guard-refused",
                    json!({
                        "session": me,
                        "shared": true,
                        "paths": held.iter().map(|(p, c)| json!({"path": p, "owner": c.label, "host": c.host, "clone": c.clone})).collect::<Vec<_>>(),
                    }),
                );
                return Ok(Verdict::Refuse(Refusal::HeldElsewhere {
                    held,
                    remote: view.remote.to_string(),
                }));
            }
        }
    }
    for (path, owner) in &lapsed {
        announce::emit(Announcement::LapsedOwner {
            path: path.clone(),
            owner: owner.label.clone(),
            last_activity: owner.last_activity,
            now,
        });
    }
    if !lapsed.is_empty() {
        store.audit(
            "guard-lapsed-owner",
            json!({"session": me, "paths": lapsed.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>()}),
        );
    }
    if let Some(label) = &me {
        // Paths already held were left out of `mine`; the commit itself (index and reflog
        // mtimes) is the activity liveness reads, so the steady state writes nothing.
        if !mine.is_empty() {
            record_commit_claims(repo, config, &store, label, &mine)?;
        }
    }
    write_marker(repo, &staged);
    Ok(Verdict::Pass)
}

/// Records the acting session's committed paths as `commit` claims. A race lost to another
/// session's claim between the check and now is reported, not fatal: the check above passed.
fn record_commit_claims(
    repo: &Repo,
    config: &Config,
    store: &Store,
    label: &str,
    paths: &[&str],
) -> Result<()> {
    // The label came from `GIT_SESSION` (checked) or the claims index; only a `Label` reaches
    // the store, and text that is none names no session either.
    let known = match session::Label::new(label) {
        Ok(label) => session::load(store, &label)?.map(|_| label),
        Err(_) => None,
    };
    let Some(label) = known else {
        announce::emit(Announcement::UnknownActingSession {
            label: label.to_string(),
        });
        return Ok(());
    };
    if paths.is_empty() {
        return session::touch(store, &label);
    }
    // Paths from git's index; one that is no repository path (git would not have staged it)
    // is not claimed.
    let paths: Vec<_> = paths
        .iter()
        .filter_map(|p| ownership::RepoPath::new(p).ok())
        .collect();
    let lost = ownership::claim(repo, config, &label, &paths, ClaimHow::Commit)?;
    for owner in lost {
        announce::emit(Announcement::ClaimLostRace {
            path: owner.path,
            owner: owner.label,
        });
    }
    Ok(())
}

fn marker_text(parent: Option<Oid>, paths: &[String]) -> String {
    format!(
        "{}\n{}\n",
        parent.map(|o| o.to_string()).unwrap_or_default(),
        fingerprint(paths)
    )
}

/// Best effort: without it, post-commit checks the commit itself, which is only slower.
fn write_marker(repo: &Repo, staged: &[String]) {
    let text = marker_text(head_oid(repo), staged);
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
            if !f.metadata()?.is_file() {
                return Err(std::io::ErrorKind::InvalidInput.into());
            }
            f.write_all(text.as_bytes())?;
            if f.metadata()?.len() != text.len() as u64 {
                f.set_len(text.len() as u64)?;
            }
            Ok(())
        });
    let _ = written;
}

/// Who is acting, reading only the records of sessions in this worktree.
fn acting(repo: &Repo, view: &ClaimsView) -> Option<String> {
    if session::env_label().is_some() {
        return session::acting_label(repo, &[]).map(String::from);
    }
    // The rule of `session::acting_label` (the one active session whose worktree this is),
    // answered from the claims index, which lists every session's state and worktree: no
    // record is read.
    let here = repo.current_worktree.as_ref()?;
    match ownership::sessions_in_worktree(view, here)[..] {
        [label] => Some(label.to_string()),
        _ => None,
    }
}

/// The pre-push gate (claims shared across machines): refuses a push whose new commits change
/// a path a session of another clone holds; a remote that cannot be asked is one warning, and the
/// push goes on (the commits were guarded when they were made).
pub fn pre_push(repo: &Repo, config: &Config, input: &str) -> Result<Verdict> {
    let Some(settings) = config.shared_claims() else {
        return Ok(Verdict::Pass);
    };
    let store = crate::store::Store::of(repo);
    let conflicts = match crate::shared_claims::gate(repo, &store, &settings, input)? {
        Ok(c) => c,
        Err(e) => {
            announce::emit(Announcement::PushNotChecked {
                remote: settings.remote.clone(),
                error: e.to_string(),
            });
            return Ok(Verdict::Pass);
        }
    };
    if conflicts.is_empty() {
        publish_pending(repo, config, &store, &settings);
        return Ok(Verdict::Pass);
    }
    store.audit(
        "push-refused",
        json!({"remote": settings.remote, "paths": conflicts.iter().map(|c| json!({"path": c.path, "commit": c.commit.to_string(), "owner": c.holder.label, "host": c.holder.host})).collect::<Vec<_>>()}),
    );
    Ok(Verdict::Refuse(Refusal::PushHeld {
        conflicts,
        remote: settings.remote.clone(),
    }))
}

/// Publishes this clone's claims made since the last sync (by commit, by an agent's edit) as
/// the push goes out; what cannot be published is a warning, never a refused push.
fn publish_pending(
    repo: &Repo,
    config: &Config,
    store: &Store,
    settings: &crate::shared_claims::Settings,
) {
    let mine: Vec<(String, String, clock::Time)> = session::load_all(store)
        .and_then(|records| ownership::claims_with_state(repo, config, &records))
        .map(|claims| {
            claims
                .into_iter()
                .filter(|(_, _, live)| *live)
                .map(|(label, c, _)| (label.to_string(), c.path.to_string(), c.since))
                .collect()
        })
        .unwrap_or_default();
    match crate::shared_claims::sync(repo, store, settings, &mine) {
        Ok(Ok(report)) => {
            for (path, label, why) in &report.lost {
                announce::emit(Announcement::SharedClaimLost {
                    label: label.clone(),
                    path: path.clone(),
                    remote: settings.remote.clone(),
                    why: why.to_string(),
                });
            }
        }
        Ok(Err(e)) => announce::emit(Announcement::ClaimsNotPublished {
            error: e.to_string(),
        }),
        Err(e) => announce::emit(Announcement::ClaimsNotPublished {
            error: format!("{e:#}"),
        }),
    }
}

/// Runs the post-commit check: a commit the pre-commit never saw (`--no-verify`) is checked
/// after the fact; a conflict is warned about loudly and recorded. Never fails the commit.
pub fn post_commit(repo: &Repo, config: &Config) -> Result<()> {
    let store = crate::store::Store::of(repo);
    let commit = repo.objects().head_commit()?;
    let paths = staged::commit_paths(repo.objects(), &commit)?;
    let marker_path = repo.gitdir().join(MARKER);
    let marker = crate::git::read_admin_file(&marker_path);
    let _ = std::fs::remove_file(&marker_path);
    let expected = marker_text(commit.parent_id(0), &paths);
    let gitdir = repo.gitdir().to_path_buf();
    if marker.as_deref() == Some(expected.as_str()) {
        // The pre-commit saw this commit (and swept what came before it).
        crate::guard::unguarded::mark_seen(&gitdir, commit.id());
        return Ok(());
    }
    let (me, conflicts, mine) = with_view(&store, Some(INDEX_WRITE_WAIT), |view| {
        let me = acting(repo, view);
        if let Some(parent) = commit.parent_id(0) {
            // Commits before this one that no hook saw either.
            sweep_unguarded(repo, config, &store, view, me.as_deref(), Some(parent));
        }
        let merged_in: Vec<Oid> = commit.parent_ids().skip(1).collect();
        let mut conflicts: Vec<(String, Owner)> = Vec::new();
        let mut mine: Vec<&str> = Vec::new();
        let mut resolver = Resolver::new(repo, config, &store, view).merging(merged_in);
        for path in &paths {
            if resolver.is_shared(path) {
                continue;
            }
            match resolver.resolve(path, me.as_deref())?.owner {
                Some(owner) => conflicts.push((path.clone(), owner)),
                None => mine.push(path),
            }
        }
        Ok((me, conflicts, mine))
    })?;
    crate::guard::unguarded::mark_seen(&gitdir, commit.id());
    if !conflicts.is_empty() {
        let id = commit.id().to_string();
        announce::emit(Announcement::PostCommitUnguarded {
            commit: id[..12].to_string(),
            why: why_unseen(repo, &gitdir, commit.id()),
        });
        for (path, owner) in &conflicts {
            announce::emit(Announcement::PostCommitPath {
                path: path.clone(),
                owner: owner.label.clone(),
                how: ownership::how_phrase(owner.how),
                since: owner.since,
            });
        }
        announce::emit(Announcement::PostCommitAdvice);
        store.audit(
            "guard-unguarded-commit",
            json!({
                "commit": id,
                "session": me,
                "paths": conflicts.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>(),
            }),
        );
    }
    if let Some(label) = &me {
        record_commit_claims(repo, config, &store, label, &mine)?;
    }
    Ok(())
}

/// Why the pre-commit never saw the commit `made` here: a git command that runs no pre-commit
/// made it (HEAD's reflog names the command), the guard is not in force (named), or its hook
/// was skipped (`git commit --no-verify`, or a hook before ours that let the commit through
/// without running the rest).
fn why_unseen(repo: &Repo, gitdir: &std::path::Path, made: Oid) -> Unseen {
    if let Some(command) = command_without_pre_commit(gitdir, made) {
        return Unseen::ByCommand { command };
    }
    let Some(here) = repo.current_worktree.as_deref() else {
        return Unseen::NoPreCommit;
    };
    let e = crate::hooks::check(&repo.common_dir, here, &|| {
        crate::hooks::place::git_runs_config_hooks(here)
    });
    match e.pre_commit {
        crate::hooks::Check::Off(off) => Unseen::NotInForce {
            why: off.to_string(),
            install_repairs: off.install_repairs(),
        },
        crate::hooks::Check::InForce(_) => Unseen::Skipped,
    }
}

/// The git command that made `made`, from the newest entry of HEAD's reflog, when it is one
/// git runs no pre-commit hook for (it runs post-commit after each of them).
fn command_without_pre_commit(gitdir: &std::path::Path, made: Oid) -> Option<String> {
    let newest = crate::git::reflog::read(&gitdir.join("logs/HEAD"), 1).pop()?;
    if newest.new != made {
        return None;
    }
    let m = newest.message.as_str();
    ["cherry-pick", "revert", "rebase", "merge", "pull", "am"]
        .into_iter()
        .find(|c| {
            m.strip_prefix(c)
                .is_some_and(|rest| rest.starts_with(':') || rest.starts_with(' '))
        })
        .map(str::to_string)
}

/// Checks what HEAD gained without the hooks in this worktree (see [`crate::guard::unguarded`]),
/// whoever acts here: a session, or nobody (the main worktree, a person's own worktree). The
/// steady state is one small file read; the session record is read only when HEAD moved.
fn sweep_unguarded(
    repo: &Repo,
    config: &Config,
    store: &Store,
    view: &ClaimsView,
    me: Option<&str>,
    head: Option<Oid>,
) {
    let Some(head) = head else {
        return;
    };
    let gitdir = repo.gitdir();
    if crate::guard::unguarded::read_seen(gitdir) == Some(head) {
        return;
    }
    let record = me
        .and_then(|l| session::Label::new(l).ok())
        .and_then(|l| session::load(store, &l).ok().flatten());
    let (base, own_branch) = match &record {
        Some(record) => (
            repo.resolve_commit(&record.base)
                .ok()
                .flatten()
                .or_else(|| Oid::from_str(&record.base_commit).ok()),
            record.branch.as_str(),
        ),
        None => (None, ""),
    };
    // Any session attached here may have made these commits: their claims are no conflict.
    let here = repo.current_worktree.as_deref();
    let mut own: Vec<&str> = here
        .map(|h| ownership::sessions_in_worktree(view, h))
        .unwrap_or_default();
    own.extend(me);
    let actor = crate::guard::unguarded::Actor {
        label: me,
        own: &own,
    };
    let findings = crate::guard::unguarded::sweep(
        repo,
        config,
        store,
        view,
        gitdir,
        head,
        actor,
        base,
        &config.branch_prefix,
        own_branch,
    );
    crate::guard::unguarded::report(store, actor, here.unwrap_or(gitdir), &findings);
}

/// Turns an internal error into the loud fail-open the guard promises.
pub fn fail_open(repo: Option<&Repo>, hook: &str, err: &anyhow::Error) {
    fail_open_in(repo.map(Store::of), hook, err)
}

/// [`fail_open`] with the store found some other way (the git CLI's common directory, when
/// libgit2 could not open the repository).
pub fn fail_open_in(store: Option<Store>, hook: &str, err: &anyhow::Error) {
    announce::emit(Announcement::GuardFailOpen {
        hook: hook.to_string(),
        error: format!("{err:#}"),
    });
    let Some(store) = store else {
        return;
    };
    store.audit(
        "guard-error",
        json!({"hook": hook, "error": format!("{err:#}")}),
    );
}
