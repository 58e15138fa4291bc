//! More ways an agent inside its task worktree tries to get past the contract (SPEC §5, §7,
//! §11), each refused by the mechanism rather than by the case: after every refusal the
//! target is unchanged and `git fsck` is clean.

use crate::common::TestRepo;
use crate::common::{commit_all, rev};

#[track_caller]
fn assert_refused(repo: &TestRepo, json: &serde_json::Value, before: &str, file: &str) {
    assert_eq!(json["kind"], "contract_violation", "{json}");
    let files: Vec<&str> = json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["file"].as_str())
        .collect();
    assert!(files.contains(&file), "{file} not blamed: {json}");
    assert_eq!(rev(repo, "main"), before, "the target must not move");
    repo.fsck();
}

/// `core.ignoreCase` is configuration the agent can change (`git config`, shared by every
/// worktree): turning it off must not let a case variant of a forbidden path through (on the
/// case-insensitive file system that set it, `SRC/Store/mod.rs` *is* `src/store/mod.rs`), and
/// turning it on must not let a case variant of an allowed path through (on a case-sensitive
/// one, `SRC/LIB.RS` is another file, outside what the task may change).
#[test]
fn flipping_core_ignorecase_widens_nothing() {
    // A repository made on a case-insensitive file system: git set core.ignoreCase there.
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "core.ignoreCase", "true"]);
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.git(&wt, &["config", "core.ignoreCase", "false"]);
    repo.write(&wt, "SRC/Store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "case variant of a forbidden path");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "SRC/Store/mod.rs");

    // A case-sensitive one: the agent turns core.ignoreCase on.
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t2", &["--allow", "src/lib.rs"]);
    repo.write(&wt, "SRC/LIB.RS", "// elsewhere\n");
    commit_all(&repo, &wt, "case variant of an allowed path");
    repo.git(&wt, &["config", "core.ignoreCase", "true"]);
    let json = repo.task_root(&["merge", "t2", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "SRC/LIB.RS");
}

/// A symlink is resolved as the file system will: through the symlinks already in the tree. A
/// link to `docs/store/mod.rs`, where the base's `docs/store` is a link to `../src/store`, points
/// into the forbidden `src/store/`; so does one that climbs out through such a link.
#[test]
fn a_symlink_through_another_symlink_is_resolved_as_the_file_system_does() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.root().join("docs")).unwrap();
    std::os::unix::fs::symlink("../src/store", repo.root().join("docs/store")).unwrap();
    std::os::unix::fs::symlink("src/store", repo.root().join("store-link")).unwrap();
    commit_all(&repo, repo.root(), "a convenience link in the base");
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    std::os::unix::fs::symlink("../docs/store/mod.rs", wt.join("src/alias.rs")).unwrap();
    commit_all(&repo, &wt, "a link through a link");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "src/alias.rs");
    assert_eq!(json["violations"][0]["reason"], "symlink_escape", "{json}");

    // Chains the task makes itself, ending outside the repository or in a loop.
    let wt2 = repo.start("t2", &["--allow", "src/**"]);
    std::os::unix::fs::symlink("hop/../../x", wt2.join("src/a")).unwrap();
    std::os::unix::fs::symlink("/tmp", wt2.join("src/hop")).unwrap();
    std::os::unix::fs::symlink("loop2", wt2.join("src/loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", wt2.join("src/loop2")).unwrap();
    commit_all(&repo, &wt2, "chains");
    let json = repo.task_root(&["merge", "t2", "--json"]).code(1).json();
    for file in ["src/a", "src/hop", "src/loop1", "src/loop2"] {
        assert_refused(&repo, &json, &before, file);
    }
    // A link through a base link that ends where the task may write is fine.
    let wt3 = repo.start("t3", &["--allow", "src/**", "--forbid", "src/store/**"]);
    std::os::unix::fs::symlink("../store-link/../lib.rs", wt3.join("src/lib2.rs")).unwrap();
    commit_all(&repo, &wt3, "plain link");
    repo.task_root(&["merge", "t3", "--json"]).ok();
}

