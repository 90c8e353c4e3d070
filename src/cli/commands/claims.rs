//! `git session claims [--json]`: every claim of every session, and whether it is in force.

use crate::base::clock;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::ownership;
use crate::session;
use anyhow::Result;
use serde_json::json;

/// List path claims: path, session, how, since, and whether the claim is in force (live)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array of {path, label, how, since, live} (claims of other clones, with
    /// [claims] remote: how "elsewhere", and host, clone, expires)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    let records = session::load_all(&cx.store)?;
    let claims = ownership::claims_with_state(&cx.repo, config, &records)?;
    // Claims of other clones, as the last claim, release or sync saw them on the remote.
    let text = config
        .claims_remote
        .as_ref()
        .and_then(|_| crate::shared_claims::view::text(&cx.store));
    let view = text.as_deref().and_then(crate::shared_claims::view::parse);
    let now = clock::now().timestamp();
    let elsewhere: Vec<&crate::shared_claims::view::Entry> = view
        .as_ref()
        .map(|v| v.claims.iter().filter(|c| c.clone != v.clone).collect())
        .unwrap_or_default();
    let at = |s: i64| clock::rfc3339(chrono::DateTime::from_timestamp(s, 0).unwrap_or_default());
    if args.json {
        let mut rows: Vec<_> = claims
            .iter()
            .map(|(label, c, live)| {
                json!({
                    "version": output::JSON_VERSION,
                    "path": c.path,
                    "label": label,
                    "how": c.how.as_str(),
                    "since": clock::rfc3339(c.since),
                    "live": live,
                })
            })
            .collect();
        rows.extend(elsewhere.iter().map(|c| {
            json!({
                "version": output::JSON_VERSION,
                "path": c.path,
                "label": c.label,
                "how": "elsewhere",
                "since": at(c.since),
                "live": c.expires > now,
                "host": c.host,
                "clone": c.clone,
                "expires": at(c.expires),
            })
        }));
        return Ok(output::json(&serde_json::Value::Array(rows))?);
    }
    if claims.is_empty() && elsewhere.is_empty() {
        output::note("no claims; sessions claim paths with `git session claim PATH`");
        return Ok(());
    }
    let mut rows: Vec<Vec<String>> = claims
        .iter()
        .map(|(label, c, live)| {
            vec![
                crate::base::quote::show_path(&c.path),
                label.to_string(),
                c.how.as_str().to_string(),
                clock::rfc3339(c.since),
                if *live { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    rows.extend(elsewhere.iter().map(|c| {
        vec![
            crate::base::quote::show_path(&c.path),
            format!("{} on {}", c.label, c.host),
            "elsewhere".to_string(),
            at(c.since),
            if c.expires > now { "yes" } else { "no" }.to_string(),
        ]
    }));
    output::line(output::table(
        &["PATH", "LABEL", "HOW", "SINCE", "LIVE"],
        &rows,
    ))?;
    Ok(())
}
