//! `git task claim` / `release` and `start --claim/--share`: while a live task claims a path,
//! every other task's hook and the merge gate refuse changes to it (`claimed_by`), `start`
//! refuses a contract that needs it unless `--share`, and two claims of one path: one wins.

use crate::common::TestRepo;
use crate::common::*;
use std::path::Path;

/// A repository with `src/db/schema.sql`, `src/api/a.rs` and `docs/x.md`, hooks installed.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(repo.root(), "src/db/schema.sql", "create table t;\n")
        .write(repo.root(), "src/api/a.rs", "fn a() {}\n")
        .write(repo.root(), "docs/x.md", "# x\n");
    commit_all(&repo, repo.root(), "files");
    repo.task_root(&["hooks", "install"]).ok();
    repo
}

fn commit(repo: &TestRepo, dir: &Path, msg: &str) -> crate::common::Run {
    repo.git_run(dir, &["add", "-A"]);
    repo.git_run(dir, &["commit", "-q", "-m", msg])
}

#[test]
fn a_claimed_path_is_refused_by_the_other_tasks_hook_and_gate() {
    let repo = repo();
    let owner = repo.start("owner", &["--allow", "src/db/**"]);
    let other = repo.start("other", &[]);
    let j = repo
        .task_root(&["claim", "owner", "src/db/**", "--json"])
        .ok()
        .json();
    assert_eq!(j["kind"], "claim");
    assert_eq!(j["claims"], serde_json::json!(["src/db/**"]));

    // The hook of another task refuses the commit, naming the claiming task.
    repo.write(&other, "src/db/schema.sql", "drop table t;\n");
    let refused = commit(&repo, &other, "touch the schema").code(1);
    assert!(refused.stderr.contains("claimed_by"), "{}", refused.stderr);
    assert!(refused.stderr.contains("owner"), "{}", refused.stderr);

    // Past the hook (--no-verify), the gate refuses the merge and nothing lands.
    repo.git(&other, &["commit", "-q", "--no-verify", "-am", "sneak"]);
    let main_before = rev(&repo, "main");
    let j = repo
        .task_root(&["merge", "other", "--no-checks", "--json"])
        .code(1)
        .json();
    assert_eq!(j["kind"], "contract_violation", "{j}");
    assert_eq!(j["violations"][0]["reason"], "claimed_by");
    assert_eq!(j["violations"][0]["file"], "src/db/schema.sql");
    assert!(j["violations"][0]["rule"]
        .as_str()
        .unwrap()
        .contains("owner"));
    assert_eq!(rev(&repo, "main"), main_before, "nothing landed");

    // The claiming task itself is not bound by its own claim.
    repo.write(&owner, "src/db/schema.sql", "create table t2;\n");
    commit(&repo, &owner, "own change").ok();

    // Outside the claim the other task works as before.
    repo.write(&other, "docs/x.md", "# y\n");
    commit(&repo, &other, "docs").ok();
    repo.fsck();
}

#[test]
fn claims_are_released_by_merge_drop_and_remove_and_then_bind_no_one() {
    for how in ["merge", "drop", "remove"] {
        let repo = repo();
        let owner = repo.start("owner", &["--allow", "src/db/**"]);
        let other = repo.start("other", &[]);
        repo.task_root(&["claim", "owner", "src/db/**"]).ok();
        match how {
            "merge" => {
                repo.write(&owner, "src/db/schema.sql", "create table t2;\n");
                commit(&repo, &owner, "own change").ok();
                repo.task_root(&["merge", "owner", "--no-checks"]).ok();
            }
            "remove" => {
                repo.task_root(&["remove", "owner", "--force"]).ok();
            }
            _ => {
                repo.task_root(&["drop", "owner"]).ok();
            }
        }
        let status = repo.task_root(&["status", "other", "--json"]).ok().json();
        assert_eq!(status["claimed_by_others"], serde_json::json!([]), "{how}");
        repo.write(&other, "src/db/schema.sql", "create table t3;\n");
        commit(&repo, &other, "after the owner is gone").ok();
        let stored = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);
        assert!(
            !stored.contains("owner"),
            "{how}: the claim was released: {stored}"
        );
    }
}