/// `--merge` makes every commit of the task reachable from the target (a checkout, a bisect
/// runs them): a forbidden change made in one commit and undone in the next, or made by a merge
/// commit of its own (an evil merge) and undone later, is judged there as `--rebase` judges each
/// replayed commit. Merging the base in is not blamed, and the squash still lands the net change.
#[test]
fn merge_commit_mode_judges_every_commit_it_makes_reachable() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    repo.git(&wt, &["checkout", "-q", "HEAD~1", "--", "src/store/mod.rs"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "hide it");
    let json = repo
        .task_root(&["merge", "t1", "--merge", "--json"])
        .code(1)
        .json();
    assert_refused(&repo, &json, &before, "src/store/mod.rs");

    // An evil merge of the base, undone by a later commit.
    let wt2 = repo.start("t2", &["--forbid", "src/store/**"]);
    repo.write(repo.root(), "docs/base.md", "base\n");
    commit_all(&repo, repo.root(), "base work");
    let before = rev(&repo, "main");
    repo.write(&wt2, "README.md", "# two\n");
    commit_all(&repo, &wt2, "task work");
    repo.git(&wt2, &["merge", "-q", "--no-edit", "main"]);
    repo.write(&wt2, "src/store/mod.rs", "// evil\n");
    repo.git(&wt2, &["add", "-A"]);
    repo.git(
        &wt2,
        &["commit", "-q", "--amend", "--no-edit", "--no-verify"],
    );
    repo.git(&wt2, &["checkout", "-q", "main", "--", "src/store/mod.rs"]);
    commit_all(&repo, &wt2, "undo");
    let json = repo
        .task_root(&["merge", "t2", "--merge", "--json"])
        .code(1)
        .json();
    assert_refused(&repo, &json, &before, "src/store/mod.rs");
    // Without the evil part, the base merged in is not the task's: it lands with --merge.
    repo.git(&wt2, &["reset", "-q", "--hard", "HEAD~2"]);
    repo.git(&wt2, &["merge", "-q", "--no-edit", "main"]);
    repo.task_root(&["merge", "t2", "--merge", "--json"]).ok();
    assert_eq!(repo.git(repo.root(), &["show", "main:README.md"]), "# two");
    // The squash of t1 lands only its net change.
    repo.task_root(&["merge", "t1", "--json"]).ok();
    assert_eq!(
        repo.git(repo.root(), &["show", "main:src/lib.rs"]),
        "pub fn lib() { 1 }"
    );
}

/// Forges a record event on top of task `id`'s record whose frozen contract allows everything.
fn forge_loose_record(repo: &TestRepo, id: &str) {
    let record = rev(repo, &format!("refs/tasks/{id}/record"));
    let state = repo.git(repo.root(), &["show", &format!("{record}:task.toml")]);
    let dir = repo.base().join("forge");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("task.toml"), format!("{state}\n")).unwrap();
    std::fs::write(
        dir.join("contract.toml"),
        format!("version = 1\ntask = \"{id}\"\n"),
    )
    .unwrap();
    let blob = |name: &str| {
        let path = dir.join(name);
        repo.git(repo.root(), &["hash-object", "-w", path.to_str().unwrap()])
    };
    let (state_blob, contract_blob) = (blob("task.toml"), blob("contract.toml"));
    let tree = crate::common::git_stdin(
        repo,
        &["mktree"],
        &format!(
            "100644 blob {contract_blob}\tcontract.toml\n100644 blob {state_blob}\ttask.toml\n"
        ),
    );
    let forged = repo.git(
        repo.root(),
        &[
            "commit-tree",
            &tree,
            "-p",
            &record,
            "-m",
            "checkpoint\n\n{}",
        ],
    );
    repo.git(
        repo.root(),
        &["update-ref", &format!("refs/tasks/{id}/record"), &forged],
    );
}

