//! `git session env [LABEL]`: a session's leased resources (`[resources]`) as environment, for
//! `eval "$(git session env)"` in a shell or a `.env` file (`--format dotenv`).
//!
//! Invariants: stdout holds the assignments alone, one a line, so `eval` and dotenv readers
//! take it whole; in the `sh` format every value is single-quoted where it is not plain (a
//! value cannot run anything when evaluated). A session holding nothing prints nothing and
//! says so on stderr; it is no error (a script may eval it whatever the configuration).

use crate::base::quote::shell_quote;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::session;
use anyhow::Result;

/// Print a session's ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  eval \"$(git session env)\"\n  \
                      git session env fix-login --format dotenv > .env.session")]
pub struct Args {
    /// Session label [default: the session of the current worktree, or GIT_SESSION]
    pub label: Option<String>,
    /// `sh`: `export K='V'` lines for eval; `dotenv`: `K=V` lines
    #[arg(long, value_enum, default_value = "sh")]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Sh,
    Dotenv,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    cx.config()?;
    cx.recover()?;
    let label = cx.given_or_acting(args.label, "git session env LABEL")?;
    session::require(&cx.store, &label)?;
    let Some(lease) = crate::ownership::leases::of(&cx.store, &label)? else {
        output::note(format!(
            "session \"{label}\" holds no ports or names ([resources] in .git-session.toml \
             gives them to new sessions)"
        ));
        return Ok(());
    };
    let lines: Vec<String> = lease
        .env()
        .into_iter()
        .map(|(k, v)| match args.format {
            Format::Sh => format!("export {k}={}", shell_quote(&v)),
            Format::Dotenv => format!("{k}={}", dotenv_value(&v)),
        })
        .collect();
    if !lines.is_empty() {
        output::line(lines.join("\n"))?;
    }
    Ok(())
}

/// A value as dotenv readers take it: bare when plain (ports, identifiers: what `[resources]`
/// makes), else double-quoted with `\`, `"` and `$` escaped.
fn dotenv_value(v: &str) -> String {
    if !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return v.to_string();
    }
    let mut out = String::from("\"");
    for c in v.chars() {
        if matches!(c, '\\' | '"' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}
