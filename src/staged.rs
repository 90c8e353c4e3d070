//! What a commit is about to change: the index git hands a hook, compared with HEAD.
//!
//! Why not `git2::Repository::diff_tree_to_index`: libgit2 hashes the whole index file to verify
//! its checksum, materialises every entry, and walks every tree of HEAD, so its cost grows with
//! the repository. The guard runs on every commit and must cost about a process start, its work
//! growing with what is staged, not with the repository. So this module reads the index file
//! itself (read-only; versions 2, 3 and 4) and answers by the first of three routes that applies:
//!
//! 1. **Two trees.** Before it runs the pre-commit hook, `git commit` (plain, `-a`, `-i`) brings
//!    the index's cache tree (its `TREE` extension) up to date and writes the trees it names:
//!    the root entry then names the very tree that will be committed. When the root entry is
//!    valid, counts every entry the header announces, and its tree is in the object database,
//!    the answer is HEAD's tree compared with that tree, reading only the subtrees whose ids
//!    differ. No entry of the index is read.
//! 2. **One forward pass** over the entries (a partial commit, `git commit <path>`, hands the hook
//!    a temporary index whose cache tree is only partly valid; so does an intent-to-add entry),
//!    compared with HEAD's trees as it goes, hopping over every directory whose cache-tree entry
//!    still matches HEAD: such a directory costs one read of each entry's flags, and nothing of
//!    it is kept. Only the entries of changed directories are decoded.
//! 3. **libgit2's diff**, slower but exact, for anything else: a split index, an unknown version
//!    or required extension, a pass that could not confirm where the extensions are.
//!
//! The cache tree is stored after the entries, and nothing tells where the entries end unless
//! git was asked to write an `EOIE` extension. So the extensions are found from the end of the
//! file: the chain of `<signature><length><body>` records that starts with `TREE` and ends
//! exactly at the checksum. That is a guess until it is confirmed. Route 1 confirms it by the
//! root entry counting exactly the header's entries and naming a tree that exists; route 2 by
//! the pass: the entries must end exactly where the extensions were found to start, and each
//! directory hopped over must start and end where its count says (its last entry is below it,
//! the next one is not). Anything else falls to route 3.
//!
//! Invariants: paths are raw bytes from the index, converted lossily only for display and claim
//! matching; nothing here runs a program or writes. Like git's own lookups, the reader relies on
//! the index being sorted by path, which every writer of it guarantees (consecutive decoded
//! entries are checked).

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid, Repository, Tree};
use std::path::Path;

const OID_LEN: usize = 20;
const MODE_DIR: u32 = 0o040000;
/// Bytes read at a time: small enough to stay in cache, large enough for few system calls.
const BLOCK: usize = 128 * 1024;
/// The first look at the end of the file for the extensions (a cache tree takes about 40 bytes
/// per directory); quadrupled until they are found.
const TAIL: usize = 16 * 1024;

/// The entry the cursor stands on, decoded.
struct Entry {
    path: Vec<u8>,
    mode: u32,
    oid: [u8; OID_LEN],
    stage: u8,
    intent_to_add: bool,
    /// Its size in the file, to step over it.
    size: usize,
}

/// One node of the cache tree: a directory whose tree id is known while `count >= 0`.
struct CacheNode {
    name: Vec<u8>,
    count: i64,
    oid: Option<Oid>,
    /// Sorted by name, for [`CacheNode::child`].
    children: Vec<CacheNode>,
}

impl CacheNode {
    fn child(&self, name: &[u8]) -> Option<&CacheNode> {
        self.children
            .binary_search_by(|c| c.name.as_slice().cmp(name))
            .ok()
            .map(|i| &self.children[i])
    }

    /// The directory's entry count, when its tree id is known to be `head`.
    fn unchanged_count(&self, head: Oid) -> Option<usize> {
        (self.count > 0 && self.oid == Some(head)).then_some(self.count as usize)
    }
}

/// Why the fast reader stepped aside.
#[derive(Debug)]
struct Unsupported(String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Unsupported {}

fn unsupported(why: impl Into<String>) -> anyhow::Error {
    Unsupported(why.into()).into()
}

/// Paths that differ between HEAD and the index at `index_path` (additions, modifications,
/// deletions, type changes; a rename shows as its old and its new path), sorted, unique.
pub fn staged_paths(repo: &Repository, index_path: &Path) -> Result<Vec<String>> {
    Ok(read_staged(repo, index_path)?.0)
}

/// How [`read_staged`] answered, for tests that pin the fast routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// The cache tree named the index's whole tree, present in the object database: HEAD's tree
    /// and it were compared, and no entry was read.
    Trees,
    /// The entries were walked; this many were hopped over without being decoded.
    Walk { hopped: usize },
    /// libgit2's diff answered.
    Libgit2,
}

/// [`staged_paths`], and the route that answered.
fn read_staged(repo: &Repository, index_path: &Path) -> Result<(Vec<String>, Route)> {
    let head_tree = head_tree(repo)?;
    let file = match std::fs::File::open(index_path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // No index at all: everything in HEAD would be deleted.
            let mut out = Vec::new();
            if let Some(t) = &head_tree {
                all_files(repo, t, b"", &mut out)?;
            }
            return Ok((finish(out), Route::Walk { hopped: 0 }));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", index_path.display())),
    };
    let fast = Cursor::open(file).and_then(|mut cursor| {
        if let Some(tree) = cursor.whole_tree(repo) {
            let mut out = Vec::new();
            // A tree of the index missing from the object database (a writer that only
            // computed the ids) leaves the answer to the walk, which needs no index trees.
            if diff_trees(repo, b"", head_tree.as_ref(), Some(&tree), &mut out).is_ok() {
                return Ok((out, Route::Trees));
            }
        }
        let cache = cursor.cache_tree();
        let mut walker = Walker {
            repo,
            cursor,
            out: Vec::new(),
        };
        walker.dir(b"", head_tree.as_ref(), cache.as_ref())?;
        walker.cursor.finish()?;
        let hopped = walker.cursor.hopped;
        Ok((walker.out, Route::Walk { hopped }))
    });
    match fast {
        Ok((out, route)) => Ok((finish(out), route)),
        Err(e) if e.downcast_ref::<Unsupported>().is_some() => Ok((
            libgit2_fallback(repo, index_path, head_tree.as_ref())?,
            Route::Libgit2,
        )),
        Err(e) => Err(e).with_context(|| format!("reading the index {}", index_path.display())),
    }
}

