//! Tree objects read as their raw bytes and parsed lazily, entry by entry.
//!
//! Why not `git2::Tree`: libgit2 parses every entry of a tree it loads into an entry array
//! (each mode through `strtol`), which was a tenth of the guard's instructions; the guard and
//! the status walk only ever merge two trees' entries in order and descend into the few
//! subtrees whose ids differ. Here a tree is the object's bytes (a loose one straight from its
//! file, [`super::loose`]; otherwise through libgit2's object database, with the hash
//! verification [`super::configure_libgit2`] turns off), and [`RawTree::entries`] walks them
//! without allocating.
//!
//! Invariant: the bytes are untrusted. A malformed entry (no space after the mode, a mode that is
//! not octal, no NUL after the name, fewer than 20 id bytes left) ends the walk with an error,
//! never a panic or a read past the end.

use super::Objects;
use anyhow::{anyhow, Context, Result};
use git2::{ObjectType, Oid, Repository};

/// A tree object's bytes.
pub struct RawTree {
    id: Oid,
    data: Vec<u8>,
}

/// One entry of a [`RawTree`], borrowed from its bytes.
#[derive(Clone, Copy, Debug)]
pub struct RawEntry<'t> {
    pub name: &'t [u8],
    /// The mode as git compares it (libgit2's normalisation: any executable bit makes an
    /// executable blob, a directory is `040000`, `160000` a submodule, `120000` a link, the
    /// rest a plain blob), so a legacy `100664` equals `100644`.
    pub mode: u32,
    id: &'t [u8],
}

const MODE_TYPE: u32 = 0o170000;
const MODE_TREE: u32 = 0o040000;
const MODE_COMMIT: u32 = 0o160000;
const MODE_LINK: u32 = 0o120000;
const MODE_BLOB: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;

fn normalize(mode: u32) -> u32 {
    match mode & MODE_TYPE {
        MODE_TREE => MODE_TREE,
        _ if mode & 0o111 != 0 => MODE_EXEC,
        MODE_COMMIT => MODE_COMMIT,
        MODE_LINK => MODE_LINK,
        _ => MODE_BLOB,
    }
}

impl RawEntry<'_> {
    /// A directory (a submodule is not one: it has no entries here).
    pub fn is_tree(&self) -> bool {
        self.mode == MODE_TREE
    }

    /// The entry's object id, as raw bytes.
    pub fn id_bytes(&self) -> &[u8] {
        self.id
    }

    pub fn id(&self) -> Oid {
        // 20 bytes by construction (`Entries::next`), which `from_bytes` accepts.
        Oid::from_bytes(self.id).unwrap_or_else(|_| Oid::zero())
    }
}

impl RawTree {
    /// Reads tree `id`. An object of another type is an error.
    pub fn read(repo: Objects<'_>, id: Oid) -> Result<RawTree> {
        let odb = repo.git.odb().context("opening the object database")?;
        let object = odb.read(id).with_context(|| format!("reading tree {id}"))?;
        if object.kind() != ObjectType::Tree {
            return Err(anyhow!("object {id} is a {}, not a tree", object.kind()));
        }
        Ok(RawTree {
            id,
            data: object.data().to_vec(),
        })
    }

    /// [`Self::read`] for a tree just written (the index's, which `git commit` writes loose
    /// before its pre-commit hook): its file is tried first, before libgit2 looks in the packs.
    pub fn read_new(repo: Objects<'_>, id: Oid) -> Result<RawTree> {
        match super::loose::read(repo.git, id, b"tree") {
            Some(data) => Ok(RawTree { id, data }),
            None => RawTree::read(repo, id),
        }
    }

    pub fn id(&self) -> Oid {
        self.id
    }

    /// The entries in the tree's own order (git's tree order).
    pub fn entries(&self) -> Entries<'_> {
        Entries {
            rest: &self.data,
            tree: self.id,
        }
    }

    /// The libgit2 tree of the same id, for the one caller that hands a tree to libgit2 (its
    /// diff, the fallback for indexes the fast routes leave aside).
    pub(super) fn to_libgit2<'r>(&self, repo: &'r Repository) -> Result<git2::Tree<'r>> {
        repo.find_tree(self.id)
            .with_context(|| format!("reading tree {}", self.id))
    }
}

