use super::*;
use crate::git::index::ewah::tests::bitmap;

/// The `UNTR` body git 2.47.3 wrote for `/tmp/ut/r` (`core.untrackedCache=true`,
/// `status.showUntrackedFiles=all`): a tracked `.gitignore`, `a/f` and `a/b/g` tracked, `a/u`
/// and `n/z` untracked, a one-line `info/exclude`, no `core.excludesFile`.
const FROM_GIT: &[&str] = &[
    "214c6f636174696f6e202f746d702f75742f722c2073797374656d204c696e7578006b04425b0d79ed026b04425b0d79",
    "ed020000fe000098e0aa0000000000000000000000040000000000000000000000000000000000000000000000000000",
    "00000000000000000000000000009972d7e4ec34a7b47cf9b3cdc6025d72e189f1910000000000000000000000000000",
    "0000000000002e67697469676e6f726500040002000101610075000000620001006e007a000000000400000002000000",
    "0200000000000000000000000f0000000000000000000000010000000000000000000000000000000100000002000000",
    "02000000000000000000000001000000006b04425b0df3ff025e0be100000000000000fe000098e09600000000000000",
    "00000010006b04425b0df3ff025e0be100000000000000fe000098e0b30000000000000000000010006b04425b0df3ff",
    "025e0be100000000000000fe000098e0b40000000000000000000010006b04425b0df3ff025e0be100000000000000fe",
    "000098e0cf000000000000000000001000257cc5642cb1a054f08cc83f2d943e56fd3ebe9900",
];

