//! Lookups in place in the bytes of a parsed claims index (see [`super::index`] for the
//! format): binary searches over the line offsets, one comparison per probe, no allocation per
//! probe.
//!
//! Invariant: these rely on the order [`super::index::serialize`] writes (escaped path, then
//! session) and on [`ClaimsView::parse`] having checked that every line starts where the previous
//! one ended; a line that does not split is an error, never a guess.

use super::index::{cmp_key, escape, unescape, ClaimsView, Hit, IndexedSession};
use super::ClaimHow;
use crate::clock::Time;
use anyhow::{Context, Result};

impl ClaimsView {
    /// Claims on exactly `path` (any session).
    pub fn exact(&self, path: &str, out: &mut Vec<Hit>) -> Result<()> {
        self.exact_from(path, 0, out).map(|_| ())
    }

    /// [`Self::exact`], starting from `from`, a guess at where `path`'s lines begin (the answer
    /// for the previous query of a sorted run: the guard asks for its staged paths in order).
    /// Returns where they begin, for the next query.
    pub fn exact_from(&self, path: &str, from: usize, out: &mut Vec<Hit>) -> Result<usize> {
        let key = escape(path);
        let key = key.as_bytes();
        let start = self.lower_bound(key, from);
        let mut at = start;
        while at < self.count && cmp_key(self.line(at), key) == std::cmp::Ordering::Equal {
            let (_, session, how, since) = self.entry(at)?;
            out.push(Hit {
                len: path.len(),
                session,
                how,
                since,
            });
            at += 1;
        }
        Ok(start)
    }

    /// The first line not ordered before `key`. A `from` whose previous line is ordered before
    /// `key` is a lower bound: the search gallops forward from it (a few probes when the answer
    /// is near) before bisecting. Any other `from` is ignored.
    pub(super) fn lower_bound(&self, key: &[u8], from: usize) -> usize {
        let before = |i: usize| cmp_key(self.line(i), key) == std::cmp::Ordering::Less;
        let (mut lo, mut hi) = (0, self.count);
        if from > 0 && from <= self.count && before(from - 1) {
            lo = from;
            let mut step = 1;
            loop {
                let probe = lo + step - 1;
                if probe >= self.count {
                    break;
                }
                if !before(probe) {
                    hi = probe;
                    break;
                }
                lo = probe + 1;
                step *= 2;
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The claims strictly below the directory `dir` (on `dir/...`): session, claimed path, kind
    /// and since. Escaping is per character, so those lines are one contiguous run at `dir/`.
    pub fn below(&self, dir: &str) -> Result<Vec<(usize, String, ClaimHow, Time)>> {
        let mut out = Vec::new();
        if self.count == 0 || dir.is_empty() {
            return Ok(out);
        }
        let mut prefix = escape(dir).into_owned();
        prefix.push('/');
        let prefix = prefix.as_bytes();
        let mut at = self.lower_bound(prefix, 0);
        while at < self.count && self.line(at).starts_with(prefix) {
            let (key, session, how, since) = self.entry(at)?;
            let key = std::str::from_utf8(key).context("a malformed claims index")?;
            out.push((session, unescape(key), how, since));
            at += 1;
        }
        Ok(out)
    }

    /// Claims on `path` or on any directory above it.
    pub fn covering(&self, path: &str) -> Result<Vec<Hit>> {
        let mut out = Vec::new();
        if self.count == 0 {
            return Ok(out);
        }
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
}

#[cfg(test)]
mod tests {
    use super::super::index::testing::view_of;
    use super::super::index::DirStamp;
    use super::*;

    #[test]
    fn every_claim_is_found_in_place() {
        let paths = [
            "a", "a b", "a-b", "a.b", "a/b", "a/b/c", "a\u{1}", "a\\x", "a\tb", "a\nb", "ab", "b",
            "\u{7f}", "é", "z/z",
        ];
        let view = view_of(&paths, [DirStamp::default(); 2], None);
        for p in paths {
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

    /// Any starting guess, right, wrong or out of range, gives the bisection's answer.
    #[test]
    fn lower_bound_from_any_guess_is_exact() {
        let paths = [
            "a", "a b", "a-b", "a.b", "a/b", "a/b/c", "a\u{1}", "a\\x", "a\tb", "ab", "b", "c/d",
        ];
        let view = view_of(&paths, [DirStamp::default(); 2], None);
        let mut keys: Vec<String> = paths.iter().map(|p| escape(p).into_owned()).collect();
        keys.extend(["", "a0", "aa", "b0", "c", "zz"].map(String::from));
        for key in &keys {
            let exact = view.lower_bound(key.as_bytes(), 0);
            for from in 0..=view.count + 2 {
                assert_eq!(
                    view.lower_bound(key.as_bytes(), from),
                    exact,
                    "{key:?} from {from}"
                );
            }
        }
        // A sorted run of queries, each starting where the last one began.
        let mut sorted: Vec<&str> = paths.to_vec();
        sorted.sort();
        let mut next = 0;
        for p in sorted {
            let mut hits = Vec::new();
            next = view.exact_from(p, next, &mut hits).unwrap();
            assert_eq!(hits.len(), 1, "{p:?}");
        }
    }
}