#[test]
fn status_shows_claims_on_both_sides_and_release_gives_them_up() {
    let repo = repo();
    repo.start("owner", &[]);
    repo.start("other", &["--allow", "docs/**"]);
    repo.task_root(&["claim", "owner", "src/db/**", "*.lock"])
        .ok();
    let mine = repo.task_root(&["status", "owner", "--json"]).ok().json();
    assert_eq!(mine["claims"], serde_json::json!(["src/db/**", "*.lock"]));
    let theirs = repo.task_root(&["status", "other", "--json"]).ok().json();
    assert_eq!(theirs["claimed_by_others"][0]["task"], "owner");
    let text = repo.task_root(&["status", "other"]).ok();
    assert!(text.stdout.contains("claimed by owner"), "{}", text.stdout);

    let j = repo
        .task_root(&["release", "owner", "*.lock", "--json"])
        .ok()
        .json();
    assert_eq!(j["claims"], serde_json::json!(["src/db/**"]));
    let j = repo.task_root(&["release", "owner", "--json"]).ok().json();
    assert_eq!(j["claims"], serde_json::json!([]));
    let theirs = repo.task_root(&["status", "other", "--json"]).ok().json();
    assert_eq!(theirs["claimed_by_others"], serde_json::json!([]));
}

#[test]
fn a_second_claim_of_a_claimed_path_is_refused_and_a_disjoint_one_is_not() {
    let repo = repo();
    repo.start("a", &[]);
    repo.start("b", &[]);
    repo.task_root(&["claim", "a", "src/db/**"]).ok();
    let before = all_refs(&repo);
    let j = repo
        .task_root(&["claim", "b", "src/db/schema.sql", "--json"])
        .code(1)
        .json();
    assert_eq!(j["kind"], "claimed_by");
    assert_eq!(j["claimed_by"], "a");
    assert_eq!(j["example"], "src/db/schema.sql");
    assert_eq!(all_refs(&repo), before, "a refused claim writes nothing");
    // `*.sql` meets `src/db/**` (src/db/x.sql): refused too; docs/** does not.
    repo.task_root(&["claim", "b", "*.sql"]).code(1);
    repo.task_root(&["claim", "b", "docs/**"]).ok();
}

#[test]
fn two_tasks_claiming_one_path_at_once_exactly_one_wins() {
    let repo = repo();
    for round in 0..6 {
        let (a, b) = (format!("a{round}"), format!("b{round}"));
        // Earlier rounds' claims are live: these contracts (any path) share them.
        repo.start(&a, &["--share"]);
        repo.start(&b, &["--share"]);
        let glob = format!("src/r{round}/**");
        let spawn = |id: &str| {
            task_command(&repo, repo.root(), &["claim", id, &glob])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (ca, cb) = (spawn(&a), spawn(&b));
        let (ra, rb) = (collect(ca), collect(cb));
        let codes = [ra.code, rb.code];
        assert!(
            codes == [0, 1] || codes == [1, 0],
            "round {round}: exactly one claim wins: {codes:?}\n{}\n{}",
            ra.stderr,
            rb.stderr
        );
        let stored = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);
        assert_eq!(stored.matches(&glob).count(), 1, "{stored}");
    }
    repo.fsck();
}

#[test]
fn start_refuses_a_contract_that_needs_a_claimed_path_unless_it_shares() {
    let repo = repo();
    repo.start("owner", &[]);
    repo.task_root(&["claim", "owner", "src/db/**"]).ok();
    let before = all_refs(&repo);
    let refused = repo
        .task_root(&["start", "wide", "--allow", "src/**"])
        .code(1);
    assert!(refused.stderr.contains("owner"), "{}", refused.stderr);
    assert!(refused.stderr.contains("--share"), "{}", refused.stderr);
    assert_eq!(all_refs(&repo), before, "nothing was written");
    assert!(!repo.task_dir("wide").exists());
    // A contract that leaves the claimed paths out starts.
    repo.start("narrow", &["--allow", "src/api/**"]);
    repo.start("fenced", &["--allow", "src/**", "--forbid", "src/db/**"]);
    // --share starts it; the claimed paths stay off-limits.
    let wide = repo.start("wide", &["--allow", "src/**", "--share"]);
    repo.write(&wide, "src/db/schema.sql", "drop table t;\n");
    let refused = commit(&repo, &wide, "shared but claimed").code(1);
    assert!(refused.stderr.contains("claimed_by"), "{}", refused.stderr);
}

#[test]
fn start_claim_claims_at_start_and_a_taken_claim_writes_nothing() {
    let repo = repo();
    let first = repo.start("first", &["--allow", "src/db/**", "--claim", "src/db/**"]);
    assert!(first.exists());
    let j = repo.task_root(&["status", "first", "--json"]).ok().json();
    assert_eq!(j["claims"], serde_json::json!(["src/db/**"]));
    let before = all_refs(&repo);
    let refused = repo
        .task_root(&[
            "start",
            "second",
            "--allow",
            "src/**",
            "--claim",
            "src/db/schema.sql",
        ])
        .code(1);
    assert!(refused.stderr.contains("first"), "{}", refused.stderr);
    assert_eq!(all_refs(&repo), before, "nothing was written");
    assert!(!repo.task_dir("second").exists());
    // Patch mode claims too.
    repo.task_root(&[
        "start", "p", "--mode", "patch", "--allow", "docs/**", "--claim", "docs/**",
    ])
    .ok();
    let j = repo.task_root(&["status", "p", "--json"]).ok().json();
    assert_eq!(j["claims"], serde_json::json!(["docs/**"]));
}

