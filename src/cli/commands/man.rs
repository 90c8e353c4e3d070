//! `git session man [DIR]`: man pages generated from the clap command tree.
//!
//! Without DIR the pages go where `man` finds them for this binary, so `git session --help`
//! (which git turns into `man git-session`) works after a `cargo install`: man-db searches
//! `<prefix>/share/man` for every `<prefix>/bin` on `PATH`, so a binary in `~/.cargo/bin` gets
//! `~/.cargo/share/man/man1`. A binary outside a `bin` directory falls back to the XDG data
//! directory (`~/.local/share/man/man1`).
//!
//! One page for the top command (`git-session.1`) and one for every subcommand at any depth
//! (`git-session-create.1`, `git-session-handoff-write.1`, ...), named the way `man` looks for
//! git subcommands, so `man git-session-create` finds its page. clap's `help` pseudo-command is
//! no command of ours and gets no page.
//!
//! Invariant: the pages depend only on the command tree (no date, no environment), so the
//! checked-in copies under `man/man1/` can be compared byte for byte (tests/it/generated.rs).

use crate::cli::output;
use crate::cli::user_error::UserError;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Write man pages for git-session and each of its subcommands into a directory
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to write the pages into (created when missing) [default: <prefix>/share/man/man1
    /// beside this binary's <prefix>/bin, where man finds them]
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Every page as (file name, roff text), the top command first.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    // Pages for real commands only: clap's `help` pseudo-command (and its copy of the whole
    // tree, `git-session-help-create` ...) is left out, and left out of the pages' lists too.
    let mut cmd = without_help_command(crate::cli::command());
    // Building fills in each subcommand's display name (`git-session-create`), which becomes
    // its page's title and file name.
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let mut out = Vec::new();
    collect(&cmd, &version, &mut out)?;
    Ok(out)
}

fn without_help_command(cmd: clap::Command) -> clap::Command {
    cmd.disable_help_subcommand(true)
        .mut_subcommands(without_help_command)
}

fn collect(cmd: &clap::Command, version: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    out.push(render(cmd, version)?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, version, out)?;
    }
    Ok(())
}

/// The man directory beside the `git-session` that git runs: the first `PATH` entry holding
/// one, when that entry is a `bin` directory (an install such as `~/.cargo/bin`, `~/.local/bin`
/// or `/usr/local/bin`, a symlink there included); man-db and macOS's man search
/// `<prefix>/share/man` for every `<prefix>/bin` on `PATH`. A build directory is no install and
/// gets nothing written beside it unasked.
fn beside_the_installed_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let dir = std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .find(|d| d.join("git-session").is_file())?;
    let prefix = dir
        .file_name()
        .is_some_and(|n| n == "bin")
        .then(|| dir.parent())??;
    Some(prefix.join("share/man/man1"))
}

/// Writes the pages beside the installed binary (see [`beside_the_installed_binary`]) when they
/// are missing there or from another build (its top page differs), so that `git session
/// --help`, which git hands straight to `man`, finds them from the first command run after an
/// install. Says so in one line when it wrote; anything in the way (a read-only prefix) leaves
/// the pages unwritten and the command unharmed.
pub fn ensure_installed() {
    let Some(dir) = beside_the_installed_binary() else {
        return;
    };
    let Ok(top) = top_page() else {
        return;
    };
    if std::fs::read(dir.join(format!("{TOP_PAGE}.1"))).is_ok_and(|have| have == top) {
        return;
    }
    let Ok(pages) = pages() else {
        return;
    };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    for (name, text) in &pages {
        if std::fs::write(dir.join(name), text).is_err() {
            return;
        }
    }
    output::note(format!(
        "installed the man pages beside this binary ({}), for `git session --help`",
        dir.display()
    ));
}

/// The top command's page alone (what [`pages`] writes first).
fn top_page() -> Result<Vec<u8>> {
    let mut cmd = without_help_command(crate::cli::command());
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    render(&cmd, &version).map(|(_, text)| text)
}

/// One command's page as (file name, roff text).
fn render(cmd: &clap::Command, version: &str) -> Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("git-session {version}"))
        .manual("git-session manual");
    let mut buf = Vec::new();
    man.render(&mut buf)
        .with_context(|| format!("rendering the man page {}", man.get_filename()))?;
    Ok((man.get_filename(), buf))
}

