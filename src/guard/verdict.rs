//! What a hook decided, as data; the command line words it.

use crate::base::clock;
use crate::ownership::Owner;

/// What a hook decided.
pub enum Verdict {
    Pass,
    Refuse(Refusal),
}

/// Why a commit or a push is refused, as data; the command line words it.
#[derive(Debug)]
pub enum Refusal {
    /// Staged paths other live sessions of this clone own; `me` is the session committing.
    Owned {
        conflicts: Vec<(String, Owner)>,
        me: Option<String>,
        now: clock::Time,
    },
    /// Staged paths that claims of other clones hold (as last synced).
    HeldElsewhere {
        held: Vec<(String, crate::shared_claims::SharedClaim)>,
        remote: String,
    },
    /// Pushed commits change paths that sessions of other clones hold.
    PushHeld {
        conflicts: Vec<crate::shared_claims::PushConflict>,
        remote: String,
    },
}