/// Patch mode's gate (`merge` accepts the work in place, SPEC §9) trusts nothing the agent can
/// move with git either: not a snapshot ref pointed at a commit of the current files (the
/// changes would be measured from there), not a record rewritten with a looser contract.
#[test]
fn patch_mode_accept_trusts_no_moved_snapshot_or_forged_record() {
    let repo = TestRepo::new();
    repo.task_root(&["start", "p1", "--mode", "patch", "--forbid", "src/store/**"])
        .ok();
    repo.write(repo.root(), "src/store/mod.rs", "// stolen\n");
    let stash = repo.git(repo.root(), &["stash", "create"]);
    repo.git(
        repo.root(),
        &["update-ref", "refs/tasks/p1/snapshot", &stash],
    );
    let run = repo.task_root(&["merge", "p1", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("snapshot"), "{run}");
    assert_eq!(crate::common::record_status(&repo, "p1"), "active");

    let repo = TestRepo::new();
    repo.task_root(&["start", "p2", "--mode", "patch", "--forbid", "src/store/**"])
        .ok();
    repo.write(repo.root(), "src/store/mod.rs", "// stolen\n");
    forge_loose_record(&repo, "p2");
    let run = repo.task_root(&["merge", "p2", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.out().contains("record_tampered") || run.stderr.contains("record"),
        "{run}"
    );
    assert_eq!(crate::common::record_status(&repo, "p2"), "active");
}

/// A claim made while the merge's checks run (the checks run the task's code, which can run
/// `git task claim`; or another agent claims meanwhile) binds the landing: the gate judges
/// again under the target's lock when the claims changed since it judged.
#[test]
fn a_claim_made_while_the_checks_run_binds_the_landing() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    // A task claims only paths its contract allows.
    repo.start("t2", &["--allow", "docs/**", "--allow", "src/lib.rs"]);
    let check = format!(
        "'{}' -C '{}' claim t2 src/lib.rs",
        crate::common::bin().display(),
        repo.root().display()
    );
    let wt = repo.start("t1", &["--check", &check]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "task work");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "src/lib.rs");
    assert_eq!(json["violations"][0]["reason"], "claimed_by", "{json}");

    // The same on a remote target (`merge --remote`).
    repo.git(
        &repo.base(),
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    let url = repo.base().join("remote.git");
    repo.git(
        repo.root(),
        &["remote", "add", "origin", url.to_str().unwrap()],
    );
    repo.git(repo.root(), &["push", "-q", "origin", "main"]);
    repo.task_root(&["release", "t2"]).ok();
    let json = repo
        .task_root(&["merge", "t1", "--remote", "origin", "--json"])
        .code(1)
        .json();
    assert_eq!(json["violations"][0]["reason"], "claimed_by", "{json}");
    let remote_main = repo.git(&url, &["rev-parse", "main"]);
    assert_eq!(remote_main, before);
}

/// Changes that keep a forbidden file's bytes are changes of its path all the same: the exec
/// bit, a file turned into a symlink with the very same blob, a gitlink (mode 160000) placed
/// under a forbidden directory, and a hand-made tree that lists `src` twice.
#[test]
fn mode_only_changes_gitlinks_and_duplicate_entries_are_judged() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let blob = rev(&repo, "main:src/store/mod.rs");
    let head = rev(&repo, "main");
    for (n, cacheinfo) in [
        ("1", format!("100755,{blob},src/store/mod.rs")),
        ("2", format!("120000,{blob},src/store/mod.rs")),
        ("3", format!("160000,{head},src/store/sub")),
    ] {
        let id = format!("m{n}");
        let wt = repo.start(&id, &["--forbid", "src/store/**"]);
        repo.git(&wt, &["update-index", "--add", "--cacheinfo", &cacheinfo]);
        repo.git(&wt, &["commit", "-q", "--no-verify", "-m", "mode only"]);
        repo.git(
            repo.root(),
            &["worktree", "remove", "--force", wt.to_str().unwrap()],
        );
        let path = cacheinfo.rsplit(',').next().unwrap();
        let json = repo.task_root(&["merge", &id, "--json"]).code(1).json();
        assert_refused(&repo, &json, &before, path);
    }
    // `src` twice in one tree: the second copy holds a changed forbidden file.
    let wt = repo.start("m4", &["--forbid", "src/store/**"]);
    let evil = crate::common::git_stdin(&repo, &["hash-object", "-w", "--stdin"], "evil\n");
    let store =
        crate::common::git_stdin(&repo, &["mktree"], &format!("100644 blob {evil}\tmod.rs\n"));
    let lib = rev(&repo, "main:src/lib.rs");
    let src2 = crate::common::git_stdin(
        &repo,
        &["mktree"],
        &format!("100644 blob {lib}\tlib.rs\n040000 tree {store}\tstore\n"),
    );
    let tip = rev(&repo, "task/m4");
    let mut entries: String = repo
        .git(repo.root(), &["ls-tree", &tip])
        .lines()
        .filter(|l| !l.ends_with("\tsrc"))
        .map(|l| format!("{l}\n"))
        .collect();
    entries.push_str(&format!("040000 tree {}\tsrc\n", rev(&repo, "main:src")));
    entries.push_str(&format!("040000 tree {src2}\tsrc\n"));
    let tree = crate::common::git_stdin(&repo, &["mktree"], &entries);
    let commit = repo.git(
        repo.root(),
        &["commit-tree", &tree, "-p", &tip, "-m", "dup"],
    );
    repo.git(repo.root(), &["update-ref", "refs/heads/task/m4", &commit]);
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    let json = repo.task_root(&["merge", "m4", "--json"]).code(1).json();
    assert_eq!(json["kind"], "contract_violation", "{json}");
    assert_eq!(rev(&repo, "main"), before);
}

