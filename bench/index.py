#!/usr/bin/env python3
"""Cost of decoding git's index: this crate's decoder against gitoxide's gix-index.

  python3 bench/index.py [--files 50000] [--processes 9] [--rounds 21] [--gix 0.42 --gix-hash 0.20]

Makes a repository of --files files (bench/guard.py's fast-import repository: directories of
100 files, the index written by `git read-tree HEAD`, the cache tree by `git write-tree`) and
reports, alternating --processes processes of each: the first call in the process (which gets
fresh memory from the kernel, as `info`'s one decode does) and the median of --rounds more
(warm memory, as in `list`'s many), medians over the processes:

  ours: decode  read the index file and decode every entry (`index::Index::parse`: what the
                status walk does before it walks)
  ours: staged  the guard's `staged::staged_paths` on the same index (what `guard pre-commit`
                does with it: here the cache tree names the whole index, so no entry is read)
  gix-index     with --gix VERSION: `gix_index::File::at` on the same file (it maps the file
                and keeps all paths in one buffer), with and without checksum verification;
                built in a scratch crate under the target directory, since the project does
                not depend on gix

Only the ratios between rows of one run mean anything on a shared machine.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guard  # noqa: E402
from installed import ROOT  # noqa: E402

GIX_MAIN = r'''
use std::time::Instant;
fn decode(path: &str, skip_hash: bool) -> usize {
    gix_index::File::at(path, gix_hash::Kind::Sha1, skip_hash, gix_index::decode::Options::default())
        .unwrap()
        .entries()
        .len()
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args[2].parse().unwrap();
    let start = Instant::now();
    let entries = decode(&args[1], true);
    let first = start.elapsed().as_secs_f64() * 1000.0;
    let mut medians = Vec::new();
    for skip_hash in [true, false] {
        let mut times: Vec<f64> = (0..rounds)
            .map(|_| {
                let start = Instant::now();
                decode(&args[1], skip_hash);
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        medians.push(times[times.len() / 2]);
    }
    println!("{{\"entries\": {entries}, \"first_decode_ms\": {first:.3}, \"decode_ms\": {:.3}, \"verified_ms\": {:.3}}}", medians[0], medians[1]);
}
'''


def build_gix(version, hash_version):
    crate = os.path.join(ROOT, "target", "gix-index-bench")
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(f'[package]\nname = "gix-index-bench"\nversion = "0.0.0"\nedition = "2021"\n\n'
                f'[dependencies]\ngix-index = "{version}"\ngix-hash = "{hash_version}"\n\n'
                f'[profile.release]\nlto = "fat"\ncodegen-units = 1\n\n[workspace]\n')
    with open(os.path.join(crate, "src", "main.rs"), "w") as f:
        f.write(GIX_MAIN)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=crate, check=True)
    return os.path.join(crate, "target", "release", "gix-index-bench")


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--processes", type=int, default=9)
    ap.add_argument("--gix", metavar="VERSION", help="also time gix-index VERSION (e.g. 0.42)")
    ap.add_argument("--gix-hash", metavar="VERSION", default="0.20",
                    help="the gix-hash that gix-index VERSION uses (0.20 for 0.42)")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "index_micro"],
                   cwd=ROOT, check=True)
    micro = os.path.join(ROOT, "target", "release", "examples", "index_micro")
    base = tempfile.mkdtemp(prefix="gs-bench-index-")
    try:
        guard.BIN = micro  # only for env_for's PATH
        env = guard.env_for(os.path.join(base, "home"))
        repo = guard.make_repo(base, a.files, env)
        guard.run(["git", "write-tree"], repo, env)
        index = os.path.join(repo, ".git", "index")
        progs = {"ours": [micro, repo]}
        if a.gix:
            progs["gix"] = [build_gix(a.gix, a.gix_hash), index]
        runs = {k: [] for k in progs}
        for r in range(a.processes):
            for k in (list(progs) if r % 2 == 0 else list(progs)[::-1]):
                out = subprocess.run(progs[k] + [str(a.rounds)], check=True,
                                     capture_output=True, text=True, env=env).stdout
                runs[k].append(json.loads(out))
        ours = runs["ours"]
        print(f"index of {ours[0]['entries']} entries ({os.path.getsize(index) / 1e6:.1f} MB); "
              f"{a.processes} alternating processes, each: the first call, then the median of "
              f"{a.rounds} more; medians over the processes")
        first, warm = median_of(ours, "first_decode_ms"), median_of(ours, "decode_ms")
        print(f"  ours: decode every entry       first {first:7.2f} ms   then {warm:7.2f} ms")
        print(f"  ours: the guard's staged paths                    then "
              f"{median_of(ours, 'staged_ms'):7.2f} ms")
        if a.gix:
            g = runs["gix"]
            gf, gw = median_of(g, "first_decode_ms"), median_of(g, "decode_ms")
            print(f"  gix-index {a.gix}, no checksum      first {gf:7.2f} ms   then {gw:7.2f} ms"
                  f"   (ours / gix: first {first / gf:.2f}x, then {warm / gw:.2f}x)")
            print(f"  gix-index {a.gix}, checksum verified                  then "
                  f"{median_of(g, 'verified_ms'):7.2f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
