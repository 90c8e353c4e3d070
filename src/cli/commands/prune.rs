//! `git session prune`: the cron job.
//!
//! Removes exactly the sessions that are merged into base, clean, unoccupied and inactive longer
//! than the age; everything else is listed with the reason it was kept. Never prompts, never
//! colours, never touches a worktree or branch outside the sessions' own, never removes a locked
//! worktree. Also rolls back interrupted creations, lets `git worktree prune` drop admin entries
//! of vanished directories, and expires archive refs older than `archive_keep`.

use crate::base::clock;
use crate::base::process::Liveness;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::git::{Merged, Repo};
use crate::hazards;
use crate::lifecycle;
use crate::session::{State, Status};
use anyhow::Result;
use std::time::Duration;

/// How prune speaks: a line on stdout, unless `--quiet`.
type Say<'a> = dyn Fn(String) -> std::io::Result<()> + 'a;

/// Remove merged, clean sessions inactive longer than an age (for cron; never prompts)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Inactivity after which a merged, clean session is removed [default: stale_after, 7d]
    #[arg(long, value_name = "AGE")]
    pub older_than: Option<String>,
    /// Say what would be removed, remove nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Print nothing but errors
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    let store = &cx.store;
    let age = match &args.older_than {
        Some(t) => clock::parse_duration(t).ok_or_else(|| {
            UserError::usage(format!("invalid --older-than \"{}\"", t.escape_debug()))
                .hinted(clock::duration_hint(t))
        })?,
        None => config.stale_after,
    };
    let say = |text: String| -> std::io::Result<()> {
        if args.quiet {
            Ok(())
        } else {
            output::line(text)
        }
    };
    // One prune at a time: a second one (two cron jobs overlapping) leaves the work to the first.
    let _whole = if args.dry_run {
        None
    } else {
        match store.clone().with_lock_wait(Duration::ZERO).lock("prune") {
            Ok(lock) => Some(lock),
            Err(e) if e.downcast_ref::<crate::store::LockBusy>().is_some() => {
                say("another prune is running; this one leaves the work to it".to_string())?;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    };
    if !args.dry_run {
        cx.recover()?;
    }
    let say = &say;
    prune_admin_entries(&cx, args.dry_run, say)?;
    let now = clock::now();
    let mut failed = prune_sessions(&cx, age, now, &args, say)?;
    failed += expire_archives(&cx, now, args.dry_run, say)?;
    if !args.dry_run {
        // Removals release their leases themselves; these are the leases of sessions whose
        // record went without them (a kill between the two), in force for nobody already.
        for label in crate::ownership::leases::prune(store)? {
            say(format!(
                "released the ports and names of {label}, a session that is gone"
            ))?;
        }
        // And the port blocks this clone holds on the remote for sessions that are gone.
        if let Some(settings) = config
            .shared_claims()
            .filter(|_| config.resources.ports > 0)
        {
            match crate::shared_claims::leases::tidy(&cx.repo, store, &settings)? {
                Ok(0) => {}
                Ok(n) => say(format!(
                    "withdrew {n} port blocks of removed sessions from remote {}",
                    settings.remote
                ))?,
                Err(e) => crate::cli::output::warn(format!(
                    "port blocks of removed sessions could not be withdrawn: {e}"
                )),
            }
        }
    }
    if failed > 0 {
        return Err(UserError::refused(format!("{failed} removals failed"))
            .hinted("see the warnings above")
            .into());
    }
    Ok(())
}

/// git's own `worktree prune`, decided and reported entry by entry.
fn prune_admin_entries(cx: &CommandHelper, dry_run: bool, say: &Say) -> Result<()> {
    let (repo, store) = (&cx.repo, &cx.store);
    let records = crate::session::load_all(store)?;
    for v in lifecycle::prune_entries(repo, &records, dry_run) {
        let name = v
            .admin
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if v.removed {
            if !dry_run {
                store.audit(
                    "prune-admin-entry",
                    serde_json::json!({"entry": v.admin.display().to_string(), "why": v.why}),
                );
            }
            say(format!(
                "{} admin entry worktrees/{name}: {}",
                if dry_run { "would remove" } else { "removed" },
                v.why
            ))?;
        } else {
            say(format!("kept admin entry worktrees/{name}: {}", v.why))?;
        }
    }
    Ok(())
}

/// Each session judged under its op lock ([`verdict`]) and removed when it may go; returns how
/// many removals failed.
fn prune_sessions(
    cx: &CommandHelper,
    age: chrono::Duration,
    now: clock::Time,
    args: &Args,
    say: &Say,
) -> Result<usize> {
    let config = cx.config()?;
    let (repo, store) = (&cx.repo, &cx.store);
    let layout = cx.layout()?;
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut failed = 0;
    // The full walk: what prune removes is decided on the files on disk, never on a cache (a
    // status gathered here is reused below when its record has not changed).
    let untracked = crate::git::status::Untracked::FullWalk;
    for status in crate::cli::gather::gather(repo, config, now, untracked)?.statuses {
        let label = status.record.label.clone();
        // A session another command is removing right now is left to it (cron must not fail).
        let Some(_op) = lifecycle::lock_session_op(store, &label, Duration::ZERO)? else {
            say(format!(
                "kept {label}: busy (another command is working on it)"
            ))?;
            continue;
        };
        // Judged again under the lock: what was gathered may be stale by now.
        let status = match crate::session::load(store, &label)? {
            None => continue,
            Some(record) if record.last_seen == status.record.last_seen => status,
            Some(record) => crate::session::inspect(&repo.common_dir, record, config, now)?,
        };
        // `list` and `info` warn about it too; here it also explains why the session stays.
        if !args.quiet && future(&status, now) {
            output::warn(format!(
                "session \"{label}\": last activity {} is in the future (clock skew or a \
                 hand-edited record); it is kept until that time has passed",
                clock::rfc3339(status.last_activity)
            ));
        }
        match verdict(repo, &status, age, now) {
            Err(reason) => say(format!("kept {label}: {reason}"))?,
            Ok(why) => {
                let keep_branch = status.merged == Merged::No;
                if !args.dry_run {
                    if let Err(e) =
                        lifecycle::remove(repo, &layout, store, &status, keep_branch, false)
                    {
                        output::warn(format!("could not remove {label}: {e:#}"));
                        failed += 1;
                        continue;
                    }
                    store.audit("prune", serde_json::json!({"label": label, "why": why}));
                }
                if status.record.attached {
                    // Only the registration goes: the words must not say more went.
                    let verb = if args.dry_run {
                        "would unregister"
                    } else {
                        "unregistered"
                    };
                    say(format!(
                        "{verb} {label}: {why}; its worktree {} stays as it is",
                        status.record.path.display()
                    ))?;
                } else {
                    say(format!("{verb} {label}: {why}"))?;
                }
            }
        }
    }
    Ok(failed)
}

/// Archive refs older than `archive_keep` go ([`lifecycle::expired_archives`]); returns how many
/// could not be deleted.
fn expire_archives(
    cx: &CommandHelper,
    now: clock::Time,
    dry_run: bool,
    say: &Say,
) -> Result<usize> {
    let config = cx.config()?;
    let repo = &cx.repo;
    let mut failed = 0;
    for name in lifecycle::expired_archives(repo, config.archive_keep, now)? {
        if !dry_run {
            if let Err(e) = lifecycle::delete_archive(repo, &name) {
                output::warn(format!("{e:#}"));
                failed += 1;
                continue;
            }
        }
        say(format!(
            "{} archive {name}: older than {}",
            if dry_run { "would expire" } else { "expired" },
            clock::format_duration(config.archive_keep)
        ))?;
    }
    Ok(failed)
}

/// Activity dated in the future (past the minute of slack `list` and `info` allow too): such a
/// session is never counted as inactive, and the user hears why.
fn future(s: &Status, now: clock::Time) -> bool {
    s.last_activity > now + chrono::Duration::minutes(1)
}

/// `Ok(why it goes)` or `Err(why it stays)`.
fn verdict(
    repo: &Repo,
    s: &Status,
    age: chrono::Duration,
    now: clock::Time,
) -> Result<String, String> {
    let r = &s.record;
    let idle = now - s.last_activity;
    if s.state == State::Creating {
        let who = r
            .creator
            .as_ref()
            .map(|p| match p.liveness() {
                Liveness::OtherHost => format!("pid {} on host {}", p.pid, p.host),
                Liveness::Unknown => format!(
                    "pid {}, unless that pid was reused ({})",
                    p.pid,
                    p.unknown_because()
                ),
                _ => format!("pid {}", p.pid),
            })
            .unwrap_or_default();
        return Err(format!("being created by {who}"));
    }
    if let Some(detail) = crate::cli::words::damage::detail(s) {
        // Finished only by a `cleanup` someone asked for, never by cron.
        return Err(format!("damaged: {detail}"));
    }
    if let Some(reason) = &s.locked {
        return Err(format!(
            "worktree locked ({reason}); unlock with: git worktree unlock {}",
            crate::base::quote::shell_quote(&r.path.display().to_string())
        ));
    }
    if future(s, now) {
        return Err(format!(
            "last activity {} is in the future",
            clock::rfc3339(s.last_activity)
        ));
    }
    if idle <= age {
        let when = match clock::age(idle) {
            now if now == "now" => "just now".to_string(),
            ago => format!("{ago} ago"),
        };
        return Err(format!(
            "active {when}, within {}",
            clock::format_duration(age)
        ));
    }
    if r.attached {
        return Ok(format!(
            "attached session inactive for {}",
            clock::age(idle)
        ));
    }
    // The same inspection `cleanup` makes: the branch, the worktree's own HEAD, operations in
    // progress, files, submodules and processes (for a missing directory, what its admin entry
    // still holds).
    let hazards = hazards::inspect(repo, s);
    if let Some(h) = hazards.items.first() {
        return Err(crate::cli::words::hazards::summary(h));
    }
    if s.state == State::Missing {
        if s.merged == Merged::No && s.tip.is_some() {
            return Err(format!(
                "worktree directory is gone but {} has {} not in {}",
                r.branch,
                output::count(s.ahead, "commit"),
                r.base
            ));
        }
        return Ok(format!(
            "worktree directory is gone, inactive for {}",
            clock::age(idle)
        ));
    }
    if s.merged == Merged::No {
        return Err(format!(
            "{} not in {}",
            output::count(s.ahead, "commit"),
            r.base
        ));
    }
    Ok(format!(
        "merged ({}), clean, inactive for {}",
        s.merged.as_str(),
        clock::age(idle)
    ))
}
