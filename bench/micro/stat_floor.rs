//! The floor of any dirty-file count, for `bench/list_wt.py`: `stat_floor WORKTREE INDEX ...`
//! decodes each worktree's index and makes one `fstatat` per entry, relative to its directory
//! (opened once, as the status walk opens it), the worktrees spread over the cores (rayon), and
//! nothing else: no `readdir`, no comparison, no ignore rules, no session records. What `list`
//! spends beyond this is everything that is not the per-file stat.

// A measuring tool run by hand: a failure to read its input is its answer.
#![allow(clippy::unwrap_used)]

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode};
use rayon::prelude::*;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pairs: Vec<(&String, &String)> = args
        .chunks(2)
        .filter_map(|c| Some((c.first()?, c.get(1)?)))
        .collect();
    let stats: usize = pairs
        .par_iter()
        .map(|(worktree, index)| {
            let index = git_session::internals::Index::read(Path::new(index)).expect("an index");
            let root = Path::new(worktree);
            let mut open: Option<(Vec<u8>, Dir)> = None;
            let mut found = 0;
            for i in 0..index.entries.len() {
                let path = index.path(i);
                let (dir, name) = match path.iter().rposition(|&b| b == b'/') {
                    Some(s) => (&path[..s], &path[s + 1..]),
                    None => (&path[..0], path),
                };
                if open.as_ref().is_none_or(|(d, _)| d.as_slice() != dir) {
                    let at = root.join(std::ffi::OsStr::from_bytes(dir));
                    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
                    open = Dir::open(&at, flags, Mode::empty())
                        .ok()
                        .map(|d| (dir.to_vec(), d));
                }
                if let Some((_, d)) = &open {
                    let st = fstatat(Some(d.as_raw_fd()), name, AtFlags::AT_SYMLINK_NOFOLLOW);
                    found += usize::from(st.is_ok());
                }
            }
            found
        })
        .sum();
    println!("{stats}");
}