fn from_git() -> Vec<u8> {
    let hex: String = FROM_GIT.concat();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn hex_id(hex: &str) -> [u8; OID_LEN] {
    let v: Vec<u8> = (0..40)
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    v.try_into().unwrap()
}

#[test]
fn the_cache_git_wrote_decodes() {
    let uc = UntrackedCache::parse(&from_git()).unwrap();
    assert_eq!(uc.ident, b"Location /tmp/ut/r, system Linux");
    assert_eq!(uc.dir_flags, 0);
    assert_eq!(uc.exclude_per_dir, b".gitignore");
    assert_eq!(
        uc.info_exclude,
        Some(hex_id("9972d7e4ec34a7b47cf9b3cdc6025d72e189f191"))
    );
    assert_eq!(uc.excludes_file, None);
    let names: Vec<&[u8]> = uc.dirs.iter().map(|d| d.name.as_slice()).collect();
    assert_eq!(names, [&b""[..], b"a", b"b", b"n"]);
    let a = uc.child(0, b"a").unwrap();
    assert_eq!(uc.dirs[a].untracked, [b"u".to_vec()]);
    assert_eq!(uc.child(a, b"b"), Some(2));
    assert_eq!(
        uc.dirs[uc.child(0, b"n").unwrap()].untracked,
        [b"z".to_vec()]
    );
    assert_eq!(uc.child(0, b"b"), None);
    assert!(uc.dirs.iter().all(|d| d.stat.is_some() && !d.check_only));
    assert_eq!(uc.dirs[0].stat.unwrap().size, 4096);
    assert_eq!(
        uc.dirs[0].exclude_oid,
        Some(hex_id("257cc5642cb1a054f08cc83f2d943e56fd3ebe99"))
    );
    assert!(uc.dirs[1..].iter().all(|d| d.exclude_oid.is_none()));
}

#[test]
fn damage_anywhere_is_an_error_or_a_decode_never_a_panic() {
    let good = from_git();
    for cut in 0..good.len() {
        let mut b = good[..cut].to_vec();
        // Keep the final NUL, so the cut reaches the readers beyond the first check.
        b.push(0);
        match UntrackedCache::parse(&b) {
            // Cut right after the per-directory file name: a cache with nothing recorded yet,
            // as git reads it too.
            Ok(uc) if cut == 1 + 33 + FIXED + b".gitignore\0".len() => assert!(uc.dirs.is_empty()),
            Ok(_) => assert_eq!(cut + 1, good.len(), "cut at {cut} decodes"),
            Err(_) => {}
        }
    }
    for at in 0..good.len() {
        for byte in [0x00, 0x01, 0x2f, 0x7f, 0x80, 0xff] {
            let mut b = good.clone();
            b[at] = byte;
            let _ = UntrackedCache::parse(&b);
        }
    }
}

/// A body with `blocks` (untracked names, subdirectory count, name) and every block valid.
fn body(blocks: &[(&[&str], usize, &str)]) -> Vec<u8> {
    let mut b = vec![0u8];
    b.extend_from_slice(&[0u8; FIXED]);
    b.extend_from_slice(b".gitignore\0");
    let count = blocks.len();
    assert!(count < 128);
    b.push(count as u8);
    for (untracked, subdirs, name) in blocks {
        b.push(untracked.len() as u8);
        b.push(*subdirs as u8);
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        for u in *untracked {
            b.extend_from_slice(u.as_bytes());
            b.push(0);
        }
    }
    b.extend(bitmap(count as u32, &[1 << 33, (1u64 << count) - 1]));
    b.extend(bitmap(0, &[]));
    b.extend(bitmap(0, &[]));
    b.extend(std::iter::repeat_n(0u8, STAT_LEN * count));
    b.push(0);
    b
}

#[test]
fn counts_names_and_nesting_are_checked() {
    let ok = body(&[(&["x", "nested/"], 1, ""), (&[], 0, "d")]);
    let uc = UntrackedCache::parse(&ok).unwrap();
    assert_eq!(uc.dirs[0].untracked, [b"x".to_vec(), b"nested/".to_vec()]);
    assert_eq!(uc.child(0, b"d"), Some(1));

    // Names that would leave the directory, or are not names at all.
    for bad in ["..", ".", "a/b", "", "/"] {
        assert!(
            UntrackedCache::parse(&body(&[(&[bad], 0, "")])).is_err(),
            "{bad:?}"
        );
        if !bad.is_empty() {
            let b = body(&[(&[], 1, ""), (&[], 0, bad)]);
            assert!(UntrackedCache::parse(&b).is_err(), "{bad:?}");
        }
    }
    // A root with a name; more subdirectories than blocks; fewer blocks than counted.
    assert!(UntrackedCache::parse(&body(&[(&[], 0, "r")])).is_err());
    assert!(UntrackedCache::parse(&body(&[(&[], 2, ""), (&[], 0, "d")])).is_err());
    assert!(UntrackedCache::parse(&body(&[(&[], 0, ""), (&[], 0, "d")])).is_err());

    // Huge counts in every count field: errors before anything is sized from them.
    let huge = [0xff, 0xff, 0xff, 0xff, 0x7f];
    let at_count = 1 + FIXED + b".gitignore\0".len();
    for field in 0..3 {
        let mut b = ok.clone();
        let at = at_count + field;
        b.splice(at..at + 1, huge);
        assert!(UntrackedCache::parse(&b).is_err(), "field {field}");
    }

    // Nesting: MAX_DIR_DEPTH levels below the root read (as the walk nests), one more does not
    // (and neither exhausts the stack).
    let chain = |depth: usize| {
        let mut blocks: Vec<(&[&str], usize, &str)> = vec![(&[], 1, "")];
        blocks.extend((1..depth).map(|_| (&[][..], 1, "d")));
        blocks.push((&[], 0, "d"));
        blocks
    };
    let deep = |depth: usize| {
        let blocks = chain(depth);
        let mut b = vec![0u8];
        b.extend_from_slice(&[0u8; FIXED]);
        b.extend_from_slice(b".gitignore\0");
        let n = blocks.len();
        // A two-byte varint of the count (git's offset encoding).
        b.extend_from_slice(&[0x80 | ((n >> 7) - 1) as u8, (n & 0x7f) as u8]);
        for (_, sub, name) in &blocks {
            b.extend_from_slice(&[0, *sub as u8]);
            b.extend_from_slice(name.as_bytes());
            b.push(0);
        }
        for _ in 0..3 {
            b.extend(bitmap(0, &[]));
        }
        b.push(0);
        b
    };
    assert_eq!(
        UntrackedCache::parse(&deep(MAX_DIR_DEPTH))
            .unwrap()
            .dirs
            .len(),
        MAX_DIR_DEPTH + 1
    );
    assert!(UntrackedCache::parse(&deep(MAX_DIR_DEPTH + 1)).is_err());
}

#[test]
fn an_empty_cache_has_no_directories() {
    let mut b = vec![0u8];
    b.extend_from_slice(&[0u8; FIXED]);
    b.extend_from_slice(b".gitignore\0");
    // The zero count is also the final NUL, as git writes it.
    b.push(0);
    assert!(UntrackedCache::parse(&b).unwrap().dirs.is_empty());
    b.push(5);
    assert!(UntrackedCache::parse(&b).is_err());
}