/// Paths a commit changed relative to its first parent (all its files for a root commit).
pub fn commit_paths(repo: &Repository, commit: &git2::Commit) -> Result<Vec<String>> {
    let tree = commit.tree().context("reading the commit's tree")?;
    let mut out = Vec::new();
    match commit.parents().next() {
        Some(parent) => {
            let parent_tree = parent.tree().context("reading the parent's tree")?;
            diff_trees(repo, b"", Some(&parent_tree), Some(&tree), &mut out)?;
        }
        None => all_files(repo, &tree, b"", &mut out)?,
    }
    Ok(finish(out))
}

fn head_tree(repo: &Repository) -> Result<Option<Tree<'_>>> {
    match repo.head() {
        Ok(head) => Ok(Some(head.peel_to_tree().context("reading HEAD's tree")?)),
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e).context("reading HEAD"),
    }
}

fn finish(raw: Vec<Vec<u8>>) -> Vec<String> {
    let mut out: Vec<String> = raw
        .into_iter()
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(prefix.len() + name.len() + 1);
    p.extend_from_slice(prefix);
    p.extend_from_slice(name);
    p
}

/// A tree entry as paths: the file itself, or every file below a directory.
fn push_entry(
    repo: &Repository,
    e: &git2::TreeEntry<'_>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    let path = join(prefix, e.name_bytes());
    if e.kind() == Some(ObjectType::Tree) {
        let sub = repo.find_tree(e.id()).context("reading a tree of HEAD")?;
        let mut dir = path;
        dir.push(b'/');
        all_files(repo, &sub, &dir, out)
    } else {
        out.push(path);
        Ok(())
    }
}

/// Every file below `tree`, as `prefix`-joined paths.
fn all_files(repo: &Repository, tree: &Tree, prefix: &[u8], out: &mut Vec<Vec<u8>>) -> Result<()> {
    for e in tree.iter() {
        push_entry(repo, &e, prefix, out)?;
    }
    Ok(())
}

fn is_tree(e: &git2::TreeEntry<'_>) -> bool {
    e.kind() == Some(ObjectType::Tree)
}

/// Paths that differ between two trees. Both list their entries in git's tree order, so they
/// are merged in one pass, and only subtrees whose ids differ are read.
fn diff_trees(
    repo: &Repository,
    prefix: &[u8],
    old: Option<&Tree>,
    new: Option<&Tree>,
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    use std::cmp::Ordering;
    let (a, b) = match (old, new) {
        (None, None) => return Ok(()),
        (Some(t), None) | (None, Some(t)) => return all_files(repo, t, prefix, out),
        (Some(a), Some(b)) if a.id() == b.id() => return Ok(()),
        (Some(a), Some(b)) => (a, b),
    };
    let (mut ia, mut ib) = (a.iter().peekable(), b.iter().peekable());
    loop {
        // A file and a directory of the same name are different entries in tree order: a
        // type change shows as the file's path and the directory's files.
        let order = match (ia.peek(), ib.peek()) {
            (None, None) => return Ok(()),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(x), Some(y)) => {
                tree_order(x.name_bytes(), is_tree(x), y.name_bytes(), is_tree(y))
            }
        };
        match order {
            Ordering::Less => push_entry(repo, &ia.next().expect("peeked"), prefix, out)?,
            Ordering::Greater => push_entry(repo, &ib.next().expect("peeked"), prefix, out)?,
            Ordering::Equal => {
                let (x, y) = (ia.next().expect("peeked"), ib.next().expect("peeked"));
                if x.id() == y.id() && x.filemode() == y.filemode() {
                    continue;
                }
                let path = join(prefix, x.name_bytes());
                if is_tree(&x) {
                    let tx = repo.find_tree(x.id()).context("reading a tree")?;
                    let ty = repo.find_tree(y.id()).context("reading a tree")?;
                    let mut dir = path;
                    dir.push(b'/');
                    diff_trees(repo, &dir, Some(&tx), Some(&ty), out)?;
                } else {
                    out.push(path);
                }
            }
        }
    }
}

/// The comparison of the index with HEAD, directory by directory, in index order.
struct Walker<'r> {
    repo: &'r Repository,
    cursor: Cursor,
    out: Vec<Vec<u8>>,
}

