//! `git session list`: one row per session, gathered in parallel.

use crate::base::clock;
use crate::cli::attention;
use crate::cli::gather::{gather, is_new};
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::config::list::ListSort;
use crate::context::attention::AgentView;
use crate::session::Status;
use anyhow::Result;

/// List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array (stable keys; see docs/json.md)
    #[arg(long)]
    pub json: bool,
    /// Every column and full paths, even on a narrow terminal
    #[arg(long)]
    pub wide: bool,
    /// Order of the sessions: by label, or the agents that need you first (waiting for a
    /// permission, then for input, the longest wait first; then gone, quiet, working, ended)
    /// [default: `[list] sort` of the configuration, else label]
    #[arg(long, value_enum)]
    pub sort: Option<Sort>,
    /// Redraw in place on a terminal whenever a session or an agent changes (plain output,
    /// once per change, elsewhere); q or Ctrl-C ends it
    #[arg(long, conflicts_with = "json")]
    pub watch: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sort {
    Label,
    Attention,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    cx.recover()?;
    let sort = args.sort.unwrap_or(match config.list.sort {
        ListSort::Label => Sort::Label,
        ListSort::Attention => Sort::Attention,
    });
    if args.watch {
        let mut first = true;
        return crate::cli::watch::run(
            |terminal| {
                let now = clock::now();
                let sessions = sessions(&cx, config, now, sort, std::mem::take(&mut first))?;
                let width = if args.wide || !terminal {
                    None
                } else {
                    terminal_width()
                };
                let disk = args.wide.then(|| disk_use(&cx, &sessions, now));
                Ok(match table(&sessions, now, width, disk.as_deref()) {
                    Some((mut text, left_out)) => {
                        for line in collision_lines(&cx, &sessions, width) {
                            text = format!("{text}\n{line}");
                        }
                        match left_out {
                            Some(note) => format!("{text}\n{note}"),
                            None => text,
                        }
                    }
                    None => NO_SESSIONS.to_string(),
                })
            },
            || crate::cli::watch::fingerprint(&cx.repo.common_dir, &cx.store),
        );
    }
    let now = clock::now();
    let sessions = sessions(&cx, config, now, sort, true)?;
    if args.json {
        let ordered: Vec<Status> = sessions.iter().map(|(s, _)| s.clone()).collect();
        let collisions = crate::lifecycle::collisions::collisions(&cx.repo, &cx.store, &ordered);
        let leases = crate::ownership::leases::all(&cx.store)?;
        let disk = disk_use(&cx, &sessions, now);
        let rows: Vec<_> = sessions
            .iter()
            .zip(&collisions)
            .zip(&disk)
            .map(|(((s, a), c), d)| {
                let mut row = output::versioned(output::status_json(s));
                if let Some(map) = row.as_object_mut() {
                    map.insert("agent".into(), attention::json(a.as_ref()));
                }
                row["collisions"] = crate::cli::words::merging::collisions_json(c);
                let lease = leases.get(s.record.label.as_str());
                row["resources"] = output::resources_json(lease);
                row["disk"] = output::disk_json(d.as_ref());
                row
            })
            .collect();
        return Ok(output::json(&serde_json::Value::Array(rows))?);
    }
    let width = if args.wide { None } else { terminal_width() };
    let disk = args.wide.then(|| disk_use(&cx, &sessions, now));
    let Some((text, left_out)) = table(&sessions, now, width, disk.as_deref()) else {
        output::note(NO_SESSIONS);
        return Ok(());
    };
    output::styled_line(text)?;
    for line in collision_lines(&cx, &sessions, width) {
        output::line(line)?;
    }
    if let Some(note) = left_out {
        output::note(note);
    }
    // Beside the sessions here, what sessions of other clones hold, as the last sync saw it.
    if let Some(remote) = &config.claims_remote {
        let text = crate::shared_claims::view::text(&cx.store);
        if let Some(view) = text.as_deref().and_then(crate::shared_claims::view::parse) {
            let now = clock::now().timestamp();
            let held = view.claims.iter().filter(|c| c.expires > now).count();
            if held > 0 {
                output::note(format!(
                    "{held} paths are claimed by sessions of other clones on {remote} \
                     (git session claims lists them)"
                ));
            }
        }
    }
    Ok(())
}

/// Each session's own disk use (`session::disk`: cached per change of its worktree).
fn disk_use(
    cx: &CommandHelper,
    sessions: &[(Status, Option<AgentView>)],
    now: clock::Time,
) -> Vec<Option<crate::session::disk::DiskUse>> {
    let statuses: Vec<&Status> = sessions.iter().map(|(s, _)| s).collect();
    crate::session::disk::of_sessions(&cx.store, &statuses, now)
}

