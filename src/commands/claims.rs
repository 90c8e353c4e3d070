//! `git session claims [--json]`: every claim of every session, and whether it is in force.

use super::helper::CommandHelper;
use crate::clock;
use crate::output;
use crate::ownership;
use crate::session;
use anyhow::Result;
use serde_json::json;

/// List path claims: path, session, how, since, and whether the claim is in force (live)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array of {path, label, how, since, live}
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    let records = session::load_all(&cx.store)?;
    let claims = ownership::claims_with_state(&cx.repo, config, &records)?;
    if args.json {
        let rows: Vec<_> = claims
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
        return Ok(output::json(&serde_json::Value::Array(rows))?);
    }
    if claims.is_empty() {
        output::note("no claims; sessions claim paths with `git session claim PATH`");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = claims
        .iter()
        .map(|(label, c, live)| {
            vec![
                ownership::show_path(&c.path),
                label.to_string(),
                c.how.as_str().to_string(),
                clock::rfc3339(c.since),
                if *live { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    output::line(output::table(
        &["PATH", "LABEL", "HOW", "SINCE", "LIVE"],
        &rows,
    ))?;
    Ok(())
}