impl Walker<'_> {
    /// Consumes every entry below `prefix` (`<dir>/`, or empty for the whole index), comparing
    /// them with `head`, HEAD's tree there if it has one. The index's entries at this level and
    /// HEAD's tree entries come in the same order (git's tree order, a directory sorting as its
    /// name followed by `/`), so the two are merged: HEAD's entries passed over without a match
    /// are deletions.
    fn dir(&mut self, prefix: &[u8], head: Option<&Tree>, cache: Option<&CacheNode>) -> Result<()> {
        if let (Some(c), Some(h)) = (cache, head) {
            if let Some(count) = c.unchanged_count(h.id()) {
                return self.cursor.skip(count, prefix);
            }
        }
        let head: Vec<git2::TreeEntry> = head.map(|h| h.iter().collect()).unwrap_or_default();
        let mut next_head = 0;
        while let Some(e) = self.cursor.peek()? {
            if !e.path.starts_with(prefix) {
                break;
            }
            let rest = &e.path[prefix.len()..];
            match rest.iter().position(|&b| b == b'/') {
                Some(slash) if slash + 1 < rest.len() || e.mode != MODE_DIR => {
                    // A directory: every following entry under `<name>/` belongs to it.
                    let name = rest[..slash].to_vec();
                    let dir = join(&e.path[..prefix.len() + slash], b"/");
                    let child = cache.and_then(|c| c.child(&name));
                    // (A file of HEAD by the same name sorts before it: a deletion.)
                    let sub = match self.merge_head(&head, &mut next_head, prefix, &name, true)? {
                        Some(h) => {
                            // Unchanged per the cache tree: hop over it without loading
                            // HEAD's subtree.
                            if let Some(count) = child.and_then(|c| c.unchanged_count(h.id())) {
                                self.cursor.skip(count, &dir)?;
                                continue;
                            }
                            Some(
                                self.repo
                                    .find_tree(h.id())
                                    .context("reading a tree of HEAD")?,
                            )
                        }
                        None => None,
                    };
                    self.dir(&dir, sub.as_ref(), child)?;
                }
                Some(slash) => {
                    // A sparse-index directory entry `<name>/` holding a tree id.
                    let name = rest[..slash].to_vec();
                    let dir = e.path.clone();
                    let new = self
                        .repo
                        .find_tree(Oid::from_bytes(&e.oid)?)
                        .context("reading a sparse directory's tree")?;
                    self.cursor.advance()?;
                    match self.merge_head(&head, &mut next_head, prefix, &name, true)? {
                        Some(h) => {
                            let old = self
                                .repo
                                .find_tree(h.id())
                                .context("reading a tree of HEAD")?;
                            diff_trees(self.repo, &dir, Some(&old), Some(&new), &mut self.out)?;
                        }
                        None => all_files(self.repo, &new, &dir, &mut self.out)?,
                    }
                }
                None => {
                    // A file, possibly in several conflict stages. (A directory of HEAD by the
                    // same name sorts after it and is reported deleted when passed.)
                    let name = rest.to_vec();
                    let (path, mode, oid, stage) = (e.path.clone(), e.mode, e.oid, e.stage);
                    let mut stages = 0;
                    let mut all_intent = true;
                    while let Some(e) = self.cursor.peek()? {
                        if e.path != path {
                            break;
                        }
                        all_intent &= e.intent_to_add;
                        stages += 1;
                        self.cursor.advance()?;
                    }
                    let matched = self.merge_head(&head, &mut next_head, prefix, &name, false)?;
                    if all_intent {
                        continue;
                    }
                    let same = matched.is_some_and(|h| {
                        stages == 1
                            && stage == 0
                            && h.id().as_bytes() == oid
                            && h.filemode() as u32 == mode
                    });
                    if !same {
                        self.out.push(path);
                    }
                }
            }
        }
        // What HEAD has here beyond the index's last entry: deletions.
        for h in &head[next_head..] {
            push_entry(self.repo, h, prefix, &mut self.out)?;
        }
        Ok(())
    }

    /// Moves through `head` (HEAD's entries at `prefix`) up to the index's `name` (a directory
    /// if `dir`): the entries passed over are deletions; returns HEAD's entry of that name and
    /// kind, if any.
    fn merge_head<'t>(
        &mut self,
        head: &'t [git2::TreeEntry<'t>],
        next: &mut usize,
        prefix: &[u8],
        name: &[u8],
        dir: bool,
    ) -> Result<Option<&'t git2::TreeEntry<'t>>> {
        while let Some(h) = head.get(*next) {
            let h_dir = h.kind() == Some(ObjectType::Tree);
            match tree_order(h.name_bytes(), h_dir, name, dir) {
                std::cmp::Ordering::Less => {
                    push_entry(self.repo, h, prefix, &mut self.out)?;
                    *next += 1;
                }
                std::cmp::Ordering::Equal => {
                    *next += 1;
                    return Ok(Some(h));
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        Ok(None)
    }
}

/// Git's order of names in a tree: bytewise, a directory's name compared as if followed by `/`.
fn tree_order(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n]).then_with(|| {
        let next = |s: &[u8], dir: bool| s.get(n).copied().or(dir.then_some(b'/'));
        next(a, a_dir).cmp(&next(b, b_dir))
    })
}

/// A forward-only reader of the index's entries, through one reused block of the file.
struct Cursor {
    file: std::fs::File,
    version: u32,
    /// Entries the header announces, and how many were passed.
    count: usize,
    passed: usize,
    /// File offset of the next entry.
    pos: usize,
    /// Entries stepped over without being decoded.
    hopped: usize,
    /// Where the extensions start, when found from the end of the file (see the module doc).
    extensions_at: Option<usize>,
    /// Where the checksum starts: nothing of the entries or extensions lies beyond.
    end: usize,
    /// The `TREE` extension's body, parsed only when the walk needs it.
    cache_body: Option<Vec<u8>>,
    buf: Vec<u8>,
    /// File offset of `buf[0]`, and how many of its bytes are read.
    buf_at: usize,
    filled: usize,
    /// The entry at `pos`, once decoded.
    current: Option<Entry>,
    /// The last decoded path: version 4 paths are stored as an edit of it, and the order of
    /// consecutive decoded entries is checked against it.
    previous: Vec<u8>,
}