/// The lines under the table: which sessions would conflict with their base now, and which
/// pairs changed the same paths (computed as `list --json`'s `collisions`, cached by tips).
fn collision_lines(
    cx: &CommandHelper,
    sessions: &[(Status, Option<AgentView>)],
    width: Option<usize>,
) -> Vec<String> {
    let ordered: Vec<Status> = sessions.iter().map(|(s, _)| s.clone()).collect();
    let found = crate::lifecycle::collisions::collisions(&cx.repo, &cx.store, &ordered);
    let rows: Vec<_> = ordered
        .iter()
        .zip(&found)
        .map(|(s, c)| (s.record.label.as_str(), s.record.base.as_str(), c))
        .collect();
    crate::cli::words::merging::collision_lines(&rows, width)
}

const NO_SESSIONS: &str = "no sessions; create one with `git session create LABEL`";

/// Every session's status and what its agent does, in the order asked; what the worktrees'
/// ground truth says beyond the table goes to stderr when `warn`.
fn sessions(
    cx: &CommandHelper,
    config: &crate::config::Config,
    now: clock::Time,
    sort: Sort,
    warn: bool,
) -> Result<Vec<(Status, Option<AgentView>)>> {
    let repo = &cx.repo;
    // Display only: the dirty counts may come from git's untracked cache where git would use it.
    let crate::cli::gather::Gathered { statuses, escaped } = gather(
        repo,
        config,
        now,
        crate::git::status::Untracked::AsGitStatus,
    )?;
    if warn {
        // Detached HEAD, operation in progress, missing branch, broken link ...: on stderr so
        // the table and JSON keep their shape.
        for s in &statuses {
            if let Some(line) = crate::cli::words::damage::line(s) {
                output::warn(line);
            }
            for w in &s.warnings {
                output::warn(format!("session \"{}\": {w}", s.record.label));
            }
        }
        if let Some(main) = &repo.main_worktree {
            for w in crate::cli::gather::escaped_into(&escaped, main) {
                output::warn(format!("the main worktree: {w}"));
            }
        }
        let worktrees: Vec<(String, std::path::PathBuf)> = statuses
            .iter()
            .map(|s| (s.record.label.to_string(), s.record.path.clone()))
            .collect();
        crate::cli::in_force::warn_unguarded(&repo.common_dir, &worktrees);
    }
    // What each session's agents do, judged now (their processes are looked at here).
    let mut sessions: Vec<(Status, Option<AgentView>)> = statuses
        .into_iter()
        .map(|s| {
            let agents = crate::context::attention::of_session(&cx.store, &s.record, now);
            let shown = crate::context::attention::summary(&agents).cloned();
            (s, shown)
        })
        .collect();
    if sort == Sort::Attention {
        // Stable: sessions that rank alike keep their order by label.
        sessions.sort_by_key(|(_, a)| {
            a.as_ref()
                .map_or((u8::MAX, now), |a| (a.shown.state.rank(), a.shown.since))
        });
    }
    Ok(sessions)
}

/// The table (styled) fitted to `width` when given, and the note saying which columns it left
/// out; `None` without sessions. `disk` (with `--wide`): a DISK column before PATH.
fn table(
    sessions: &[(Status, Option<AgentView>)],
    now: clock::Time,
    width: Option<usize>,
    disk: Option<&[Option<crate::session::disk::DiskUse>]>,
) -> Option<(String, Option<String>)> {
    if sessions.is_empty() {
        return None;
    }
    let places = Places::here();
    let mut rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|(s, a)| row(s, a.as_ref(), now, width.is_some().then_some(&places)))
        .collect();
    let mut header = vec![
        "LABEL", "AGENT", "STATE", "AGE", "ACTIVE", "AHEAD", "BEHIND", "DIRTY", "OWNED", "CONTEXT",
        "PATH",
    ];
    if let Some(disk) = disk {
        let at = header.len() - 1;
        header.insert(at, "DISK");
        for (row, d) in rows.iter_mut().zip(disk) {
            let cell = d
                .as_ref()
                .map_or("-".to_string(), |d| crate::session::disk::human(d.bytes));
            row.insert(at, cell);
        }
    }
    let (shown, rows) = match width {
        Some(w) => fit(&header, rows, w),
        None => (header.to_vec(), rows),
    };
    let text = output::table_styled(&shown, &rows, &cell_style);
    let dropped: Vec<&str> = header
        .iter()
        .filter(|c| !shown.contains(c))
        .copied()
        .collect();
    // Short enough for the narrowest terminal that drops all of them.
    let note = (width.is_some() && !dropped.is_empty())
        .then(|| format!("left out {}; list --wide shows all", dropped.join(", ")));
    Some((text, note))
}