/// A forbidden rule matches a path in either Unicode normalization form: on a file system that
/// does not tell them apart (APFS, HFS+), `café` written decomposed is the forbidden `café`.
#[test]
fn a_decomposed_spelling_of_a_forbidden_path_is_forbidden() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "docs/caf\u{e9}/**"]);
    repo.write(&wt, "docs/cafe\u{301}/menu.md", "stolen\n");
    commit_all(&repo, &wt, "decomposed");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "docs/cafe\u{301}/menu.md");
    // And the other way round: a rule written decomposed, a path written composed.
    let wt = repo.start("t2", &["--forbid", "docs/cafe\u{301}/**"]);
    repo.write(&wt, "docs/caf\u{e9}/menu.md", "stolen\n");
    commit_all(&repo, &wt, "composed");
    let json = repo.task_root(&["merge", "t2", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "docs/caf\u{e9}/menu.md");
}

/// `check --staged` (the pre-commit hook's verdict) follows symlinks through the staged tree
/// the same way, also when git left the index without a cached tree to read it from (a client
/// other than git's CLI, or nothing written yet): the hook refuses what the gate would.
#[test]
fn the_staged_verdict_follows_symlinks_without_a_cached_tree() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.root().join("docs")).unwrap();
    std::os::unix::fs::symlink("../src/store", repo.root().join("docs/store")).unwrap();
    commit_all(&repo, repo.root(), "a convenience link in the base");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    std::os::unix::fs::symlink("../docs/store/mod.rs", wt.join("src/alias.rs")).unwrap();
    repo.git(&wt, &["add", "-A"]);
    let json = repo
        .task(&wt, &["check", "--staged", "--json"])
        .code(1)
        .json();
    assert_eq!(json["violations"][0]["file"], "src/alias.rs", "{json}");
    assert_eq!(json["violations"][0]["reason"], "symlink_escape", "{json}");
}

/// Starts task `id` forbidding `src/store/**` and commits a forbidden change on its branch
/// (`--no-verify` style: no hook installed); returns the worktree and the stolen commit.
fn stolen_commit(repo: &TestRepo, id: &str) -> (std::path::PathBuf, String) {
    let wt = repo.start(id, &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(repo, &wt, "forbidden");
    let stolen = rev(repo, &format!("task/{id}"));
    (wt, stolen)
}

/// The attack's end: starting `id` again with a wider contract is refused with nothing
/// written; started again with its own, the stolen commit cherry-picked onto it is refused
/// at merge and `main` stays at `before`.
#[track_caller]
fn comes_back_only_as_narrow(repo: &TestRepo, id: &str, stolen: &str, before: &str) {
    let refs = all_refs(repo);
    let run = repo.task_root(&["start", id, "--allow", "**"]).code(1);
    assert!(run.stderr.contains("cannot loosen it"), "{run}");
    assert_eq!(all_refs(repo), refs, "nothing written");
    let wt = repo.start(id, &[]);
    repo.git(&wt, &["cherry-pick", stolen]);
    let json = repo.task_root(&["merge", id, "--json"]).code(1).json();
    assert_refused(repo, &json, before, "src/store/mod.rs");
}

/// A task whose record was rewritten or deleted outside git-task (the ledger says so) cannot be
/// started again, looser or not, and its stolen commit lands nowhere.
fn comes_back_never(repo: &TestRepo, id: &str, stolen: &str, before: &str) {
    let refs = all_refs(repo);
    for extra in [&["--allow", "**"][..], &[]] {
        let mut args = vec!["start", id, "--json"];
        args.extend_from_slice(extra);
        let j = repo.task_root(&args).code(1).json();
        assert_eq!(j["kind"], "record_tampered", "{j}");
        assert_eq!(all_refs(repo), refs, "nothing written");
    }
    assert_eq!(rev(repo, "main"), before);
    let _ = stolen;
}

/// Every ref, for "nothing was written".
fn all_refs(repo: &TestRepo) -> String {
    repo.git(
        repo.root(),
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    )
}

/// SPEC §2.4, a task cannot loosen its own contract: not by `start --reset` with wider rules,
/// run from inside its worktree (exit 1, nothing written, the forbidden commit still refused at
/// merge), while a narrower reset is fine.
#[test]
fn a_reset_cannot_loosen_the_contract() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**", "--check", "true"]);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "forbidden");
    let refs = all_refs(&repo);
    for wider in [
        &["--allow", "**"][..],
        &["--forbid", "docs/**"],
        &["--forbid", "src/store/**"],
    ] {
        let mut args = vec!["start", "t1", "--reset"];
        args.extend_from_slice(wider);
        let run = repo.task(&wt, &args).code(1);
        assert!(run.stderr.contains("cannot loosen its contract"), "{run}");
        assert_eq!(all_refs(&repo), refs, "nothing written: {wider:?}");
    }
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "src/store/mod.rs");
    // Narrower (one more forbidden directory, the same check): the reset goes ahead.
    repo.task(
        &wt,
        &[
            "start",
            "t1",
            "--reset",
            "--forbid",
            "src/store/**",
            "--forbid",
            "docs/**",
            "--check",
            "true",
        ],
    )
    .ok();
}