impl Cursor {
    fn open(file: std::fs::File) -> Result<Cursor> {
        let size = file.metadata().context("reading the index")?.len() as usize;
        if size < 12 + OID_LEN {
            bail!("not a git index (too short)");
        }
        if u32::try_from(size).is_err() {
            return Err(unsupported("an index over 4 GiB"));
        }
        let mut cursor = Cursor {
            file,
            version: 0,
            count: 0,
            passed: 0,
            pos: 12,
            hopped: 0,
            extensions_at: None,
            end: size - OID_LEN,
            cache_body: None,
            // Allocated on the first read of entries: the tree route reads none.
            buf: Vec::new(),
            buf_at: 0,
            filled: 0,
            current: None,
            previous: Vec::new(),
        };
        let mut head = [0u8; 12];
        if read_full(&cursor.file, &mut head, 0)? < head.len() {
            bail!("not a git index (too short)");
        }
        if &head[..4] != b"DIRC" {
            bail!("not a git index (bad signature)");
        }
        let (version, count) = (be32(&head, 4)?, be32(&head, 8)? as usize);
        cursor.version = version;
        cursor.count = count;
        if !(2..=4).contains(&cursor.version) {
            return Err(unsupported(format!("index version {}", cursor.version)));
        }
        cursor.find_extensions()?;
        Ok(cursor)
    }

    /// Looks for the extensions from the end of the file (a guess the pass confirms): the
    /// earliest `TREE` record whose chain of records ends exactly at the checksum.
    fn find_extensions(&mut self) -> Result<()> {
        let mut tail = TAIL;
        loop {
            let from = self.end.saturating_sub(tail).max(12);
            let mut bytes = vec![0; self.end - from];
            let got = read_full(&self.file, &mut bytes, from)?;
            if got < bytes.len() {
                bail!("the index is truncated");
            }
            let mut at = 0;
            while let Some(i) = find(&bytes[at..], b"TREE") {
                let start = at + i;
                if let Some(records) = chain(&bytes[start..]) {
                    for (sig, body) in records {
                        match sig {
                            b"TREE" => self.cache_body = Some(body.to_vec()),
                            // Optional extensions start with an upper-case letter; the rest
                            // change what the entries mean.
                            s if s[0].is_ascii_uppercase() => {}
                            s => {
                                return Err(unsupported(format!(
                                    "index extension {}",
                                    String::from_utf8_lossy(s)
                                )))
                            }
                        }
                    }
                    self.extensions_at = Some(from + start);
                    return Ok(());
                }
                at = start + 1;
            }
            if from == 12 {
                // No cache tree: every directory is compared.
                return Ok(());
            }
            tail *= 4;
        }
    }