/// Colour says what needs a look: a missing or locked session, uncommitted files, a context
/// close to compaction; a session's own commits stand out from merged or new ones.
fn cell_style(column: &str, text: &str) -> anstyle::Style {
    use anstyle::{AnsiColor, Style};
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    match column {
        "LABEL" => Style::new().bold(),
        "AGENT" => attention::style(text),
        "STATE" if text.starts_with("missing") => fg(AnsiColor::Red),
        "STATE"
            if text.contains("locked") || text.contains("kept") || text.starts_with("creating") =>
        {
            fg(AnsiColor::Yellow)
        }
        "STATE" if text.starts_with("active") => fg(AnsiColor::Green),
        "AHEAD" if text == "new" => fg(AnsiColor::Cyan),
        "AHEAD" if text.contains('(') => Style::new().dimmed(),
        "DIRTY" if text != "0" => fg(AnsiColor::Yellow),
        "CONTEXT" => match text.trim_end_matches('%').parse::<u32>() {
            Ok(p) if p >= 90 => fg(AnsiColor::Red),
            Ok(p) if p >= 70 => fg(AnsiColor::Yellow),
            _ => Style::new(),
        },
        _ => Style::new(),
    }
}

/// The width to fit, when stdout is a terminal (piped output is always full width).
fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let (terminal_size::Width(w), _) = terminal_size::terminal_size_of(std::io::stdout())?;
    Some(usize::from(w).max(20))
}

/// Columns dropped, least telling first, until the table fits: PATH first (`info` shows it),
/// and never LABEL, AGENT and OWNED, what this tool is for.
const DROP_ORDER: &[&str] = &[
    "PATH", "AGE", "BEHIND", "CONTEXT", "DIRTY", "ACTIVE", "AHEAD", "STATE",
];

/// The columns and cells of a table that fits in at most `width` columns: drops columns in
/// [`DROP_ORDER`] until it fits, or until only the ones never dropped are left.
pub fn fit<'h>(
    header: &[&'h str],
    rows: Vec<Vec<String>>,
    width: usize,
) -> (Vec<&'h str>, Vec<Vec<String>>) {
    let mut keep: Vec<usize> = (0..header.len()).collect();
    let pick = |keep: &[usize]| -> (Vec<&'h str>, Vec<Vec<String>>) {
        let h = keep.iter().map(|&i| header[i]).collect();
        let r = rows
            .iter()
            .map(|row| keep.iter().map(|&i| row[i].clone()).collect())
            .collect();
        (h, r)
    };
    let too_wide = |t: &str| t.lines().any(|l| l.chars().count() > width);
    for name in DROP_ORDER {
        let (h, r) = pick(&keep);
        if !too_wide(&output::table(&h, &r)) {
            return (h, r);
        }
        keep.retain(|&i| header[i] != *name);
    }
    pick(&keep)
}

/// Where paths are shown from: the current directory (`../repo.sessions/x` from the main
/// worktree, `../x` from a sibling session) or the home directory.
pub struct Places {
    here: Option<std::path::PathBuf>,
    home: Option<std::path::PathBuf>,
}

impl Places {
    pub fn here() -> Places {
        Places {
            here: std::env::current_dir()
                .ok()
                .map(|d| std::fs::canonicalize(&d).unwrap_or(d)),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(std::path::PathBuf::from),
        }
    }

    /// The shortest of: the path relative to the current directory, `~/...`, or the path as is.
    pub fn show(&self, path: &std::path::Path) -> String {
        let mut best = path.display().to_string();
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(rel) = self.here.as_deref().and_then(|h| relative(h, &real)) {
            if rel.len() < best.len() {
                best = rel;
            }
        }
        if let Some(home) = &self.home {
            if let Ok(r) = path.strip_prefix(home) {
                let tilde = format!("~/{}", r.display());
                if tilde.len() < best.len() {
                    best = tilde;
                }
            }
        }
        best
    }
}

/// `to` as seen from the directory `from` (both absolute): `.`, `sub/dir`, `../../x`. `None`
/// when they share nothing but the root.
pub fn relative(from: &std::path::Path, to: &std::path::Path) -> Option<String> {
    use std::path::Component;
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    if common <= 1
        || f.iter()
            .chain(&t)
            .any(|c| matches!(c, Component::ParentDir))
    {
        return None;
    }
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Some(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

fn row(
    s: &Status,
    agent: Option<&AgentView>,
    now: clock::Time,
    places: Option<&Places>,
) -> Vec<String> {
    let mut state = s.state.as_str().to_string();
    if s.locked.is_some() {
        state.push_str(" (locked)");
    }
    if s.record.kept.is_some() {
        // Its agent session ended while it held work: someone should look (see `info`).
        state.push_str(" (kept)");
    }
    let ahead = match s.merged {
        _ if is_new(s) => "new".to_string(),
        crate::git::Merged::No => s.ahead.to_string(),
        m => format!("{} ({})", s.ahead, m.as_str()),
    };
    vec![
        s.record.label.to_string(),
        attention::cell(agent, now),
        state,
        clock::age(now - s.record.created),
        output::ago(s.last_activity, now),
        ahead,
        s.behind.to_string(),
        s.dirty.len().to_string(),
        s.owned.to_string(),
        output::percent(s.record.context.as_ref().and_then(|c| c.percent)),
        match places {
            Some(p) => p.show(&s.record.path),
            None => s.record.path.display().to_string(),
        },
    ]
}