/// A removed task started again is the same task: with no contract options it comes back with
/// its contract, and with wider ones it is refused (a merged task starts a new life freely).
#[test]
fn a_removed_task_cannot_come_back_looser() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let (_, stolen) = stolen_commit(&repo, "t2");
    repo.task_root(&["remove", "t2", "--force"]).ok();
    comes_back_only_as_narrow(&repo, "t2", &stolen, &before);
}

/// A task whose record (and branch and worktree) the agent deleted with git itself is the same
/// task when started again: git-task keeps its start on file outside refs, so a wider contract
/// is refused, and without contract options it comes back with its contract.
#[test]
fn a_task_whose_record_was_deleted_cannot_come_back_looser() {
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let (wt, stolen) = stolen_commit(&repo, "t3");
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    repo.git(repo.root(), &["branch", "-D", "task/t3"]);
    for r in ["refs/tasks/t3/record", "refs/tasks/t3/base"] {
        repo.git(repo.root(), &["update-ref", "-d", r]);
    }
    comes_back_never(&repo, "t3", &stolen, &before);
}

/// A `merged` event the agent appended to its own record with plumbing (copied from a task
/// git-task really merged) does not end the task's life: only merges git-task made are noted
/// outside refs, so starting the id again still cannot loosen its contract.
#[test]
fn a_forged_merged_event_does_not_free_the_contract() {
    let repo = TestRepo::new();
    let done = repo.start("t1", &[]);
    repo.write(&done, "README.md", "# done\n");
    commit_all(&repo, &done, "real work");
    repo.task_root(&["merge", "t1", "--no-checks"]).ok();
    let before = rev(&repo, "main");
    let (wt, stolen) = stolen_commit(&repo, "t2");
    // The forged event: t1's genuine `merged` message, made t2's, on top of t2's record.
    let message = repo.git(
        repo.root(),
        &["log", "-1", "--format=%B", "refs/tasks/t1/record"],
    );
    let message = message.replace("t1", "t2");
    let tip = rev(&repo, "refs/tasks/t2/record");
    let state = repo.git(repo.root(), &["show", &format!("{tip}:task.toml")]);
    assert!(state.contains("status = \"active\""), "{state}");
    let state_file = repo.base().join("task.toml");
    std::fs::write(
        &state_file,
        state.replace("status = \"active\"", "status = \"merged\""),
    )
    .unwrap();
    let blob = repo.git(
        repo.root(),
        &["hash-object", "-w", state_file.to_str().unwrap()],
    );
    let contract = repo.git(repo.root(), &["rev-parse", &format!("{tip}:contract.toml")]);
    let listing = format!(
        "100644 blob {}\tcontract.toml\n100644 blob {}\ttask.toml\n",
        contract.trim(),
        blob.trim()
    );
    let listing_file = repo.base().join("listing");
    std::fs::write(&listing_file, listing).unwrap();
    let tree = std::process::Command::new("git")
        .current_dir(repo.root())
        .arg("mktree")
        .stdin(std::fs::File::open(&listing_file).unwrap())
        .output()
        .unwrap();
    let tree = String::from_utf8(tree.stdout).unwrap();
    let forged = repo.git(
        repo.root(),
        &["commit-tree", tree.trim(), "-p", &tip, "-m", &message],
    );
    repo.git(
        repo.root(),
        &["update-ref", "refs/tasks/t2/record", forged.trim()],
    );
    repo.git(
        repo.root(),
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    repo.git(repo.root(), &["branch", "-D", "task/t2"]);
    // The forgery is not the record git-task wrote: nothing acts on it, not even a new start.
    let status = repo.task_root(&["status", "t2", "--json"]).code(1).json();
    assert_eq!(status["kind"], "record_tampered", "{status}");
    comes_back_never(&repo, "t2", &stolen, &before);
    // A task git-task merged starts a new life with any contract.
    repo.task_root(&["start", "t1", "--allow", "**"]).ok();
}

/// A worktree of a task that forbids `README.md`, with hooks installed, whose index is clean,
/// not racy, and has a cached tree; and a tree `bad` that changes `README.md`, written to the
/// object store as an agent can (`git write-tree`). Returns (worktree, index file, bad tree).
fn crafted_index_setup(repo: &TestRepo) -> (std::path::PathBuf, std::path::PathBuf, String) {
    let wt = repo.start("t1", &["--forbid", "README.md"]);
    repo.task_root(&["hooks", "install"]).ok();
    repo.write(&wt, "README.md", "# forbidden\n");
    repo.git(&wt, &["add", "README.md"]);
    let bad = repo.git(&wt, &["write-tree"]);
    repo.git(&wt, &["reset", "-q", "--hard"]);
    // Written a second after the files, so that git finds nothing racy to refresh.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    repo.git(
        &wt,
        &["update-index", "--force-write-index", "--really-refresh"],
    );
    let index = std::path::PathBuf::from(repo.git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    ));
    let head_tree = repo.git(&wt, &["rev-parse", "HEAD^{tree}"]);
    let bytes = std::fs::read(&index).unwrap();
    assert_eq!(
        cached_root(&bytes, 12 + entries_len(&bytes)),
        Some(head_tree),
        "the index has a cached tree"
    );
    (wt, index, bad)
}