    /// The tree the index holds, when its cache tree names it: the root entry is valid and
    /// covers every entry (none is unmerged or intent-to-add, which the cache tree leaves out),
    /// and the object database has that tree. That is the tree `git commit` will commit; it
    /// brings the cache tree up to date, writing the trees, before it runs the pre-commit hook.
    ///
    /// The extensions were found from the end of the file without the pass that confirms them;
    /// here the confirmation is that the root entry names an existing tree and counts exactly
    /// the entries the header announces, which a misread stretch of the file cannot do.
    fn whole_tree<'r>(&self, repo: &'r Repository) -> Option<Tree<'r>> {
        let (count, oid) = cache_root(self.cache_body.as_deref()?)?;
        if count != self.count {
            return None;
        }
        repo.find_tree(oid).ok()
    }

    /// The whole cache tree, for the walk; `None` when there is none or it does not parse.
    fn cache_tree(&mut self) -> Option<CacheNode> {
        let body = self.cache_body.take()?;
        parse_cache_node(&body, &mut 0, 0).ok()
    }

    /// `n` bytes at file offset `at`, read through the block.
    fn bytes(&mut self, at: usize, n: usize) -> Result<&[u8]> {
        if at < self.buf_at || at + n > self.buf_at + self.filled {
            if self.buf.len() < n.max(BLOCK) {
                self.buf.resize(n.max(BLOCK).next_power_of_two(), 0);
            }
            let want = self.buf.len().min((self.end + OID_LEN).saturating_sub(at));
            let got = read_full(&self.file, &mut self.buf[..want], at)?;
            self.buf_at = at;
            self.filled = got;
            if got < n {
                bail!("the index is truncated");
            }
        }
        Ok(&self.buf[at - self.buf_at..at - self.buf_at + n])
    }

    /// Offset of the first NUL at or after `at`, before the checksum.
    fn nul(&mut self, at: usize) -> Result<usize> {
        let mut n = 64;
        loop {
            let n_now = n.min(self.end.saturating_sub(at));
            let bytes = self.bytes(at, n_now)?;
            if let Some(i) = bytes.iter().position(|&b| b == 0) {
                return Ok(at + i);
            }
            if n_now < n {
                bail!("the index is truncated");
            }
            n *= 2;
        }
    }

    /// The entry at the cursor, `None` after the last one.
    fn peek(&mut self) -> Result<Option<&Entry>> {
        if self.current.is_none() && self.passed < self.count {
            let entry = self.decode()?;
            if entry.path.as_slice() < self.previous.as_slice() {
                return Err(unsupported("the index is not sorted by path"));
            }
            self.previous.clone_from(&entry.path);
            self.current = Some(entry);
        }
        Ok(self.current.as_ref())
    }

    /// Steps past the entry at the cursor.
    fn advance(&mut self) -> Result<()> {
        if self.peek()?.is_none() {
            bail!("the index ended early");
        }
        let e = self.current.take().expect("peeked");
        self.pos += e.size;
        self.passed += 1;
        Ok(())
    }

    /// Steps over the `n` entries of directory `dir` (`<name>/`, empty for the whole index),
    /// the first being the one at the cursor, without decoding them (version 4 paths must
    /// still be followed), then confirms that the last one was below `dir` and the next one is
    /// not.
    fn skip(&mut self, n: usize, dir: &[u8]) -> Result<()> {
        if n == 0 || self.passed + n > self.count {
            return Err(unsupported("a cache-tree count beyond the index"));
        }
        let mut left = n;
        let mut last = None;
        if let Some(e) = self.current.take() {
            self.pos += e.size;
            self.passed += 1;
            left -= 1;
            last = Some(e.path);
        }
        if left > 0 {
            if self.version == 4 {
                for _ in 0..left - 1 {
                    let e = self.decode()?;
                    self.previous = e.path;
                    self.pos += e.size;
                }
            } else {
                self.hop(left - 1)?;
                self.hopped += left - 1;
            }
            self.passed += left - 1;
            let e = self.decode()?;
            if e.path.as_slice() < self.previous.as_slice() {
                return Err(unsupported("the index is not sorted by path"));
            }
            self.previous.clone_from(&e.path);
            self.pos += e.size;
            self.passed += 1;
            last = Some(e.path);
        }
        let mismatch = || unsupported("a cache-tree count that does not match the entries");
        if !last.is_some_and(|p| p.starts_with(dir)) {
            return Err(mismatch());
        }
        if self.peek()?.is_some_and(|next| next.path.starts_with(dir)) {
            return Err(mismatch());
        }
        Ok(())
    }

    /// Steps over `n` version 2 or 3 entries from `pos`, reading only their flags (which hold
    /// the path's length).
    fn hop(&mut self, mut n: usize) -> Result<()> {
        while n > 0 {
            // The loop that matters on a large index: entries inside the block.
            let mut pos = self.pos;
            let block_end = self.buf_at + self.filled;
            while n > 0 && pos >= self.buf_at && pos + 64 <= block_end {
                let i = pos - self.buf_at;
                let flags = u16::from_be_bytes([self.buf[i + 60], self.buf[i + 61]]);
                let len = (flags & 0x0fff) as usize;
                if len == 0x0fff {
                    break;
                }
                let fixed = if flags & 0x4000 != 0 { 64 } else { 62 };
                pos += entry_size(fixed, len);
                n -= 1;
            }
            self.pos = pos;
            if n > 0 {
                // At the block's end, or a path too long for the flags to hold its length.
                let flags = be16(self.bytes(self.pos + 60, 2)?, 0)?;
                let fixed = if flags & 0x4000 != 0 { 64 } else { 62 };
                let len = match (flags & 0x0fff) as usize {
                    0x0fff => self.nul(self.pos + fixed)? - self.pos - fixed,
                    len => len,
                };
                self.pos += entry_size(fixed, len);
                n -= 1;
            }
        }
        Ok(())
    }

    /// Decodes the entry at `pos`.
    fn decode(&mut self) -> Result<Entry> {
        let at = self.pos;
        let version = self.version;
        if at + 62 > self.end {
            bail!("the index is truncated");
        }
        let fixed_part = self.bytes(at, 64.min(self.end - at))?;
        let mode = be32(fixed_part, 24)?;
        let mut oid = [0u8; OID_LEN];
        oid.copy_from_slice(&fixed_part[40..60]);
        let flags = be16(fixed_part, 60)?;
        let mut fixed = 62;
        let mut intent_to_add = false;
        if flags & 0x4000 != 0 {
            if version < 3 {
                bail!("extended flags in a version 2 index");
            }
            intent_to_add = be16(fixed_part, 62)? & 0x2000 != 0;
            fixed = 64;
        }
        let (path, size) = if self.version == 4 {
            let head = self.bytes(at + fixed, 10.min(self.end.saturating_sub(at + fixed)))?;
            let mut used = 0;
            let strip = varint(head, &mut used)?;
            let name_at = at + fixed + used;
            let nul = self.nul(name_at)?;
            let keep = self
                .previous
                .len()
                .checked_sub(strip)
                .context("bad path compression in the index")?;
            let mut path = Vec::with_capacity(keep + nul - name_at);
            path.extend_from_slice(&self.previous[..keep]);
            path.extend_from_slice(self.bytes(name_at, nul - name_at)?);
            (path, nul + 1 - at)
        } else {
            let len = match (flags & 0x0fff) as usize {
                0x0fff => self.nul(at + fixed)? - at - fixed,
                len => len,
            };
            (
                self.bytes(at + fixed, len)?.to_vec(),
                entry_size(fixed, len),
            )
        };
        if at + size > self.end {
            bail!("the index is truncated");
        }
        Ok(Entry {
            path,
            mode,
            oid,
            stage: ((flags >> 12) & 3) as u8,
            intent_to_add,
            size,
        })
    }

    /// After the walk: every entry was passed, and they end where the extensions were found to
    /// start; if they were not found, the extensions after the entries are checked now.
    fn finish(&mut self) -> Result<()> {
        if self.passed != self.count {
            bail!("the index ended early");
        }
        match self.extensions_at {
            Some(at) if at == self.pos => Ok(()),
            Some(_) => Err(unsupported("index extensions not where they were found")),
            None => {
                let len = self
                    .end
                    .checked_sub(self.pos)
                    .context("the index is truncated")?;
                let mut bytes = vec![0; len];
                if read_full(&self.file, &mut bytes, self.pos)? < bytes.len() {
                    bail!("the index is truncated");
                }
                let records = chain(&bytes).context("bad index extensions")?;
                for (sig, _) in records {
                    if !sig[0].is_ascii_uppercase() {
                        return Err(unsupported(format!(
                            "index extension {}",
                            String::from_utf8_lossy(sig)
                        )));
                    }
                }
                Ok(())
            }
        }
    }
}

/// The size in the file of a version 2 or 3 entry: its fixed part and path, NUL-padded to a
/// multiple of eight bytes (at least one NUL).
fn entry_size(fixed: usize, path_len: usize) -> usize {
    (fixed + path_len + 8) & !7
}

/// Position of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(i) = hay[at..].iter().position(|&b| b == needle[0]) {
        if hay[at + i..].starts_with(needle) {
            return Some(at + i);
        }
        at += i + 1;
    }
    None
}

/// `bytes` split into extension records (`<4-byte signature><be32 length><body>`), when they
/// cover it exactly and every signature is four ASCII letters.
fn chain(bytes: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let sig = bytes.get(at..at + 4)?;
        if !sig.iter().all(u8::is_ascii_alphabetic) {
            return None;
        }
        let len = be32(bytes, at + 4).ok()? as usize;
        let body = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
        records.push((sig, body));
        at += 8 + len;
    }
    Some(records)
}

