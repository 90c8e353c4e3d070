//! Lookups in a claims index (see [`super::claims_index`] for the format): the fences in the front
//! name the one block a path's lines can start in, and that block is bisected.
//!
//! Invariant: these rely on the order [`super::claims_index::serialize`] writes (escaped path, then
//! session), which the front's fences and each loaded block are checked against; a block that
//! fails its checks is a [`DamagedIndex`] error, never a guess.

use super::claims_index::{
    cmp_key, escape, unescape, ClaimsView, DamagedIndex, Hit, IndexedSession, BLOCK,
};
use super::ClaimHow;
use crate::base::clock::Time;
use std::cmp::Ordering;

impl ClaimsView {
    /// The first line not ordered before the escaped path `key`: the block before the first
    /// fence not below `key` is the only one holding lines below it and lines not below it.
    /// `from` is a guess at the answer (the previous answer in a sorted run of lookups, as the
    /// guard's staged paths are): when the line before it is below `key`, the search gallops
    /// forward from it, a few comparisons when the answer is near. Any other guess is ignored.
    pub(super) fn lower_bound(&self, key: &[u8], from: usize) -> Result<usize, DamagedIndex> {
        let below = |i: usize| -> Result<bool, DamagedIndex> {
            Ok(cmp_key(self.line(i)?, key) == Ordering::Less)
        };
        if from > 0 && from <= self.count && below(from - 1)? {
            let (mut lo, mut step) = (from, 1);
            loop {
                let probe = lo + step - 1;
                if probe >= self.count {
                    return self.bisect(key, lo, self.count);
                }
                if !below(probe)? {
                    return self.bisect(key, lo, probe);
                }
                lo = probe + 1;
                step *= 2;
            }
        }
        // A guess of 0 (the first lookup of a run, or a run whose keys all sort before every
        // claim, as unclaimed paths often do): the first fence answers without a block read.
        if from == 0 && self.n_blocks() > 0 && self.fence(0) >= key {
            return Ok(0);
        }
        // How many blocks start below `key`.
        let (mut lo, mut hi) = (0, self.n_blocks());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.fence(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let below = lo;
        if below == 0 {
            return Ok(0);
        }
        let b = below - 1;
        let (bytes, starts) = self.block(b)?;
        let lines = starts.len() - 1;
        let mut lo = 0;
        let mut hi = lines;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let line = &bytes[starts[mid] as usize..starts[mid + 1] as usize];
            if cmp_key(line, key) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(b * BLOCK + lo)
    }

    /// The first line in `lo..hi` not below `key`, all lines before `lo` being below it.
    fn bisect(&self, key: &[u8], mut lo: usize, mut hi: usize) -> Result<usize, DamagedIndex> {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cmp_key(self.line(mid)?, key) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Claims on exactly `path` (any session).
    pub fn exact(&self, path: &str, out: &mut Vec<Hit>) -> Result<(), DamagedIndex> {
        self.exact_from(path, 0, out).map(|_| ())
    }

    /// [`Self::exact`], starting from `from`, a guess at where `path`'s lines begin (see
    /// [`Self::lower_bound`]). Returns where they begin, the guess for the next path.
    pub fn exact_from(
        &self,
        path: &str,
        from: usize,
        out: &mut Vec<Hit>,
    ) -> Result<usize, DamagedIndex> {
        if self.count == 0 {
            return Ok(0);
        }
        let key = escape(path);
        let key = key.as_bytes();
        let start = self.lower_bound(key, from)?;
        let mut at = start;
        while at < self.count && cmp_key(self.line(at)?, key) == Ordering::Equal {
            let (_, session, how) = self.entry(at)?;
            out.push(Hit {
                len: path.len(),
                session,
                how,
                line: at,
            });
            at += 1;
        }
        Ok(start)
    }

    /// The claims strictly below the directory `dir` (on `dir/...`): session, claimed path, kind
    /// and since. Escaping is per character, so those lines are one contiguous run at `dir/`.
    pub fn below(&self, dir: &str) -> Result<Vec<(usize, String, ClaimHow, Time)>, DamagedIndex> {
        let mut out = Vec::new();
        if self.count == 0 || dir.is_empty() {
            return Ok(out);
        }
        let mut prefix = escape(dir).into_owned();
        prefix.push('/');
        let prefix = prefix.as_bytes();
        let mut at = self.lower_bound(prefix, 0)?;
        while at < self.count && self.line(at)?.starts_with(prefix) {
            let (key, session, how) = self.entry(at)?;
            let since = self.since(at)?;
            let key = std::str::from_utf8(key)
                .map_err(|_| DamagedIndex(format!("line {at} is not UTF-8")))?;
            out.push((session, unescape(key), how, since));
            at += 1;
        }
        Ok(out)
    }

    /// Claims on `path` or on any directory above it.
    #[cfg(test)]
    pub fn covering(&self, path: &str) -> Result<Vec<Hit>, DamagedIndex> {
        let mut out = Vec::new();
        self.exact(path, &mut out)?;
        let mut end = path.len();
        while let Some(slash) = path[..end].rfind('/') {
            self.exact(&path[..slash], &mut out)?;
            end = slash;
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The session `label` as the index knows it.
    pub fn session(&self, label: &str) -> Option<&IndexedSession> {
        self.sessions
            .binary_search_by(|s| s.label.as_str().cmp(label))
            .ok()
            .map(|i| &self.sessions[i])
    }

    /// Every claim line, in order: escaped path, session, kind, since (for rebuilding).
    pub(super) fn all(&self) -> Result<Vec<(String, usize, ClaimHow, Time)>, DamagedIndex> {
        let mut out = Vec::with_capacity(self.count);
        for i in 0..self.count {
            let (key, session, how) = self.entry(i)?;
            let since = self.since(i)?;
            let key = std::str::from_utf8(key)
                .map_err(|_| DamagedIndex(format!("line {i} is not UTF-8")))?;
            out.push((key.to_string(), session, how, since));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::claims_index::testing::{file_view_of, view_of};
    use super::super::claims_index::DirStamp;
    use super::*;

    const PATHS: [&str; 15] = [
        "a", "a b", "a-b", "a.b", "a/b", "a/b/c", "a\u{1}", "a\\x", "a\tb", "a\nb", "ab", "b",
        "\u{7f}", "é", "z/z",
    ];

    #[test]
    fn every_claim_is_found_in_place() {
        let view = view_of(&PATHS, [DirStamp::default(); 2], None);
        for p in PATHS {
            let hits = view.covering(p).unwrap();
            assert!(hits.iter().any(|h| h.len == p.len()), "{p:?} not found");
        }
        // Covering: each directory above, nothing beside.
        let lens: Vec<usize> = view
            .covering("a/b/c/d")
            .unwrap()
            .iter()
            .map(|h| h.len)
            .collect();
        assert_eq!(lens, vec![5, 3, 1]);
        for absent in ["", "a\u{2}", "a\\", "a-", "aa", "c", "z"] {
            assert!(view.covering(absent).unwrap().is_empty(), "{absent:?}");
        }
        let below: Vec<String> = view.below("a").unwrap().into_iter().map(|b| b.1).collect();
        assert_eq!(below, vec!["a/b", "a/b/c"]);
    }

    /// Across many blocks, read from a file a block at a time, every lookup gives the answer a
    /// scan of all lines gives, and only the blocks it needs are read.
    #[test]
    fn blocks_answer_as_a_scan_does() {
        let mut owned: Vec<String> = (0..1000)
            .map(|i| format!("d{:02}/f{i:04}", i % 37))
            .collect();
        owned.extend(PATHS.iter().map(|p| p.to_string()));
        owned.extend((0..150).map(|i| format!("same{}", i / 100)));
        let paths: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (_dir, view) = file_view_of(&paths);
        assert!(view.n_blocks() > 10);
        let lines = view.all().unwrap();
        let scan = |key: &str| lines.iter().filter(|l| l.0 == escape(key)).count();
        let (_dir, fresh) = file_view_of(&paths);
        let mut hits = Vec::new();
        fresh.exact("d05/f0005", &mut hits).unwrap();
        assert_eq!(hits.len(), 1);
        let loaded = (0..fresh.n_blocks())
            .filter(|&b| fresh.blocks_loaded(b))
            .count();
        assert_eq!(loaded, 1, "one lookup reads one block");
        for key in owned
            .iter()
            .map(String::as_str)
            .chain(["", "d05", "same", "zz", "a/"])
        {
            let mut hits = Vec::new();
            view.exact(key, &mut hits).unwrap();
            assert_eq!(hits.len(), scan(key), "{key:?}");
            // Lines of one path that straddle a block boundary are all found.
        }
        assert_eq!(view.below("d05").unwrap().len(), 27);
        // Any guess, right, wrong or out of range, gives the answer the fences give.
        let keys: Vec<String> = owned.iter().map(|p| escape(p).into_owned()).collect();
        for key in keys
            .iter()
            .step_by(7)
            .map(String::as_str)
            .chain(["", "a0", "zz"])
        {
            let exact = view.lower_bound(key.as_bytes(), 0).unwrap();
            for from in (0..=view.count + 2).step_by(13).chain([exact, exact + 1]) {
                let got = view.lower_bound(key.as_bytes(), from).unwrap();
                assert_eq!(got, exact, "{key:?} from {from}");
            }
        }
    }
}
