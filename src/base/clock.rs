//! The one clock every command reads.
//!
//! `GIT_SESSION_NOW` (RFC 3339) pins "now" so that tests and reproductions see stable ages. Nothing
//! else in the crate may call `Utc::now()` directly: ages, liveness and timestamps must agree.

use chrono::{DateTime, Duration, SecondsFormat, Utc};

pub type Time = DateTime<Utc>;

pub fn now() -> Time {
    if let Ok(fixed) = std::env::var("GIT_SESSION_NOW") {
        if let Ok(t) = DateTime::parse_from_rfc3339(fixed.trim()) {
            return t.with_timezone(&Utc);
        }
    }
    Utc::now()
}

pub fn rfc3339(t: Time) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A filesystem timestamp as a [`Time`], or `None` when the file is absent.
pub fn mtime(path: &std::path::Path) -> Option<Time> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(DateTime::<Utc>::from(modified))
}

/// `3d`, `5h`, `12m`, `40s`, `now`: the compact age `list` shows.
pub fn age(d: Duration) -> String {
    let s = d.num_seconds().max(0);
    match s {
        0..=9 => "now".to_string(),
        10..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// Parses a human duration through `humantime`: `300s`, `90m`, `1h30m`, `24h`, `7d`, `2w`,
/// `1day 2h`. A bare number is refused (it would silently mean seconds to some readers and
/// minutes to others); so are zero, negative and overflowing values.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.is_empty() || text.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let d = humantime::parse_duration(text).ok()?;
    let d = Duration::from_std(d).ok()?;
    (d > Duration::zero()).then_some(d)
}

/// A `--timeout` argument that is no positive duration; the command line words it (a usage
/// error, exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTimeout {
    pub given: String,
}

impl std::fmt::Display for BadTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid --timeout {:?}", self.given)
    }
}

impl std::error::Error for BadTimeout {}

/// A `--timeout` argument (a positive duration such as `30s` or `5m`), else `default`.
pub fn timeout_arg(given: Option<&str>, default: Duration) -> Result<Duration, BadTimeout> {
    match given {
        Some(t) => parse_duration(t)
            .filter(|d| d.num_seconds() > 0)
            .ok_or_else(|| BadTimeout {
                given: t.to_string(),
            }),
        None => Ok(default),
    }
}

/// The hint for a duration [`parse_duration`] refused, fitted to what was written.
pub fn duration_hint(text: &str) -> String {
    let text = text.trim();
    // A bare zero gets no unit suggested: `0s` is refused too.
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) && text.contains(|c| c != '0') {
        format!("a bare number has no unit: write {text}s, {text}m, {text}h or {text}d")
    } else {
        "give a positive duration such as 30s, 90m, 1h30m or 7d".to_string()
    }
}

pub fn format_duration(d: Duration) -> String {
    let s = d.num_seconds();
    if s != 0 && s % 86400 == 0 {
        format!("{}d", s / 86400)
    } else if s != 0 && s % 3600 == 0 {
        format!("{}h", s / 3600)
    } else if s != 0 && s % 60 == 0 {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_trip() {
        for text in ["300s", "5m", "24h", "7d", "30d"] {
            let d = parse_duration(text).unwrap();
            assert_eq!(parse_duration(&format_duration(d)), Some(d));
        }
        assert_eq!(parse_duration("2w"), Some(Duration::days(14)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::minutes(90)));
        assert_eq!(parse_duration("90m"), Some(Duration::minutes(90)));
        assert_eq!(parse_duration("7 days"), Some(Duration::days(7)));
        for bad in ["90", "", "-1d", "0s", "5 parsecs", "1h-"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
        assert!(duration_hint("90").contains("90s"));
        // What the hint suggests is accepted: never `0s` for a bare zero.
        for zero in ["0", "00"] {
            let hint = duration_hint(zero);
            assert!(!hint.contains(&format!("write {zero}s")), "{hint}");
            assert!(hint.contains("30s"), "{hint}");
        }
    }
}