#[test]
fn bad_claims_are_input_errors_that_write_nothing() {
    let repo = repo();
    repo.start("a", &[]);
    let before = all_refs(&repo);
    repo.task_root(&["claim", "a", "src/[z"]).code(2);
    repo.task_root(&["claim", "a", ""]).code(2);
    repo.task_root(&["claim", "a"]).code(2);
    repo.task_root(&["claim", "nosuch", "src/**"]).code(2);
    repo.task_root(&["start", "b", "--claim", "src/{a"]).code(2);
    assert_eq!(all_refs(&repo), before);
    repo.task_root(&["drop", "a"]).ok();
    let before = all_refs(&repo);
    let r = repo.task_root(&["claim", "a", "src/**"]).code(2);
    assert!(r.stderr.contains("dropped"), "{}", r.stderr);
    assert_eq!(all_refs(&repo), before);
}

#[test]
fn a_claim_left_by_an_interrupted_release_binds_until_sweep_drops_it() {
    let repo = repo();
    repo.start("owner", &[]);
    let other = repo.start("other", &[]);
    repo.task_root(&["claim", "owner", "src/db/**"]).ok();
    // The release after a drop was lost (as if killed): put the claims ref and git-task's
    // copy of the claims back as they were.
    let tip = rev(&repo, "refs/tasks/_claims");
    let copy = repo.root().join(".git/git-task/claims");
    let kept = std::fs::read(&copy).unwrap();
    repo.task_root(&["drop", "owner"]).ok();
    repo.git(repo.root(), &["update-ref", "refs/tasks/_claims", &tip]);
    std::fs::write(&copy, kept).unwrap();
    repo.write(&other, "src/db/schema.sql", "x\n");
    let refused = commit(&repo, &other, "before the sweep").code(1);
    assert!(refused.stderr.contains("claimed_by"), "{}", refused.stderr);
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert!(j.to_string().contains("stale_claim"), "{j}");
    commit(&repo, &other, "after the sweep").ok();
    let stored = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);
    assert!(!stored.contains("owner"), "{stored}");
}

/// `-c` for an agent's git that skips the hooks (the reference-transaction hook refuses its
/// update of refs that are not its task's).
const NO_HOOKS: &str = "core.hooksPath=/dev/null";

/// SPEC §11: an agent may move or delete any ref. Deleting, rewinding or rewriting the claims
/// ref frees no claimed path: git-task's own copy outside refs still counts.
#[test]
fn deleting_or_rewriting_the_claims_ref_frees_nothing() {
    let repo = repo();
    repo.start("owner", &[]);
    let other = repo.start("other", &[]);
    let before_claim = {
        repo.task_root(&["claim", "owner", "docs/**"]).ok();
        rev(&repo, "refs/tasks/_claims")
    };
    repo.task_root(&["claim", "owner", "src/db/**"]).ok();
    repo.write(&other, "src/db/schema.sql", "x\n");
    // From the other task's worktree: delete the ref.
    repo.git(
        &other,
        &["-c", NO_HOOKS, "update-ref", "-d", "refs/tasks/_claims"],
    );
    let refused = commit(&repo, &other, "ref deleted").code(1);
    assert!(refused.stderr.contains("claimed_by"), "{}", refused.stderr);
    // Rewind it to before the claim.
    repo.git(
        &other,
        &[
            "-c",
            NO_HOOKS,
            "update-ref",
            "refs/tasks/_claims",
            &before_claim,
        ],
    );
    commit(&repo, &other, "ref rewound").code(1);
    // Point it at an empty claims file made with plumbing.
    let blob = git_stdin(&repo, &["hash-object", "-w", "--stdin"], "");
    let tree = git_stdin(
        &repo,
        &["mktree"],
        &format!("100644 blob {}\tclaims.toml\n", blob.trim()),
    );
    let commit_id = repo.git(&other, &["commit-tree", tree.trim(), "-m", "no claims"]);
    repo.git(
        &other,
        &[
            "-c",
            NO_HOOKS,
            "update-ref",
            "refs/tasks/_claims",
            commit_id.trim(),
        ],
    );
    commit(&repo, &other, "ref forged").code(1);
    // Past the hook, the gate refuses too.
    repo.git(&other, &["commit", "-q", "--no-verify", "-am", "sneak"]);
    let j = repo
        .task_root(&["merge", "other", "--no-checks", "--json"])
        .code(1)
        .json();
    assert_eq!(j["violations"][0]["reason"], "claimed_by", "{j}");
    // A forged record saying the owner was dropped frees nothing either.
    let record = rev(&repo, "refs/tasks/owner/record");
    let state = repo.git(repo.root(), &["show", &format!("{record}:task.toml")]);
    assert!(state.contains("status = \"active\""), "{state}");
    let forged = git_stdin(
        &repo,
        &["hash-object", "-w", "--stdin"],
        &state.replace("status = \"active\"", "status = \"dropped\""),
    );
    let entries = repo.git(repo.root(), &["ls-tree", &format!("{record}^{{tree}}")]);
    let entries: String = entries
        .lines()
        .map(|l| match l.ends_with("\ttask.toml") {
            true => format!("100644 blob {}\ttask.toml\n", forged.trim()),
            false => format!("{l}\n"),
        })
        .collect();
    let tree = git_stdin(&repo, &["mktree"], &entries);
    let dropped = repo.git(
        &other,
        &["commit-tree", tree.trim(), "-p", &record, "-m", "dropped"],
    );
    repo.git(
        &other,
        &[
            "-c",
            NO_HOOKS,
            "update-ref",
            "refs/tasks/owner/record",
            dropped.trim(),
        ],
    );
    assert_eq!(record_status(&repo, "owner"), "dropped");
    let j = repo
        .task_root(&["merge", "other", "--no-checks", "--json"])
        .code(1)
        .json();
    assert_eq!(j["violations"][0]["reason"], "claimed_by", "{j}");
}

