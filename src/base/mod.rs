//! The ground floor: primitives every other module may use and that use nothing of this crate
//! above them (time, processes, the announcements domain code sends, the result type).

pub mod announce;
pub mod clock;
pub mod failpoint;
pub mod files;
pub mod hash;
pub mod process;
pub mod quote;
pub mod trace;