/// The length of an index file's entries (version 2, as git writes it here).
fn entries_len(index: &[u8]) -> usize {
    assert_eq!(&index[..4], b"DIRC");
    assert_eq!(u32::from_be_bytes(index[4..8].try_into().unwrap()), 2);
    let n = u32::from_be_bytes(index[8..12].try_into().unwrap());
    let mut at = 12;
    for _ in 0..n {
        let name = (u16::from_be_bytes([index[at + 60], index[at + 61]]) & 0x0fff) as usize;
        at += (62 + name + 8) & !7;
    }
    at - 12
}

/// The root of the first `TREE` extension at or after `at`.
fn cached_root(index: &[u8], at: usize) -> Option<String> {
    let mut at = at;
    while at + 8 <= index.len() - 20 {
        let size = u32::from_be_bytes(index[at + 4..at + 8].try_into().unwrap()) as usize;
        if &index[at..at + 4] == b"TREE" {
            let body = &index[at + 8..at + 8 + size];
            let nl = body.iter().position(|b| *b == b'\n')?;
            let id: String = body[nl + 1..nl + 21]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            return Some(id);
        }
        at += 8 + size;
    }
    None
}

/// A `TREE` extension whose root is `tree` (hex), covering `entries` entries, with no subtrees;
/// `extra` more bytes of size are claimed after its body (git reads only the records).
fn tree_extension(tree: &str, entries: u32, extra: usize) -> Vec<u8> {
    let mut body = format!("\0{entries} 0\n").into_bytes();
    body.extend((0..20).map(|i| u8::from_str_radix(&tree[2 * i..2 * i + 2], 16).unwrap()));
    let mut ext = b"TREE".to_vec();
    ext.extend_from_slice(&((body.len() + extra) as u32).to_be_bytes());
    ext.extend_from_slice(&body);
    ext
}

