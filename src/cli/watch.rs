//! `list --watch`: the list again whenever something it shows may have changed.
//!
//! What it watches ([`fingerprint`]) is file metadata only, read every [`TICK`]: the store's
//! session records, agent states and claims (every hook event that changes what an agent does
//! rewrites its state file), and git's HEAD, index and branch refs of every worktree. A change
//! there redraws at once; the list is also redrawn every [`REFRESH`], for what changes with time
//! alone (ages, `quiet`, an agent's process that ended, files edited but not staged). So the
//! cost per second is the same however long nothing happens, and the full list (a status of
//! every worktree) is computed only when the metadata moved or at the refresh.
//!
//! On a terminal the list is redrawn in place (screen cleared, cursor hidden while it runs),
//! keys are read without echo, and `q` or Ctrl-C ends it with the terminal as it was. Elsewhere
//! (a pipe, a file) each changed list is printed plainly once, followed by an empty line; Ctrl-C
//! (or SIGTERM, SIGHUP) ends it.

use crate::store::Store;
use anyhow::Result;
use std::hash::{Hash, Hasher};
use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the metadata is looked at.
pub const TICK: Duration = Duration::from_millis(500);

/// How often the list is computed again though nothing it watches moved.
pub const REFRESH: Duration = Duration::from_secs(10);

/// Runs until `q`, Ctrl-C, SIGTERM or SIGHUP. `render(on_terminal)` computes the text to show;
/// `fingerprint` says whether anything watched changed.
pub fn run(
    mut render: impl FnMut(bool) -> Result<String>,
    mut fingerprint: impl FnMut() -> u64,
) -> Result<()> {
    let terminal = std::io::stdout().is_terminal();
    let stop = crate::base::process::interrupt_flag();
    let keys = Keys::start();
    let _cursor = terminal.then(Cursor::hide);
    let mut shown: Option<String> = None;
    let mut seen: Option<u64> = None;
    let mut computed = Instant::now();
    loop {
        let now_seen = fingerprint();
        if seen != Some(now_seen) || computed.elapsed() >= REFRESH {
            seen = Some(now_seen);
            computed = Instant::now();
            let text = render(terminal)?;
            if shown.as_deref() != Some(text.as_str()) {
                draw(&text, terminal)?;
                shown = Some(text);
            }
        }
        let deadline = Instant::now() + TICK;
        while Instant::now() < deadline {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if keys.quit(Duration::from_millis(50)) {
                return Ok(());
            }
        }
    }
}

fn draw(text: &str, terminal: bool) -> Result<()> {
    if terminal {
        // Home, clear the screen, then the list; the escapes only where a terminal reads them.
        let mut out = std::io::stdout().lock();
        write!(out, "\x1b[H\x1b[2J")?;
        out.flush()?;
        drop(out);
        crate::cli::output::styled_line(text)?;
        let hint = anstyle::Style::new().dimmed();
        crate::cli::output::styled_line(format!("{hint}(q or Ctrl-C ends){hint:#}"))?;
    } else {
        crate::cli::output::styled_line(format!("{text}\n"))?;
    }
    std::io::stdout().flush()?;
    Ok(())
}

/// The cursor hidden while the list is redrawn, shown again however the loop ends.
struct Cursor;

impl Cursor {
    fn hide() -> Cursor {
        let _ = write!(std::io::stdout(), "\x1b[?25l");
        Cursor
    }
}

impl Drop for Cursor {
    fn drop(&mut self) {
        let _ = write!(std::io::stdout(), "\x1b[?25h");
        let _ = std::io::stdout().flush();
    }
}

/// The keys typed on a terminal stdin, read without waiting for Enter and without echo; the
/// terminal's settings come back when this is dropped.
struct Keys {
    rx: Option<mpsc::Receiver<u8>>,
    saved: Option<nix::sys::termios::Termios>,
}

impl Keys {
    fn start() -> Keys {
        use nix::sys::termios::{self, LocalFlags, SetArg};
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Keys {
                rx: None,
                saved: None,
            };
        }
        let saved = termios::tcgetattr(&stdin).ok();
        if let Some(old) = &saved {
            let mut raw = old.clone();
            // Keys one at a time and unseen; ISIG stays, so Ctrl-C is still SIGINT.
            raw.local_flags
                .remove(LocalFlags::ICANON | LocalFlags::ECHO);
            let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &raw);
        }
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            let mut input = std::io::stdin();
            while let Ok(1) = input.read(&mut byte) {
                if tx.send(byte[0]).is_err() {
                    break;
                }
            }
        });
        Keys {
            rx: Some(rx),
            saved,
        }
    }

    /// Whether `q` (or Ctrl-C read as a key) came within `wait`.
    fn quit(&self, wait: Duration) -> bool {
        match &self.rx {
            Some(rx) => match rx.recv_timeout(wait) {
                Ok(b) => matches!(b, b'q' | b'Q' | 0x03),
                Err(_) => false,
            },
            None => {
                std::thread::sleep(wait);
                false
            }
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        if let Some(old) = &self.saved {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                old,
            );
        }
    }
}

/// A hash of the metadata (name, size, modification time) of what the list shows: the store's
/// `sessions/`, `agents/` and `claims/`, and git's HEAD, index, packed refs and branch refs of
/// the repository and of every linked worktree. No file is read.
pub fn fingerprint(common_dir: &Path, store: &Store) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for dir in ["sessions", "agents", "claims"] {
        entries(&store.root().join(dir), 0, &mut h);
    }
    for name in ["HEAD", "index", "packed-refs"] {
        meta(&common_dir.join(name), &mut h);
    }
    entries(&common_dir.join("refs/heads"), 4, &mut h);
    if let Ok(worktrees) = std::fs::read_dir(common_dir.join("worktrees")) {
        let mut dirs: Vec<_> = worktrees.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            d.hash(&mut h);
            for name in ["HEAD", "index"] {
                meta(&d.join(name), &mut h);
            }
        }
    }
    h.finish()
}

/// The metadata of every entry of `dir`, sorted, descending `depth` levels more.
fn entries(dir: &Path, depth: usize, h: &mut impl Hasher) {
    let Ok(read) = std::fs::read_dir(dir) else {
        0u8.hash(h);
        return;
    };
    let mut paths: Vec<_> = read.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        meta(&p, h);
        if depth > 0 && p.is_dir() {
            entries(&p, depth - 1, h);
        }
    }
}

fn meta(path: &Path, h: &mut impl Hasher) {
    path.hash(h);
    if let Ok(m) = std::fs::symlink_metadata(path) {
        m.len().hash(h);
        m.modified().ok().hash(h);
    }
}
