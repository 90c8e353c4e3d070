//! Git's EWAH bitmaps (compressed bitmaps), as the untracked cache stores three of them.
//!
//! Serialised: `<be32 bit count><be32 word count><words: be64 each><be32 position of the last
//! run-length word>`. The words are a sequence of groups: a run-length word (bit 0: the bit
//! repeated, bits 1 to 32: how many 64-bit words of it, bits 33 to 63: how many literal words
//! follow), then that many literal words, each giving 64 bits, lowest first.
//!
//! Invariant: read as [`set_bits`] reads them, nothing in the bytes can index past them, loop
//! longer than their size, or set a bit at or beyond the limit the caller gives (git's own
//! reader trusts the counts: a literal count past the buffer reads beyond it, and a bit past the
//! untracked cache's directories writes beyond its array). Damage is an error.

use anyhow::{bail, Context, Result};

const WORD_BITS: usize = 64;
/// Bits 1 to 32 of a run-length word.
const RUNNING_BITS: u32 = 32;

/// The positions set in the serialised bitmap at the start of `bytes`, as a vector of `limit`
/// flags (every set position must be below `limit`), and how many bytes the bitmap took.
pub fn set_bits(bytes: &[u8], limit: usize) -> Result<(Vec<bool>, usize)> {
    let be32 = |at: usize| -> Result<usize> {
        let b = bytes
            .get(at..at + 4)
            .context("a truncated bitmap in the untracked cache")?;
        Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    let words = be32(4)?;
    let data_len = words
        .checked_mul(8)
        .filter(|&n| n <= bytes.len().saturating_sub(12))
        .context("a bitmap in the untracked cache counts more words than it holds")?;
    let data = &bytes[8..8 + data_len];
    // The position of the last run-length word: git keeps it to append; reading needs only
    // that it is inside the buffer.
    let _rlw = be32(8 + data_len)?;
    let word = |i: usize| u64::from_be_bytes(data[i * 8..i * 8 + 8].try_into().expect("8 bytes"));

    let mut flags = Vec::new();
    flags
        .try_reserve_exact(limit)
        .context("an untracked cache too large for memory")?;
    flags.resize(limit, false);
    let mut pos = 0usize;
    let mut at = 0;
    while at < words {
        let rlw = word(at);
        at += 1;
        let run = ((rlw >> 1) & ((1 << RUNNING_BITS) - 1)) as usize * WORD_BITS;
        let literals = (rlw >> (1 + RUNNING_BITS)) as usize;
        let run_end = pos.checked_add(run).context("a bitmap beyond its limit")?;
        if rlw & 1 == 1 {
            if run_end > limit {
                bail!("a bitmap in the untracked cache sets bits beyond its directories");
            }
            flags[pos..run_end].fill(true);
        }
        pos = run_end;
        if literals > words - at {
            bail!("a bitmap in the untracked cache counts more literal words than it holds");
        }
        for _ in 0..literals {
            let mut bits = word(at);
            at += 1;
            while bits != 0 {
                let bit = pos + bits.trailing_zeros() as usize;
                if bit >= limit {
                    bail!("a bitmap in the untracked cache sets bits beyond its directories");
                }
                flags[bit] = true;
                bits &= bits - 1;
            }
            pos = pos.saturating_add(WORD_BITS);
        }
    }
    Ok((flags, 12 + data_len))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A serialised bitmap of `words` (run-length and literal words as given).
    pub(crate) fn bitmap(bits: u32, words: &[u64]) -> Vec<u8> {
        let mut out = bits.to_be_bytes().to_vec();
        out.extend_from_slice(&(words.len() as u32).to_be_bytes());
        for w in words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        out.extend_from_slice(&0u32.to_be_bytes());
        out
    }

    fn rlw(bit: bool, run: u64, literals: u64) -> u64 {
        u64::from(bit) | run << 1 | literals << 33
    }

    #[test]
    fn runs_and_literals_set_the_bits_git_sets() {
        // Four directories, the first and the last valid: one literal word.
        let b = bitmap(4, &[rlw(false, 0, 1), 0b1001]);
        let (flags, used) = set_bits(&b, 4).unwrap();
        assert_eq!(flags, [true, false, false, true]);
        assert_eq!(used, b.len());
        // A run of one word of ones, then a literal: 64 + 2 bits.
        let b = bitmap(66, &[rlw(true, 1, 1), 0b10]);
        let (flags, _) = set_bits(&b, 66).unwrap();
        assert!(flags[..64].iter().all(|&f| f) && !flags[64] && flags[65]);
        // An empty bitmap, and trailing bytes after it are the caller's.
        let mut b = bitmap(0, &[]);
        b.push(7);
        assert_eq!(set_bits(&b, 3).unwrap(), (vec![false; 3], 12));
    }

    #[test]
    fn counts_beyond_the_bytes_or_the_limit_are_errors() {
        // A bit at the limit.
        assert!(set_bits(&bitmap(4, &[rlw(false, 0, 1), 0b10000]), 4).is_err());
        // A run of ones longer than the directories.
        assert!(set_bits(&bitmap(64, &[rlw(true, 1, 0)]), 63).is_err());
        // The largest run of ones: an error, not 2^38 iterations.
        assert!(set_bits(&bitmap(0, &[rlw(true, u64::from(u32::MAX), 0)]), 10).is_err());
        // More literal words than words.
        assert!(set_bits(&bitmap(4, &[rlw(false, 0, 2), 1]), 4).is_err());
        // A word count beyond the bytes, and every truncation.
        let mut b = bitmap(4, &[rlw(false, 0, 1), 1]);
        b[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(set_bits(&b, 4).is_err());
        let good = bitmap(4, &[rlw(false, 0, 1), 1]);
        for cut in 0..good.len() {
            assert!(set_bits(&good[..cut], 4).is_err(), "{cut}");
        }
    }
}
