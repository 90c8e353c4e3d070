//! Cost of decoding git's index, for `bench/index.py`: `index_micro REPO [ROUNDS]` prints, as
//! JSON, the milliseconds of reading and decoding the whole index file of the repository at
//! REPO with `git_session::internals::Index::parse` (what the status walk does): the first call in
//! this process (which, like `info`'s one call, gets fresh memory from the kernel) and the
//! median of ROUNDS more; the median of the guard's `staged::staged_paths` on it (what
//! `guard pre-commit` does with the index); and the entry count.

// A measuring tool run by hand: a failure to read its input is its answer.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Instant;

fn median_ms(rounds: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut n = f();
    let mut times: Vec<f64> = (0..rounds.max(1))
        .map(|_| {
            let start = Instant::now();
            n = f();
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (times[times.len() / 2], n)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let repo_dir = Path::new(&args[1]);
    let rounds: usize = args.get(2).map_or(Ok(51), |r| r.parse())?;
    let repo = git_session::internals::Checkout::open(repo_dir)?;
    let index = repo.gitdir().join("index");
    let decode_all = || {
        let data = std::fs::read(&index).unwrap();
        git_session::internals::Index::parse(&data)
            .unwrap()
            .entries
            .len()
    };
    let start = Instant::now();
    decode_all();
    let first = start.elapsed().as_secs_f64() * 1000.0;
    let (decode, entries) = median_ms(rounds, decode_all);
    let (staged, paths) = median_ms(rounds, || {
        git_session::internals::staged_paths(repo.objects(), &index)
            .unwrap()
            .len()
    });
    println!(
        "{{\"entries\": {entries}, \"first_decode_ms\": {first:.3}, \"decode_ms\": {decode:.3}, \"staged_ms\": {staged:.3}, \"staged_paths\": {paths}}}"
    );
    Ok(())
}