/// The iterator of [`RawTree::entries`]: `Err` once on a malformed entry, then nothing.
pub struct Entries<'t> {
    rest: &'t [u8],
    tree: Oid,
}

impl<'t> Iterator for Entries<'t> {
    type Item = Result<RawEntry<'t>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let parsed = parse_entry(self.rest);
        match parsed {
            Some((entry, used)) => {
                self.rest = &self.rest[used..];
                Some(Ok(entry))
            }
            None => {
                self.rest = &[];
                Some(Err(anyhow!("tree {} is malformed", self.tree)))
            }
        }
    }
}

/// `<octal mode> <name>\0<20-byte id>`: the entry and the bytes it took.
fn parse_entry(bytes: &[u8]) -> Option<(RawEntry<'_>, usize)> {
    let space = bytes.iter().position(|&b| b == b' ')?;
    if space == 0 || space > 7 {
        return None;
    }
    let mut mode = 0u32;
    for &b in &bytes[..space] {
        if !(b'0'..=b'7').contains(&b) {
            return None;
        }
        mode = mode * 8 + u32::from(b - b'0');
    }
    let name_start = space + 1;
    let nul = name_start + memchr::memchr(0, bytes.get(name_start..)?)?;
    let id_end = nul.checked_add(21)?;
    let id = bytes.get(nul + 1..id_end)?;
    let name = &bytes[name_start..nul];
    if name.is_empty() {
        return None;
    }
    Some((
        RawEntry {
            name,
            mode: normalize(mode),
            id,
        },
        id_end,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(mode: &str, name: &str, id: u8) -> Vec<u8> {
        let mut v = format!("{mode} {name}\0").into_bytes();
        v.extend_from_slice(&[id; 20]);
        v
    }

    #[test]
    fn entries_parse_with_modes_normalised_as_libgit2_does() {
        let mut data = Vec::new();
        for (mode, name) in [
            ("100644", "a"),
            ("100664", "b"),
            ("100755", "c"),
            ("120000", "d"),
            ("160000", "e"),
            ("40000", "f"),
        ] {
            data.extend(entry(mode, name, 7));
        }
        let tree = RawTree {
            id: Oid::zero(),
            data,
        };
        let got: Vec<(String, u32, bool)> = tree
            .entries()
            .map(|e| {
                let e = e.unwrap();
                (
                    String::from_utf8_lossy(e.name).into_owned(),
                    e.mode,
                    e.is_tree(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a".into(), 0o100644, false),
                ("b".into(), 0o100644, false),
                ("c".into(), 0o100755, false),
                ("d".into(), 0o120000, false),
                ("e".into(), 0o160000, false),
                ("f".into(), 0o040000, true),
            ]
        );
        assert_eq!(tree.entries().next().unwrap().unwrap().id_bytes(), &[7; 20]);
    }

    #[test]
    fn every_truncation_and_corruption_is_an_error_never_a_panic() {
        let first = entry("100644", "file.txt", 1);
        let good = [first.clone(), entry("40000", "dir", 2)].concat();
        // Every prefix of a good tree: either whole entries, or an error at the cut.
        for cut in 0..=good.len() {
            let tree = RawTree {
                id: Oid::zero(),
                data: good[..cut].to_vec(),
            };
            let results: Vec<_> = tree.entries().collect();
            let whole = [0, first.len(), good.len()].contains(&cut);
            assert_eq!(
                results.iter().any(|r| r.is_err()),
                !whole,
                "cut at {cut}: {results:?}"
            );
            assert!(results.iter().filter(|r| r.is_err()).count() <= 1);
        }
        for bad in [
            b"100644file\0".to_vec(),                       // no space
            b"10064x f\0".to_vec(),                         // not octal
            b" f\0".to_vec(),                               // empty mode
            b"100644 \0aaaaaaaaaaaaaaaaaaaa".to_vec(),      // empty name
            b"1006440000 f\0aaaaaaaaaaaaaaaaaaaa".to_vec(), // mode too long
            vec![0xff; 64],
        ] {
            let tree = RawTree {
                id: Oid::zero(),
                data: bad.clone(),
            };
            let first = tree.entries().next().unwrap();
            assert!(first.is_err(), "{bad:?}");
        }
    }
}
