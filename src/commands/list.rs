//! `git session list`: one row per session, gathered in parallel.

use crate::clock;
use crate::config::Config;
use crate::git::Repo;
use crate::lifecycle;
use crate::output;
use crate::session::{self, Status};
use anyhow::Result;

/// List sessions: state, age, activity, commits ahead/behind, dirty files, owned paths, context
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array (stable keys; see README)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let repo = Repo::require()?;
    let config = Config::load(repo.config_root())?;
    let store = repo.store();
    lifecycle::recover_interrupted(&repo, &config, &store)?;
    let now = clock::now();
    let statuses = gather(&repo, &config, now)?;
    // What the worktrees' ground truth says beyond the table (detached HEAD, operation in
    // progress, missing branch, broken link ...), on stderr so the table and JSON keep their shape.
    for s in &statuses {
        for w in &s.warnings {
            output::warn(format!("session \"{}\": {w}", s.record.label));
        }
    }
    if args.json {
        let rows: Vec<_> = statuses.iter().map(output::status_json).collect();
        return Ok(output::json(&serde_json::Value::Array(rows))?);
    }
    if statuses.is_empty() {
        output::note("no sessions; create one with `git session create LABEL`");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = statuses.iter().map(|s| row(s, now)).collect();
    output::line(output::table(
        &[
            "LABEL", "STATE", "AGE", "ACTIVE", "AHEAD", "BEHIND", "DIRTY", "OWNED", "CONTEXT",
            "PATH",
        ],
        &rows,
    ))?;
    Ok(())
}

/// Inspects every session in parallel; a session that cannot be read is reported and skipped.
pub fn gather(repo: &Repo, config: &Config, now: clock::Time) -> Result<Vec<Status>> {
    let records = session::load_all(&repo.store())?;
    let mut out = Vec::new();
    for (label, status) in session::inspect_all(&repo.common_dir, records, config, now) {
        match status {
            Ok(s) => {
                // Commits made with both hooks skipped are reported here too.
                crate::unguarded::sweep_session(repo, config, &s);
                out.push(s)
            }
            Err(e) => output::warn(format!("session \"{label}\": {e:#}")),
        }
    }
    Ok(out)
}

fn row(s: &Status, now: clock::Time) -> Vec<String> {
    let mut state = s.state.as_str().to_string();
    if s.locked.is_some() {
        state.push_str(" (locked)");
    }
    let merged = match s.merged {
        crate::git::Merged::No => String::new(),
        m => format!(" ({})", m.as_str()),
    };
    vec![
        s.record.label.clone(),
        state,
        clock::age(now - s.record.created),
        output::ago(s.last_activity, now),
        format!("{}{merged}", s.ahead),
        s.behind.to_string(),
        s.dirty.len().to_string(),
        s.owned.len().to_string(),
        output::percent(s.record.context.as_ref().and_then(|c| c.percent)),
        s.record.path.display().to_string(),
    ]
}