/// A task claims only paths it may change: a claim reaching beyond its contract's allowed
/// paths (`**`, another directory, a path climbing out) could fence every other task off the
/// repository. Refused with exit 2, nothing written, by `claim` and by `start --claim`.
#[test]
fn claims_beyond_the_contract_are_refused() {
    let repo = repo();
    repo.start("a", &["--allow", "src/**"]);
    let before = all_refs(&repo);
    for glob in ["**", "docs/**", "*.md", "../src/x"] {
        let run = repo.task_root(&["claim", "a", glob]).code(2);
        assert!(run.stderr.contains("error:"), "{glob}: {run}");
        assert_eq!(all_refs(&repo), before, "{glob}: nothing written");
    }
    let run = repo
        .task_root(&["start", "b", "--allow", "src/api/**", "--claim", "src/**"])
        .code(2);
    assert!(run.stderr.contains("beyond"), "{run}");
    assert_eq!(all_refs(&repo), before, "start wrote nothing");
    repo.task_root(&["claim", "a", "src/db/**"]).ok();
    // A task whose contract allows every path may claim any of them.
    repo.start("c", &["--share"]);
    repo.task_root(&["claim", "c", "docs/**"]).ok();
}

/// The claims that count are git-task's own copy: a claims ref rewritten with plumbing to claim
/// paths for a task (or to hold a blob) blocks no commit; `sweep` reports it and writes the ref
/// again from the copy.
#[test]
fn a_claims_ref_rewritten_to_claim_more_blocks_nothing_and_sweep_writes_it_back() {
    let repo = repo();
    repo.start("owner", &[]);
    let other = repo.start("other", &["--share"]);
    repo.task_root(&["claim", "owner", "docs/**"]).ok();
    let genuine = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);
    let forged = genuine.replace("docs/**", "src/**");
    let blob = git_stdin(&repo, &["hash-object", "-w", "--stdin"], &forged);
    let tree = git_stdin(
        &repo,
        &["mktree"],
        &format!("100644 blob {}\tclaims.toml\n", blob.trim()),
    );
    let forged = repo.git(&other, &["commit-tree", tree.trim(), "-m", "claims"]);
    repo.git(
        &other,
        &[
            "-c",
            NO_HOOKS,
            "update-ref",
            "refs/tasks/_claims",
            forged.trim(),
        ],
    );
    repo.write(&other, "src/api/a.rs", "fn a() { 1 }\n");
    commit(&repo, &other, "not claimed").ok();
    repo.write(&other, "docs/x.md", "# claimed\n");
    commit(&repo, &other, "claimed").code(1);
    repo.git(&other, &["checkout", "-q", "--", "docs/x.md"]);

    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert!(j.to_string().contains("claims_ref_changed"), "{j}");
    let now = repo.git(repo.root(), &["show", "refs/tasks/_claims:claims.toml"]);
    assert_eq!(now, genuine);
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert!(!j.to_string().contains("claims_ref_changed"), "{j}");
    repo.fsck();
}
