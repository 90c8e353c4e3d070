//! Port ranges for the `[resources]` tests. A test that asserts exact port numbers needs a range
//! that no program on the machine holds: CI machines run listeners of their own (one on the
//! machine's own address at 28000-28009 once made a lease test hand out the wrong block).

use git_session::internals::port_free;

/// Ranges are tried at `preferred` and, when a port there is busy, this far below it.
const SHIFT: u16 = 10_000;

/// A range of `len` ports that `create` would judge free now: at `preferred` where it can, else
/// `SHIFT` lower. The caller writes its expectations for `preferred` and reads its results
/// through [`Ports::unshift`].
pub fn free_ports(preferred: u16, len: u16) -> Ports {
    // A port another test's `create` probes at that instant looks busy for it: look again.
    for _ in 0..20 {
        for base in [preferred, preferred - SHIFT] {
            if (base..base + len).all(port_free) {
                return Ports {
                    base,
                    preferred,
                    len,
                };
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let busy: Vec<u16> = (preferred..preferred + len)
        .chain(preferred - SHIFT..preferred - SHIFT + len)
        .filter(|&p| !port_free(p))
        .collect();
    panic!("no free range of {len} ports at {preferred} or {SHIFT} below: busy {busy:?}");
}

/// The range a test runs in, and the one its expectations are written for.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    pub base: u16,
    preferred: u16,
    len: u16,
}

impl Ports {
    /// `port_range = "A-B"` for the range.
    pub fn range(&self) -> String {
        format!("{}-{}", self.base, self.base + self.len - 1)
    }

    /// A port of the range as the expectations name it.
    pub fn unshift_port(&self, port: u64) -> u64 {
        port - u64::from(self.base) + u64::from(self.preferred)
    }

    /// `text` with every port of the range named as the expectations name it.
    pub fn unshift(&self, text: &str) -> String {
        if self.base == self.preferred {
            return text.to_string();
        }
        // Highest first and all five digits: no replacement makes another's digits.
        (0..self.len).rev().fold(text.to_string(), |t, k| {
            t.replace(
                &(self.base + k).to_string(),
                &(self.preferred + k).to_string(),
            )
        })
    }
}