fn be32(data: &[u8], at: usize) -> Result<u32> {
    let bytes = data.get(at..at + 4).context("the index is truncated")?;
    Ok(u32::from_be_bytes(bytes.try_into().expect("4 bytes")))
}

fn be16(data: &[u8], at: usize) -> Result<u16> {
    let bytes = data.get(at..at + 2).context("the index is truncated")?;
    Ok(u16::from_be_bytes(bytes.try_into().expect("2 bytes")))
}

/// Git's offset varint (index v4 path compression).
fn varint(data: &[u8], at: &mut usize) -> Result<usize> {
    let mut c = *data.get(*at).context("the index is truncated")?;
    *at += 1;
    let mut val = (c & 127) as usize;
    while c & 128 != 0 {
        val = val.checked_add(1).context("bad varint in the index")?;
        c = *data.get(*at).context("the index is truncated")?;
        *at += 1;
        val = val
            .checked_mul(128)
            .and_then(|v| v.checked_add((c & 127) as usize))
            .context("bad varint in the index")?;
    }
    Ok(val)
}

/// Reads into `buf` at file offset `at` until it is full or the file ends; returns the count.
fn read_full(file: &std::fs::File, buf: &mut [u8], at: usize) -> Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], (at + got) as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading the index"),
        }
    }
    Ok(got)
}

/// The root entry of a cache tree, when valid: how many index entries it covers, and its tree.
fn cache_root(body: &[u8]) -> Option<(usize, Oid)> {
    let rest = body.strip_prefix(b"\0")?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let (count, _subtrees) = std::str::from_utf8(&rest[..nl]).ok()?.split_once(' ')?;
    let count: usize = count.parse().ok()?;
    let oid = Oid::from_bytes(rest.get(nl + 1..nl + 1 + OID_LEN)?).ok()?;
    Some((count, oid))
}

/// Deepest cache-tree nesting read, so damaged bytes cannot exhaust the stack; a deeper tree
/// is treated like a damaged one, which the walk does without (slower, same answer).
const MAX_CACHE_DEPTH: usize = 1024;

/// Smallest encoded cache-tree node: a NUL-ended empty name and `"0 0\n"`.
const MIN_CACHE_NODE: usize = 5;

/// Whether a `TREE` extension's body reads within bounds: nesting at most
/// [`MAX_CACHE_DEPTH`], every subtree count within the bytes left.
pub fn cache_tree_is_sound(body: &[u8]) -> bool {
    parse_cache_node(body, &mut 0, 0).is_ok()
}

fn parse_cache_node(body: &[u8], pos: &mut usize, depth: usize) -> Result<CacheNode> {
    if depth > MAX_CACHE_DEPTH {
        bail!("bad cache tree (nested deeper than {MAX_CACHE_DEPTH})");
    }
    let nul = body[*pos..]
        .iter()
        .position(|&b| b == 0)
        .context("bad cache tree")?;
    let name = body[*pos..*pos + nul].to_vec();
    *pos += nul + 1;
    let nl = body[*pos..]
        .iter()
        .position(|&b| b == b'\n')
        .context("bad cache tree")?;
    let line = std::str::from_utf8(&body[*pos..*pos + nl]).context("bad cache tree")?;
    *pos += nl + 1;
    let (count, subtrees) = line.split_once(' ').context("bad cache tree")?;
    let count: i64 = count.parse().context("bad cache tree")?;
    let subtrees: usize = subtrees.parse().context("bad cache tree")?;
    let oid = if count >= 0 {
        let bytes = body
            .get(*pos..pos.saturating_add(OID_LEN))
            .context("bad cache tree")?;
        *pos += OID_LEN;
        Some(Oid::from_bytes(bytes)?)
    } else {
        None
    };
    // The subtree count comes from the file: each takes MIN_CACHE_NODE bytes at least.
    if subtrees > (body.len() - *pos) / MIN_CACHE_NODE {
        bail!("bad cache tree (more subtrees than bytes)");
    }
    let mut children = Vec::with_capacity(subtrees);
    for _ in 0..subtrees {
        children.push(parse_cache_node(body, pos, depth + 1)?);
    }
    // Git keeps them sorted by length first; lookups here go by name.
    children.sort_unstable_by(|a: &CacheNode, b| a.name.cmp(&b.name));
    Ok(CacheNode {
        name,
        count,
        oid,
        children,
    })
}

