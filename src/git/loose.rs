//! Loose objects read straight from their files, for the trees the guard compares.
//!
//! Why: `git commit` writes the trees of the commit it is about to make (loose objects) just
//! before it runs the pre-commit hook, so the guard's comparison reads a dozen of them on every
//! commit. libgit2 spends five system calls on each (it checks that the file exists, stats it,
//! opens, reads and closes it, the path walked three times), inflates into one buffer and hands
//! a copy; here the path is walked once (open, then `fstat`, one read and close on the file)
//! and the object inflates into the tree's own buffer.
//!
//! Invariants a reader must not break:
//! - This is a shortcut, never an authority: anything short of an object of the asked type
//!   whose inflated size is exactly the one its header declares (no file, a file that cannot be
//!   read, a damaged stream, another type, a header that does not parse) is `None`, and the
//!   caller asks libgit2, which reads packed objects too and reports every error as before.
//! - The objects directory is the one libgit2 reads: the common directory's `objects`, and no
//!   shortcut at all when `GIT_OBJECT_DIRECTORY` points elsewhere.
//! - Nothing allocates from the file's word before it is checked: the declared size is only a
//!   capacity hint, capped, and the bytes are bounded by what inflates.

use flate2::{Decompress, FlushDecompress, Status};
use git2::{Oid, Repository};
use std::io::Read;

/// The largest capacity taken on a header's word before any byte is inflated.
const HINT_CAP: usize = 1 << 20;

/// The loose object `id` of type `kind` (`b"tree"`), its body without the header; `None` when
/// this shortcut cannot answer (see the module's invariants).
pub(super) fn read(git: &Repository, id: Oid, kind: &[u8]) -> Option<Vec<u8>> {
    if std::env::var_os("GIT_OBJECT_DIRECTORY").is_some_and(|d| !d.is_empty()) {
        return None;
    }
    let hex = id.to_string();
    let mut path = git.commondir().join("objects");
    path.push(&hex[..2]);
    path.push(&hex[2..]);
    let mut file = std::fs::File::open(&path).ok()?;
    // Sized from the open file (no second path walk), read in one call: `read_to_end` would
    // also ask where the file offset is and read once more to see the end. A file that grew
    // meanwhile is read short and does not inflate whole: libgit2 answers then.
    let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
    let mut raw = Vec::new();
    raw.try_reserve_exact(len).ok()?;
    raw.resize(len, 0);
    file.read_exact(&mut raw).ok()?;
    inflate(&raw, kind)
}

/// The body of the zlib-compressed object `raw` when its header names `kind` and the body is
/// exactly the size the header declares.
fn inflate(raw: &[u8], kind: &[u8]) -> Option<Vec<u8>> {
    let mut z = Decompress::new(true);
    // The header (`tree 1234\0`) is at most a type name, a space, 20 digits and a NUL.
    let mut out: Vec<u8> = Vec::with_capacity(raw.len().saturating_mul(4).clamp(64, HINT_CAP));
    let mut header: Option<(usize, usize)> = None;
    loop {
        let consumed = z.total_in() as usize;
        let status = z
            .decompress_vec(raw.get(consumed..)?, &mut out, FlushDecompress::Finish)
            .ok()?;
        let full = out.len() == out.capacity();
        if header.is_none() {
            header = parse_header(&out, kind)?;
            if let Some((start, size)) = header {
                let want = start.checked_add(size)?;
                if want > out.capacity() {
                    out.reserve_exact(want.min(out.len() + HINT_CAP) - out.len());
                }
            }
        }
        // More than declared is never an object of this size: stop before inflating on.
        if header.is_some_and(|(start, size)| out.len() > start.saturating_add(size)) {
            return None;
        }
        match status {
            Status::StreamEnd => break,
            // Room ran out: inflate on into more; no progress at all is a damaged stream.
            Status::Ok | Status::BufError if full => {
                if out.len() == out.capacity() {
                    out.reserve(out.capacity().max(64));
                }
            }
            _ => return None,
        }
    }
    let (start, size) = header?;
    if out.len() != start.checked_add(size)? {
        return None;
    }
    out.drain(..start);
    Some(out)
}

