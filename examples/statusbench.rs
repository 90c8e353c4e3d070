fn main() {
    let path = std::env::args().nth(1).unwrap();
    for update in [false, false, true, false] {
        let t = std::time::Instant::now();
        let repo = git2::Repository::open(&path).unwrap();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .update_index(update);
        let n = repo.statuses(Some(&mut opts)).unwrap().len();
        println!("update={update} n={n} {:?}", t.elapsed());
    }
}
