use super::*;

fn load_text(text: &str) -> Result<Config> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".git-session.toml");
    std::fs::write(&file, text).unwrap();
    let mut c = Config::default();
    c.apply(&file, text, true)?;
    Ok(c)
}

#[test]
fn defaults_need_no_file() {
    let c = load_text("").unwrap();
    assert_eq!(c.branch_prefix, "session/");
    assert_eq!(c.create_timeout, Duration::seconds(300));
    assert_eq!(c.thresholds.len(), 3);
}

#[test]
fn unknown_key_names_file_and_key() {
    let err = load_text("bse = \"main\"\n").unwrap_err().to_string();
    assert!(
        err.contains(".git-session.toml:1:1: unknown field `bse`"),
        "{err}"
    );
}

#[test]
fn every_error_names_its_line_and_column() {
    for (text, at) in [
        (
            "base = \"main\"\n\nlive_for = \"forever\"\n",
            ":3:12: bad value for `live_for`",
        ),
        (
            "[guard]\nshared = [\"[x\"]\n",
            ":2:10: bad value for `guard.shared`",
        ),
        (
            "[context]\nwindow = 10\n",
            ":2:10: bad value for `context.window`",
        ),
        (
            "[context.messages]\n\"42\" = \"x\"\n",
            ":2:8: bad value for `context.messages.42`",
        ),
        (
            "[merge]\nstrategy = 3\n",
            ":2:12: `merge.strategy`: invalid type: integer `3`",
        ),
        (
            "[guard]\nescapee = 1\n",
            ":2:1: `guard.escapee`: unknown field `escapee`",
        ),
        (
            "[guard]\nshared = [\"a\", 3]\n",
            ":2:16: `guard.shared`: invalid type",
        ),
        (
            "guard = { shared = 3 }\n",
            ":1:20: `guard.shared`: invalid type",
        ),
        ("wortrees_dir = 1\n", ":1:1: unknown field `wortrees_dir`"),
        (
            "[guard]\nescape = \"never\"\n",
            ":2:10: bad value for `guard.escape`",
        ),
        ("base = \"main\"\nbase = \"dev\"\n", ":2:1: duplicate key"),
        ("[guard\n", ":1:7: invalid table header"),
    ] {
        let err = load_text(text).unwrap_err().to_string();
        assert!(
            err.contains(&format!(".git-session.toml{at}")),
            "{text}: {err}"
        );
    }
}

#[test]
fn bad_duration_is_refused() {
    let err = load_text("create_timeout = \"soon\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("create_timeout"), "{err}");
}

#[test]
fn thresholds_and_messages() {
    let c =
        load_text("[context]\nthresholds = [50, 80]\n[context.messages]\n\"80\" = \"eighty\"\n")
            .unwrap();
    assert_eq!(c.thresholds.len(), 2);
    assert_eq!(c.thresholds[1].message.as_deref(), Some("eighty"));
    assert!(load_text("[context.messages]\n\"42\" = \"x\"\n").is_err());
}