/// SHA-1 of `bytes` (git's index checksum), from coreutils.
fn sha1(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha1sum runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    (0..20)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Writes `body` (an index without its checksum) with its checksum to `index`.
fn write_index(index: &std::path::Path, mut body: Vec<u8>) {
    let sum = sha1(&body);
    body.extend_from_slice(&sum);
    std::fs::write(index, body).unwrap();
}

/// `git commit --allow-empty` with the crafted index is refused by the hook, and HEAD stays.
#[track_caller]
fn commit_is_refused(repo: &TestRepo, wt: &std::path::Path, bad: &str) {
    let head = repo.git(wt, &["rev-parse", "HEAD"]);
    let run = repo.git_run(wt, &["commit", "-q", "--allow-empty", "-m", "sneaky"]);
    let now = repo.git(wt, &["rev-parse", "HEAD^{tree}"]);
    assert_ne!(
        now, bad,
        "the forbidden tree was committed past the hook:\n{run}"
    );
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(repo.git(wt, &["rev-parse", "HEAD"]), head);
}

/// An index with two cached trees: git keeps the last one it reads and commits it as is (the
/// entries are clean, so it does not rewrite the index before the hook). The hook judges that
/// tree, not the first.
#[test]
fn the_hook_judges_the_cached_tree_git_commits_when_there_are_two() {
    let repo = TestRepo::new();
    let (wt, index, bad) = crafted_index_setup(&repo);
    let bytes = std::fs::read(&index).unwrap();
    let n = u32::from_be_bytes(bytes[8..12].try_into().unwrap());
    let mut body = bytes[..bytes.len() - 20].to_vec();
    body.extend(tree_extension(&bad, n, 0));
    write_index(&index, body);
    commit_is_refused(&repo, &wt, &bad);
}

/// An index whose end-of-entries extension (EOIE) points at a cached tree hidden inside an
/// optional extension: git reading the index on several threads (`index.threads`, which an
/// agent can set) takes its extensions from there; read front to back, the hidden tree is
/// skipped. The hook refuses an index that reads two ways.
#[test]
fn an_index_that_reads_two_ways_is_refused() {
    let repo = TestRepo::new();
    let (wt, index, bad) = crafted_index_setup(&repo);
    repo.git(&wt, &["config", "index.threads", "2"]);
    let bytes = std::fs::read(&index).unwrap();
    let n = u32::from_be_bytes(bytes[8..12].try_into().unwrap());
    let end = 12 + entries_len(&bytes);
    let real = &bytes[end..bytes.len() - 20];
    // The hidden tree's size reaches over the real extensions to the EOIE.
    let fake = tree_extension(&bad, n, real.len());
    let mut body = bytes[..end].to_vec();
    body.extend_from_slice(b"ZFAK");
    body.extend_from_slice(&(fake.len() as u32).to_be_bytes());
    let offset = body.len();
    body.extend_from_slice(&fake);
    body.extend_from_slice(real);
    // EOIE: where the extensions start, and the hash of the extension headers from there (the
    // hidden tree's is the only one: it reaches to the EOIE).
    let mut eoie = b"EOIE".to_vec();
    eoie.extend_from_slice(&24u32.to_be_bytes());
    eoie.extend_from_slice(&(offset as u32).to_be_bytes());
    eoie.extend_from_slice(&sha1(&fake[..8]));
    body.extend_from_slice(&eoie);
    write_index(&index, body);
    // Read front to back, the index still says HEAD's tree.
    let head_tree = repo.git(&wt, &["rev-parse", "HEAD^{tree}"]);
    let crafted = std::fs::read(&index).unwrap();
    assert_eq!(cached_root(&crafted, end), Some(head_tree));
    assert_eq!(cached_root(&crafted, offset), Some(bad.clone()));
    commit_is_refused(&repo, &wt, &bad);
}

/// An index git wrote with an end-of-entries extension (and in version 4) reads one way: the
/// hook lets an allowed commit through and refuses a forbidden one.
#[test]
fn an_index_with_an_end_of_entries_extension_is_read_as_git_wrote_it() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &["--forbid", "README.md"]);
    repo.task_root(&["hooks", "install"]).ok();
    for (key, value) in [
        ("index.recordEndOfIndexEntries", "true"),
        ("index.version", "4"),
    ] {
        repo.git(&wt, &["config", key, value]);
    }
    repo.write(&wt, "src/lib.rs", "pub fn lib() { /* allowed */ }\n");
    repo.git(&wt, &["add", "src/lib.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "allowed"]);
    let index = repo.git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    let bytes = std::fs::read(index).unwrap();
    assert_eq!(
        &bytes[bytes.len() - 52..bytes.len() - 48],
        b"EOIE",
        "git wrote one"
    );
    repo.write(&wt, "README.md", "# forbidden\n");
    repo.git(&wt, &["add", "README.md"]);
    let run = repo.git_run(&wt, &["commit", "-q", "-m", "forbidden"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("README.md"), "{run}");
}