/// Where `man` looks for this binary's pages (see the module doc).
fn default_dir() -> Result<PathBuf> {
    if let Some(dir) = beside_the_installed_binary() {
        return Ok(dir);
    }
    let exe = std::env::current_exe().context("finding this binary's path")?;
    if let Some(bin) = exe
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "bin"))
    {
        if let Some(prefix) = bin.parent() {
            return Ok(prefix.join("share/man/man1"));
        }
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .ok_or_else(|| {
            UserError::refused("no place for the man pages: HOME is not set")
                .hinted("name a directory: git session man DIR")
        })?;
    Ok(data.join("man/man1"))
}

pub fn run(args: Args) -> Result<()> {
    let dir = match args.dir {
        Some(d) => d,
        None => default_dir()?,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(
            UserError::refused(format!("{} exists and is not a directory", dir.display()))
                .hinted("name a directory to write the man pages into, such as man/")
                .into(),
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let pages = pages()?;
    for (name, text) in &pages {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    output::note(where_written(pages.len(), &dir));
    Ok(())
}

/// The one line `git session man` ends with: where the pages went, and whether `man` finds
/// them there (it is asked) or what makes it (MANPATH names the parent of `man1/`).
fn where_written(count: usize, dir: &Path) -> String {
    let wrote = format!("wrote {count} man pages to {}", dir.display());
    let Some(found) = man_finds(TOP_PAGE) else {
        return format!("{wrote}; man is not installed, so `git session --help` prints the help");
    };
    let here = |p: &Path| {
        p.parent()
            .and_then(|d| d.canonicalize().ok())
            .zip(dir.canonicalize().ok())
            .is_some_and(|(a, b)| a == b)
    };
    if found.as_deref().is_some_and(here) {
        return format!("{wrote}; man finds them there");
    }
    let parent = dir.parent().unwrap_or(dir);
    format!(
        "{wrote}; man does not search there: export MANPATH=\"{}:$MANPATH\"",
        parent.display()
    )
}

/// The page of the top command.
const TOP_PAGE: &str = "git-session";

/// The hidden first argument of git's man viewer for our pages: `git -c man.viewer=git-session
/// -c 'man.git-session.cmd=git-session __man'` (what the shell integration gives
/// `git session --help`) runs `git-session __man PAGE`.
pub const VIEWER_COMMAND: &str = "__man";

/// Where `man` finds `page`: `None` when there is no `man` to ask, `Some(None)` when it has no
/// such page.
fn man_finds(page: &str) -> Option<Option<PathBuf>> {
    let out = std::process::Command::new("man")
        .args(["-w", page])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Some((out.status.success() && !path.is_empty()).then(|| PathBuf::from(path)))
}

/// `git-session __man PAGE`, a man viewer for git: `man PAGE` where man has the page (or the page
/// is not ours), else the page this binary carries, through `man -l` from a temporary file, or,
/// with no `man` at all, the command's long help. Never man's "no manual entry" for our pages.
pub fn view(page: &str) -> i32 {
    let ours = page == TOP_PAGE || page.starts_with("git-session-");
    let found = man_finds(page);
    if !ours || matches!(found, Some(Some(_))) {
        return exec_man(&[page]);
    }
    let carried = pages()
        .ok()
        .and_then(|p| p.into_iter().find(|(name, _)| *name == format!("{page}.1")));
    let Some((name, text)) = carried else {
        return exec_man(&[page]);
    };
    if found.is_none() {
        return print_long_help(page);
    }
    let shown = tempfile::Builder::new()
        .prefix("git-session-man.")
        .tempdir()
        .and_then(|dir| {
            let file = dir.path().join(name);
            std::fs::write(&file, &text)?;
            let status = std::process::Command::new("man")
                .arg("-l")
                .arg(&file)
                .status()?;
            Ok(status.code().unwrap_or(1))
        });
    match shown {
        Ok(code) => code,
        Err(_) => print_long_help(page),
    }
}

/// Replaces this process with `man ARGS` (as git would have run it); returns only on failure.
fn exec_man(args: &[&str]) -> i32 {
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new("man").args(args).exec();
    crate::cli::report::report(&UserError::refused(format!("cannot run man: {err}")).into())
}

/// The long help of the command whose page is `page`, on stdout.
fn print_long_help(page: &str) -> i32 {
    let mut cmd = without_help_command(crate::cli::command());
    cmd.build();
    let text = find_page(&mut cmd, page)
        .map(|c| c.render_long_help().to_string())
        .unwrap_or_default();
    match output::line(text.trim_end()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

fn find_page<'a>(cmd: &'a mut clap::Command, page: &str) -> Option<&'a mut clap::Command> {
    if cmd.get_display_name().unwrap_or(cmd.get_name()) == page {
        return Some(cmd);
    }
    cmd.get_subcommands_mut()
        .find_map(|sub| find_page(sub, page))
}
