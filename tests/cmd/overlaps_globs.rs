//! The glob intersection under `overlaps` and `start`'s forecast (`contract/overlap.rs`): its
//! speed, measured by hand and never asserted (SPEC §10: no timed tests):
//! `cargo test --release --test cli overlaps_globs -- --ignored --nocapture`.

use git_task::testing::contract::overlap::{intersect, Overlap, PathSet};
use std::time::{Duration, Instant};

fn rules(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// 50 typical contracts: a shared policy, two directories each (every fifth also `docs/**`).
fn typical(i: usize) -> Vec<(Vec<String>, Vec<String>)> {
    let policy = (Vec::new(), rules(&[".github/**", "**/secrets/**"]));
    let mut allowed = vec![format!("src/mod{i}/**"), format!("tests/mod{i}/**")];
    if i.is_multiple_of(5) {
        allowed.push("docs/**".into());
    }
    vec![policy, (allowed, rules(&["*.lock", "**/generated/**"]))]
}

#[test]
#[ignore = "a measurement, run by hand"]
fn measure_typical_pairs() {
    let start = Instant::now();
    let sets: Vec<PathSet> = (0..50)
        .map(|i| PathSet::new(&typical(i), false).unwrap())
        .collect();
    let built = start.elapsed();
    let mut best = Duration::MAX;
    let mut answers = (0, 0, 0);
    for _ in 0..5 {
        answers = (0, 0, 0);
        let start = Instant::now();
        for (i, a) in sets.iter().enumerate() {
            for b in &sets[i + 1..] {
                match intersect(a, b) {
                    Overlap::Disjoint => answers.0 += 1,
                    Overlap::Overlap { .. } => answers.1 += 1,
                    Overlap::MayOverlap => answers.2 += 1,
                }
            }
        }
        best = best.min(start.elapsed());
    }
    let one = |a: &PathSet, b: &PathSet| {
        let start = Instant::now();
        for _ in 0..1000 {
            std::hint::black_box(intersect(a, b));
        }
        start.elapsed() / 1000
    };
    eprintln!(
        "50 sets built in {built:?}; 1,225 pairs in {best:?} (disjoint, overlap, may) = {answers:?}; \
         one disjoint pair {:?}, one overlapping pair {:?}",
        one(&sets[1], &sets[2]),
        one(&sets[0], &sets[5]),
    );
}