fn libgit2_fallback(
    repo: &Repository,
    index_path: &Path,
    head: Option<&Tree>,
) -> Result<Vec<String>> {
    crate::status::fit_for_libgit2(index_path)?;
    let index = git2::Index::open(index_path)
        .with_context(|| format!("reading the index {}", index_path.display()))?;
    let mut opts = git2::DiffOptions::new();
    opts.include_typechange(true);
    let diff = repo
        .diff_tree_to_index(head, Some(&index), Some(&mut opts))
        .context("comparing the index with HEAD")?;
    let mut out = Vec::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path_bytes() {
                out.push(p.to_vec());
            }
        }
    }
    Ok(finish(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A repository driven by the real `git`, hermetic.
    struct Repo {
        dir: tempfile::TempDir,
    }

    impl Repo {
        fn new() -> Repo {
            let repo = Repo {
                dir: tempfile::tempdir().unwrap(),
            };
            repo.git(&["init", "-q", "-b", "main"]);
            repo
        }

        fn git(&self, args: &[&str]) -> String {
            let out = self.command(args).output().unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        }

        fn command(&self, args: &[&str]) -> Command {
            let mut cmd = Command::new("git");
            cmd.args(args)
                .current_dir(self.dir.path())
                .env("HOME", self.dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "T")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "T")
                .env("GIT_COMMITTER_EMAIL", "t@example.com")
                .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
                .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
                .env("TZ", "UTC");
            cmd
        }

        fn write(&self, path: &str, text: &str) {
            let p = self.dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }

        /// What this module reads, the route that answered, and what git says.
        fn compare(&self) -> (Vec<String>, Route, Vec<String>) {
            self.compare_index(&self.dir.path().join(".git/index"))
        }

        /// [`Self::compare`] for the index file at `index`.
        fn compare_index(&self, index: &Path) -> (Vec<String>, Route, Vec<String>) {
            let git2 = Repository::open(self.dir.path()).unwrap();
            let (ours, route) = read_staged(&git2, index).unwrap();
            let out = self
                .command(&["diff", "--cached", "--no-renames", "--name-only", "-z"])
                .env("GIT_INDEX_FILE", index)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let mut theirs: Vec<String> = String::from_utf8(out.stdout)
                .unwrap()
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect();
            theirs.sort();
            (ours, route, theirs)
        }

        /// Deletes a loose object, as if the writer of the index had only computed its id.
        fn drop_object(&self, oid: &str) {
            let oid = oid.trim();
            let path = self
                .dir
                .path()
                .join(".git/objects")
                .join(&oid[..2])
                .join(&oid[2..]);
            std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }

    /// A tree with directories whose names sort around `/` and one named like the extension.
    fn populated() -> Repo {
        let repo = Repo::new();
        for dir in ["a", "a-b", "a.b", "a/b", "a/b/c", "big", "m/n", "TREE", "z"] {
            for i in 0..12 {
                repo.write(&format!("{dir}/f{i:02}.txt"), "one\n");
            }
        }
        for f in ["a.txt", "top", "TREE.md", "zz"] {
            repo.write(f, "one\n");
        }
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "tree"]);
        repo
    }

    fn change(repo: &Repo) {
        repo.write("a/b/f03.txt", "two\n");
        repo.write("TREE/f11.txt", "two\n");
        repo.write("m/n/new.txt", "new\n");
        std::fs::remove_file(repo.dir.path().join("a-b/f07.txt")).unwrap();
        std::fs::remove_file(repo.dir.path().join("top")).unwrap();
        repo.write("top/inner.txt", "now a directory\n");
        std::fs::remove_dir_all(repo.dir.path().join("z")).unwrap();
        repo.write("z", "now a file\n");
        repo.write("new/dir/file.txt", "new\n");
        repo.git(&["add", "-A"]);
    }

    #[test]
    fn every_index_version_with_and_without_a_cache_tree_is_read_exactly_and_fast() {
        let repo = populated();
        for version in ["2", "3", "4"] {
            for eoie in ["false", "true"] {
                for fresh_cache_tree in [true, false] {
                    repo.git(&["reset", "-q", "--hard", "HEAD"]);
                    repo.git(&["clean", "-q", "-fd"]);
                    repo.git(&["config", "index.recordEndOfIndexEntries", eoie]);
                    repo.git(&["update-index", "--index-version", version]);
                    change(&repo);
                    if fresh_cache_tree {
                        repo.git(&["write-tree"]);
                    }
                    let (ours, route, theirs) = repo.compare();
                    let case = format!("v{version} eoie {eoie} cache tree {fresh_cache_tree}");
                    assert_eq!(ours, theirs, "{case}");
                    assert!(ours.len() >= 20, "{case}: {ours:?}");
                    if fresh_cache_tree {
                        // What `git commit` hands its hook: two trees compared, no entry read.
                        assert_eq!(route, Route::Trees, "{case}");
                    } else {
                        // `git add` invalidated the root: the entries are walked.
                        assert!(matches!(route, Route::Walk { .. }), "{case}: {route:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn nothing_staged_with_a_fresh_cache_tree_reads_no_entries() {
        let repo = populated();
        repo.git(&["write-tree"]);
        let (ours, route, theirs) = repo.compare();
        assert!(ours.is_empty() && theirs.is_empty());
        assert_eq!(route, Route::Trees);
    }

    /// The tree route is taken only when the cache tree names every entry's tree and the
    /// object database has it; otherwise the walk answers, as exactly.
    #[test]
    fn the_index_tree_route_steps_aside_when_it_cannot_be_sure() {
        // An intent-to-add entry: the cache tree is valid but leaves it out.
        let repo = populated();
        change(&repo);
        repo.write("big/planned.txt", "later\n");
        repo.git(&["add", "-N", "big/planned.txt"]);
        repo.git(&["write-tree"]);
        for version in ["2", "3", "4"] {
            repo.git(&["update-index", "--index-version", version]);
            let (ours, route, theirs) = repo.compare();
            assert_eq!(ours, theirs, "v{version}");
            // Unchanged directories are hopped over (version 4 paths are decoded as they go).
            let Route::Walk { hopped } = route else {
                panic!("v{version}: {route:?}");
            };
            assert!(version == "4" || hopped > 0, "v{version}");
        }

        // The index's root tree, then only one of its subtrees, missing from the objects.
        for missing in ["", "TREE"] {
            let repo = populated();
            change(&repo);
            let root = repo.git(&["write-tree"]);
            let oid = if missing.is_empty() {
                root
            } else {
                repo.git(&["rev-parse", &format!("{}:{missing}", root.trim())])
            };
            repo.drop_object(&oid);
            let (ours, route, theirs) = repo.compare();
            assert_eq!(ours, theirs, "missing {missing:?}");
            assert!(
                matches!(route, Route::Walk { .. }),
                "missing {missing:?}: {route:?}"
            );
        }
    }

    /// Pins the git behaviour route 1 relies on: the index `git commit` hands its pre-commit
    /// hook names its whole tree, with the trees written, for a plain commit, `-a` and `-i`; a
    /// partial commit (`git commit <path>`) hands a temporary index that is walked.
    #[test]
    fn the_index_git_commit_hands_its_hook_is_read_as_two_trees() {
        let repo = populated();
        let hook = repo.dir.path().join(".git/hooks/pre-commit");
        std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
        // Keep a copy of what the hook was handed, then refuse: the commit never happens.
        std::fs::write(
            &hook,
            "#!/bin/sh\ncp \"$GIT_INDEX_FILE\" .git/seen-index\nexit 1\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cases: [(&str, &[&str], bool); 4] = [
            ("plain", &["commit", "-q", "-m", "x"], true),
            ("-a", &["commit", "-q", "-a", "-m", "x"], true),
            (
                "-i",
                &["commit", "-q", "-m", "x", "-i", "a/b/f03.txt"],
                true,
            ),
            ("<path>", &["commit", "-q", "-m", "x", "a/b/f03.txt"], false),
        ];
        for (name, args, trees) in cases {
            repo.git(&["reset", "-q", "--hard", "HEAD"]);
            repo.git(&["clean", "-q", "-fd"]);
            repo.write("a/b/f03.txt", "two\n");
            repo.write("big/f05.txt", "two\n");
            repo.write("m/n/new.txt", "new\n");
            repo.git(&["add", "m/n/new.txt"]);
            if name == "plain" {
                repo.git(&["add", "-A"]);
            }
            let refused = repo.command(args).output().unwrap();
            assert!(
                !refused.status.success(),
                "{name}: the hook must have run and refused"
            );
            let (ours, route, theirs) =
                repo.compare_index(&repo.dir.path().join(".git/seen-index"));
            assert_eq!(ours, theirs, "{name}");
            assert!(!ours.is_empty(), "{name}");
            if trees {
                assert_eq!(route, Route::Trees, "{name}");
            } else {
                assert!(matches!(route, Route::Walk { .. }), "{name}: {route:?}");
            }
        }
    }

    #[test]
    fn conflicts_and_intent_to_add_are_read_exactly() {
        let repo = populated();
        repo.git(&["checkout", "-q", "-b", "other"]);
        repo.write("a/f01.txt", "other\n");
        repo.git(&["commit", "-q", "-am", "other"]);
        repo.git(&["checkout", "-q", "main"]);
        repo.write("a/f01.txt", "main\n");
        repo.git(&["commit", "-q", "-am", "main"]);
        let merge = repo.command(&["merge", "-q", "other"]).output().unwrap();
        assert!(!merge.status.success(), "the merge must conflict");
        assert!(repo.git(&["ls-files", "-u"]).contains("a/f01.txt"));
        repo.write("m/n/planned.txt", "later\n");
        repo.git(&["add", "-N", "m/n/planned.txt"]);
        let (ours, route, theirs) = repo.compare();
        assert_eq!(ours, theirs);
        assert!(matches!(route, Route::Walk { .. }), "{route:?}");
        assert!(ours.contains(&"a/f01.txt".to_string()), "{ours:?}");
    }

    #[test]
    fn a_split_index_is_handed_to_libgit2() {
        let repo = populated();
        repo.git(&["update-index", "--split-index"]);
        change(&repo);
        let git2 = Repository::open(repo.dir.path()).unwrap();
        let result = read_staged(&git2, &repo.dir.path().join(".git/index"));
        // libgit2 cannot read a split index either: an error the guard reports and fails
        // open on, never a wrong answer.
        if let Ok((ours, route)) = result {
            assert_eq!(route, Route::Libgit2);
            let (_, _, theirs) = repo.compare();
            assert_eq!(ours, theirs);
        }
    }

    /// A damaged index is an error (the guard then fails open, loudly) or libgit2's answer,
    /// never a panic: a panic would abort the hook and refuse the commit.
    #[test]
    fn a_damaged_index_is_an_error_not_a_crash() {
        let repo = populated();
        change(&repo);
        repo.git(&["write-tree"]);
        let good = std::fs::read(repo.dir.path().join(".git/index")).unwrap();
        let damaged = repo.dir.path().join("damaged-index");
        let git2 = Repository::open(repo.dir.path()).unwrap();
        let mut cases: Vec<Vec<u8>> = vec![good[..good.len() / 2].to_vec(), good[..40].to_vec()];
        for at in (12..good.len()).step_by(97) {
            let mut bytes = good.clone();
            bytes[at] ^= 0xff;
            cases.push(bytes);
        }
        for bytes in cases {
            std::fs::write(&damaged, &bytes).unwrap();
            let _ = read_staged(&git2, &damaged);
        }
    }

    #[test]
    fn tree_order_puts_a_directory_where_its_slash_sorts() {
        use std::cmp::Ordering::*;
        assert_eq!(tree_order(b"a", true, b"a-b", false), Greater); // "a/" > "a-b"
        assert_eq!(tree_order(b"a", false, b"a-b", false), Less);
        assert_eq!(tree_order(b"a", true, b"a0", true), Less); // "/" < "0"
        assert_eq!(tree_order(b"a", false, b"a", true), Less); // a file before its namesake
        assert_eq!(tree_order(b"a", true, b"a", true), Equal);
        assert_eq!(tree_order(b"ab", false, b"a", true), Greater); // "b" > "/"
    }

    #[test]
    fn extension_chains_must_cover_the_tail_exactly() {
        let mut bytes = b"TREE".to_vec();
        bytes.extend_from_slice(&3u32.to_be_bytes());
        bytes.extend_from_slice(b"abc");
        bytes.extend_from_slice(b"EOIE");
        bytes.extend_from_slice(&0u32.to_be_bytes());
        assert_eq!(chain(&bytes).map(|r| r.len()), Some(2));
        assert!(chain(&bytes[..bytes.len() - 1]).is_none());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(chain(&longer).is_none());
        assert_eq!(find(b"xxTRTREE", b"TREE"), Some(4));
        assert_eq!(find(b"TRE", b"TREE"), None);
    }
}
