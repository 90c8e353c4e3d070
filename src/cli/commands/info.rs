//! `git session info`: everything about one session.

use crate::base::clock;
use crate::cli::attention;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::config::Config;
use crate::session;
use anyhow::Result;
use serde_json::json;

/// Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session label [default: the session of the current worktree, or GIT_SESSION]
    pub label: Option<String>,
    /// Print one JSON object (stable keys; see docs/json.md)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    cx.recover()?;
    let label = cx.given_or_acting(args.label, "git session info LABEL")?;
    let (repo, store) = (&cx.repo, &cx.store);
    let record = session::require(store, &label)?;
    let now = clock::now();
    let mut status = session::inspect(&repo.common_dir, record, config, now)?;
    let main = crate::cli::gather::shared_with_main(repo);
    crate::hazards::without_shared_warnings(&mut status.warnings, &main);
    let escaped = crate::cli::gather::escaped_changes(repo);
    let escaped_into = crate::cli::gather::escaped_into(&escaped, &status.record.path);
    status.warnings.extend(escaped_into);
    // And what this session's own agent wrote elsewhere and is still there.
    for w in escaped.iter().filter(|w| w.writer == label.as_str()) {
        status
            .warnings
            .push(crate::cli::words::guard_refusals::escaped_from(w));
    }
    crate::guard::unguarded::sweep_session(repo, config, &status);
    crate::cli::in_force::warn_unguarded(
        &repo.common_dir,
        &[(status.record.label.to_string(), status.record.path.clone())],
    );
    let unmerged = match (status.tip, status.base_tip) {
        (Some(t), Some(b)) if !status.merged.is_merged() => repo.unmerged_commits(t, b, 100)?,
        _ => Vec::new(),
    };
    let archives = repo.archive_refs(&label.file_name())?;
    let owned = session::owned_claims(store, &status)?;
    let lease = crate::ownership::leases::of(store, &label)?;
    let agents = crate::context::attention::of_session(store, &status.record, now);
    let disk = crate::session::disk::of_sessions(store, &[&status], now).remove(0);
    let found = Found {
        status: &status,
        unmerged: &unmerged,
        archives: &archives,
        owned: &owned,
        lease: lease.as_ref(),
        agents: &agents,
        disk: disk.as_ref(),
    };
    let collisions = collisions_of(&cx, config, &status, now)?;
    if args.json {
        let mut view = json_view(&found);
        view["collisions"] = crate::cli::words::merging::collisions_json(&collisions);
        return Ok(output::json(&view)?);
    }
    let mut lines = text_lines(&cx, config, &found, now);
    // After "merged": what merging it now would meet.
    let at = lines
        .iter()
        .position(|l| l.starts_with("merged "))
        .map_or(lines.len(), |i| i + 1);
    let words = crate::cli::words::merging::collision_info(&status.record.base, &collisions);
    lines.splice(at..at, words);
    output::line(lines.join("\n"))?;
    Ok(())
}

/// This session's collisions, against every other session read as `list` reads them.
fn collisions_of(
    cx: &CommandHelper,
    config: &crate::config::Config,
    status: &session::Status,
    now: clock::Time,
) -> Result<crate::lifecycle::collisions::Collisions> {
    let others = session::load_all(&cx.store)?
        .into_iter()
        .filter(|r| r.label != status.record.label)
        .collect();
    let mut all = vec![status.clone()];
    all.extend(
        session::inspect_all(&cx.repo.common_dir, others, config, now)
            .into_iter()
            .filter_map(|(_, s)| s.ok()),
    );
    let found = crate::lifecycle::collisions::collisions(&cx.repo, &cx.store, &all);
    Ok(found.into_iter().next().unwrap_or_default())
}

/// What `info` shows beside the status.
struct Found<'a> {
    status: &'a session::Status,
    unmerged: &'a [(crate::git::Oid, String)],
    archives: &'a [(String, crate::git::Oid)],
    owned: &'a [session::Claim],
    /// What it leased of `[resources]`.
    lease: Option<&'a crate::ownership::leases::Lease>,
    /// What each agent session does ([`crate::context::attention`]), most recent event first.
    agents: &'a [crate::context::attention::AgentView],
    /// The worktree's own disk use (`None`: attached, missing or unreadable).
    disk: Option<&'a crate::session::disk::DiskUse>,
}

/// `info --json`: the status `list --json` shows, and the rest.
fn json_view(found: &Found) -> serde_json::Value {
    let Found {
        status,
        unmerged,
        archives,
        owned,
        lease,
        agents,
        disk,
    } = *found;
    let r = &status.record;
    let mut obj = output::versioned(output::status_json(status));
    let map = obj.as_object_mut().expect("object");
    map.insert("resources".into(), output::resources_json(lease));
    map.insert("disk".into(), output::disk_json(disk));
    let summary = crate::context::attention::summary(agents);
    map.insert("agent".into(), attention::json(summary));
    map.insert(
        "agent_states".into(),
        json!(agents
            .iter()
            .map(|a| attention::json(Some(a)))
            .collect::<Vec<_>>()),
    );
    map.insert("base".into(), json!(r.base));
    map.insert("base_commit".into(), json!(r.base_commit));
    map.insert("agent_sessions".into(), json!(r.agent_sessions));
    map.insert(
        "claims".into(),
        json!(owned
            .iter()
            .map(
                |c| json!({"path": c.path, "how": c.how.as_str(), "since": clock::rfc3339(c.since)})
            )
            .collect::<Vec<_>>()),
    );
    map.insert(
        "unmerged_commits".into(),
        json!(unmerged
            .iter()
            .map(|(id, s)| json!({"id": id.to_string(), "summary": s}))
            .collect::<Vec<_>>()),
    );
    map.insert("dirty_files".into(), json!(status.dirty));
    map.insert("warnings".into(), json!(status.warnings));
    map.insert(
        "archives".into(),
        json!(archives.iter().map(|(n, _)| n).collect::<Vec<_>>()),
    );
    map.insert(
        "context".into(),
        match &r.context {
            Some(c) => json!({"agent_session": c.agent_session, "tokens": c.tokens,
                              "window": c.window, "percent": c.percent,
                              "at": clock::rfc3339(c.at)}),
            None => serde_json::Value::Null,
        },
    );
    obj
}