/// `Some(Some((body start, size)))` for a whole header of type `kind`, `Some(None)` while the
/// header is not yet whole, `None` for any other header.
fn parse_header(out: &[u8], kind: &[u8]) -> Option<Option<(usize, usize)>> {
    let Some(nul) = memchr::memchr(0, out) else {
        return (out.len() < 32).then_some(None);
    };
    let (name, size) = out[..nul].split_at(memchr::memchr(b' ', &out[..nul])?);
    if name != kind || size.len() < 2 || size.len() > 21 {
        return None;
    }
    let digits = &size[1..];
    if !digits.iter().all(u8::is_ascii_digit) || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let size: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(Some((nul + 1, size)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compress, Compression, FlushCompress};

    fn deflate(bytes: &[u8]) -> Vec<u8> {
        let mut c = Compress::new(Compression::default(), true);
        let mut out = Vec::with_capacity(bytes.len() + 64);
        c.compress_vec(bytes, &mut out, FlushCompress::Finish)
            .unwrap();
        out
    }

    #[test]
    fn a_whole_object_of_the_asked_type_inflates_to_its_body() {
        let body: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut object = format!("tree {}\0", body.len()).into_bytes();
        object.extend_from_slice(&body);
        assert_eq!(inflate(&deflate(&object), b"tree"), Some(body));
        assert_eq!(inflate(&deflate(b"tree 0\0"), b"tree"), Some(Vec::new()));
        // Far more than four times its compressed size, as real trees are (repeated names).
        let names: Vec<u8> = (0..2000)
            .flat_map(|i| format!("100644 f{i:06}.txt\0{:020}", 0).into_bytes())
            .collect();
        let mut object = format!("tree {}\0", names.len()).into_bytes();
        object.extend_from_slice(&names);
        let packed = deflate(&object);
        assert!(
            packed.len() * 8 < object.len(),
            "{} of {}",
            packed.len(),
            object.len()
        );
        assert_eq!(inflate(&packed, b"tree"), Some(names));
    }

    /// Real git: the trees `git write-tree` leaves loose read the same both ways; once packed
    /// (no loose file) and for another type, the shortcut says nothing and libgit2 answers.
    #[test]
    fn trees_git_writes_read_as_libgit2_reads_them() {
        let tmp = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(tmp.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q"]);
        for i in 0..300 {
            let dir = tmp.path().join(format!("d{}", i % 7));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("file-{i:04}.txt")), format!("{i}\n")).unwrap();
        }
        git(&["add", "-A"]);
        let root = Oid::from_str(&git(&["write-tree"])).unwrap();
        let sub = Oid::from_str(&git(&["rev-parse", &format!("{root}:d3")])).unwrap();
        let blob =
            Oid::from_str(&git(&["rev-parse", &format!("{root}:d3/file-0003.txt")])).unwrap();
        let repo = Repository::open(tmp.path()).unwrap();
        let odb = repo.odb().unwrap();
        for id in [root, sub] {
            let theirs = odb.read(id).unwrap().data().to_vec();
            assert_eq!(read(&repo, id, b"tree"), Some(theirs), "{id}");
        }
        assert_eq!(read(&repo, blob, b"tree"), None, "a blob is no tree");
        git(&[
            "-c",
            "commit.gpgsign=false",
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "x",
        ]);
        git(&["repack", "-adq"]);
        git(&["prune-packed"]);
        assert_eq!(read(&repo, sub, b"tree"), None, "packed: no loose file");
        assert!(odb.read(sub).is_ok());
    }

    #[test]
    fn anything_else_is_left_to_libgit2() {
        let cases: [&[u8]; 8] = [
            b"blob 3\0abc",                                   // another type
            b"tree 4\0abc",                                   // shorter than declared
            b"tree 2\0abc",                                   // longer than declared
            b"tree 03\0abc",                                  // a leading zero
            b"tree +3\0abc",                                  // not digits
            b"tree\0abc",                                     // no size
            b"tree 99999999999999999999999\0",                // too long a size
            b"treeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", // no NUL in reach
        ];
        for case in cases {
            assert_eq!(inflate(&deflate(case), b"tree"), None, "{case:?}");
        }
        let good = deflate(b"tree 3\0abc");
        assert_eq!(inflate(&good[..good.len() - 5], b"tree"), None, "cut short");
        assert_eq!(inflate(b"not zlib at all", b"tree"), None);
        assert_eq!(inflate(b"", b"tree"), None);
    }
}
