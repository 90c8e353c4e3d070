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

/// Parses `300s`, `5m`, `24h`, `7d`, `2w`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: i64 = digits.parse().ok()?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "m" => n.checked_mul(60)?,
        "h" => n.checked_mul(3600)?,
        "d" => n.checked_mul(86400)?,
        "w" => n.checked_mul(7 * 86400)?,
        _ => return None,
    };
    Some(Duration::seconds(secs))
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
        assert_eq!(parse_duration("90"), Some(Duration::seconds(90)));
        assert_eq!(parse_duration("7 days"), None);
        assert_eq!(parse_duration("-1d"), None);
        assert_eq!(parse_duration(""), None);
    }
}