/// `info`'s lines, one fact each.
fn text_lines(cx: &CommandHelper, config: &Config, found: &Found, now: clock::Time) -> Vec<String> {
    let Found {
        status,
        unmerged,
        archives,
        owned,
        lease,
        agents,
        disk,
    } = *found;
    let (repo, store) = (&cx.repo, &cx.store);
    let r = &status.record;
    let mut lines = vec![
        format!("session   {}", r.label),
        format!(
            "state     {}{}",
            status.state.as_str(),
            if status.live { " (live)" } else { "" }
        ),
        format!(
            "branch    {}",
            if r.branch.is_empty() {
                "(detached)"
            } else {
                &r.branch
            }
        ),
        format!("path      {}", r.path.display()),
        format!(
            "base      {} (at creation {})",
            r.base,
            short(&r.base_commit)
        ),
        format!(
            "created   {} ({})",
            clock::rfc3339(r.created),
            output::ago(r.created, now)
        ),
        format!(
            "activity  {} ({})",
            clock::rfc3339(status.last_activity),
            output::ago(status.last_activity, now)
        ),
        format!(
            "merged    {}  ahead {}, behind {}",
            if crate::cli::gather::is_new(status) {
                "new (no commits of its own yet)"
            } else {
                status.merged.as_str()
            },
            status.ahead,
            status.behind
        ),
    ];
    if let Some(l) = lease {
        lines.push(resources_line(l));
    }
    if let Some(d) = disk {
        lines.push(format!(
            "disk      {} of its own in {} files (shared and linked files not counted; \
             measured {})",
            crate::session::disk::human(d.bytes),
            d.files,
            output::ago(d.measured, now)
        ));
    }
    if r.attached {
        lines.push("attached  yes (shares its worktree; commits identified by GIT_SESSION)".into());
    }
    if let Some(reason) = &status.locked {
        lines.push(format!("locked    {reason}"));
    }
    if let Some(k) = &r.kept {
        lines.push(format!(
            "kept      {} ({}): its agent session ended while it held work",
            clock::rfc3339(k.at),
            output::ago(k.at, now)
        ));
        for reason in &k.reasons {
            lines.push(format!("  {reason}"));
        }
    }
    if let Some(detail) = crate::cli::words::damage::detail(status) {
        lines.push(format!("damaged   {detail}"));
    }
    for w in &status.warnings {
        lines.push(format!("warning   {w}"));
    }
    lines.push(format!(
        "agents    {}",
        if r.agent_sessions.is_empty() {
            "-".to_string()
        } else {
            r.agent_sessions.join(", ")
        }
    ));
    for a in agents {
        lines.push(format!("  {}", attention::line(a, now)));
    }
    match &r.context {
        Some(c) => lines.push(format!(
            "context   {} ({} of {} tokens, agent {}, {})",
            output::percent(c.percent),
            c.tokens.map_or("?".to_string(), |t| t.to_string()),
            c.window,
            c.agent_session,
            output::ago(c.at, now)
        )),
        None => lines.push("context   -".into()),
    }
    lines.push(format!("unmerged  {}", unmerged.len()));
    for (id, summary) in unmerged {
        lines.push(format!("  {} {summary}", short(&id.to_string())));
    }
    lines.push(format!("dirty     {}", status.dirty.len()));
    for f in status.dirty.iter().take(50) {
        lines.push(format!("  {f}"));
    }
    lines.push(format!("claims    {}", owned.len()));
    // With claims shared across machines: which of them the remote holds for this clone, as
    // the last claim, release or sync saw it.
    let published: Option<Vec<String>> = config
        .claims_remote
        .as_ref()
        .map(|remote| crate::shared_claims::view::published(store, remote));
    for c in owned {
        let shared = match &published {
            Some(p) if p.contains(&c.path) => ", shared",
            Some(_) => ", not shared yet",
            None => "",
        };
        lines.push(format!(
            "  {} ({}, since {}{shared})",
            c.path,
            c.how.as_str(),
            clock::rfc3339(c.since)
        ));
    }
    lines.push(format!("archives  {}", archives.len()));
    for (name, _) in archives {
        lines.push(format!("  {name}"));
    }
    // Whether each configured agent's hooks load in this worktree (commit, trust).
    let agents = crate::context::loading::hooks_load(repo.main_worktree.as_deref(), &r.path);
    if !agents.is_empty() {
        lines.push("agent hooks".to_string());
        for h in &agents {
            lines.push(format!(
                "  {}",
                crate::cli::words::context_loading::describe(h)
            ));
        }
    }
    lines
}

/// `resources ports 20000-20009, database app_fix`: what the session leased.
fn resources_line(l: &crate::ownership::leases::Lease) -> String {
    let mut parts: Vec<String> = l
        .port_span()
        .map(|s| format!("ports {s}"))
        .into_iter()
        .collect();
    parts.extend(l.names.iter().map(|(k, v)| format!("{k} {v}")));
    format!("resources {}", parts.join(", "))
}

fn short(id: &str) -> &str {
    &id[..id.len().min(10)]
}
