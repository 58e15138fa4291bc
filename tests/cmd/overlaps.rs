//! `git task overlaps` and the forecast at start, after merge and in `list`: contract overlap,
//! same files (committed or not), trial merges onto the base's tip, and each task against the
//! base's new commits.

use crate::common::TestRepo;
use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A repository with a few files of several lines each.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    for f in ["src/api/a.rs", "src/api/b.rs", "src/db/c.rs", "README"] {
        repo.write(repo.root(), f, "one\ntwo\nthree\nfour\nfive\n");
    }
    commit_all(&repo, repo.root(), "files");
    repo
}

/// Replaces line `two` of `file` in `dir` with `with`, and commits it (hooks skipped).
fn edit(repo: &TestRepo, dir: &Path, file: &str, with: &str) {
    let text = repo.read(dir, file).replace("two", with);
    repo.write(dir, file, &text);
    commit_all(repo, dir, &format!("edit {file}"));
}

fn pair<'a>(j: &'a Value, a: &str, b: &str) -> Option<&'a Value> {
    j["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["tasks"][0] == a && p["tasks"][1] == b)
}

fn task<'a>(j: &'a Value, id: &str) -> &'a Value {
    j["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == id)
        .unwrap()
}

#[test]
fn a_trial_merge_tells_clean_pairs_from_conflicting_ones() {
    let repo = repo();
    let a = repo.start("a", &["--allow", "src/api/**"]);
    let b = repo.start("b", &["--allow", "src/**"]);
    let c = repo.start("c", &["--allow", "src/api/**"]);
    edit(&repo, &a, "src/api/a.rs", "A");
    edit(&repo, &b, "src/api/a.rs", "B");
    // c changes the same file as a, in another place: it merges cleanly.
    let text = repo.read(&c, "src/api/a.rs").replace("five", "C");
    repo.write(&c, "src/api/a.rs", &text);
    commit_all(&repo, &c, "c");
    let objects_before = repo.git(repo.root(), &["count-objects"]);

    let j = repo.task_root(&["overlaps", "--json"]).code(1).json();
    assert_eq!(j["kind"], "overlaps");
    assert_eq!(j["pairs_checked"], 3);
    let ab = pair(&j, "a", "b").expect("a and b collide");
    assert_eq!(ab["kind"], "conflict");
    assert_eq!(ab["merge"]["verdict"], "conflict");
    assert_eq!(ab["merge"]["paths"], serde_json::json!(["src/api/a.rs"]));
    assert_eq!(ab["files"], serde_json::json!(["src/api/a.rs"]));
    assert_eq!(ab["contract"]["overlap"], "yes");
    let ac = pair(&j, "a", "c").expect("a and c share a file");
    assert_eq!(ac["kind"], "same_files");
    assert_eq!(ac["merge"]["verdict"], "clean");
    assert_eq!(
        repo.git(repo.root(), &["count-objects"]),
        objects_before,
        "trial merges write nothing to the object database"
    );

    // Named tasks only: a and c do not conflict, so the exit code is 0.
    let j = repo
        .task_root(&["overlaps", "a", "c", "--json"])
        .ok()
        .json();
    assert_eq!(j["pairs_checked"], 1);
    let text = repo.task_root(&["overlaps"]).code(1);
    assert!(text.stdout.contains("conflict"), "{}", text.stdout);
    assert!(text.stdout.contains("src/api/a.rs"), "{}", text.stdout);
}

#[test]
fn uncommitted_work_counts_as_the_same_files() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.write(&a, "README", "a's readme\n");
    repo.write(&b, "README", "b's readme\n");
    repo.write(&b, "notes/new.txt", "untracked\n");
    let j = repo.task_root(&["overlaps", "--json"]).ok().json();
    let ab = pair(&j, "a", "b").expect("both changed README");
    assert_eq!(ab["kind"], "same_files");
    assert_eq!(ab["files"], serde_json::json!(["README"]));
    assert_eq!(task(&j, "b")["uncommitted"], true);
    assert_eq!(task(&j, "b")["changed"], 2);
    assert_eq!(j["uncommitted_counted"], true);
    // --committed looks at no worktree: nothing is shared then.
    let j = repo
        .task_root(&["overlaps", "--committed", "--json"])
        .ok()
        .json();
    assert_eq!(j["uncommitted_counted"], false);
    let ab = pair(&j, "a", "b").expect("contracts still meet");
    assert_eq!(ab["kind"], "contract_overlap");
    assert_eq!(ab["files"], serde_json::json!([]));
    assert_eq!(task(&j, "b")["changed"], 0);
}

#[test]
fn contracts_that_cannot_meet_are_not_a_pair() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    repo.start("db", &["--allow", "src/db/**"]);
    repo.start("locks", &["--allow", "*.lock"]);
    repo.start("cargo", &["--allow", "Cargo.lock"]);
    let j = repo.task_root(&["overlaps", "--json"]).ok().json();
    assert!(pair(&j, "api", "db").is_none(), "{j}");
    let lc = pair(&j, "cargo", "locks").expect("*.lock covers Cargo.lock");
    assert_eq!(lc["kind"], "contract_overlap");
    assert_eq!(lc["contract"]["example"], "Cargo.lock");
}

#[test]
fn each_task_is_told_how_far_behind_and_what_conflicts_with_the_base() {
    let repo = repo();
    let a = repo.start("a", &[]);
    edit(&repo, &a, "README", "A");
    edit(&repo, repo.root(), "README", "MAIN");
    edit(&repo, repo.root(), "src/db/c.rs", "MAIN");
    let j = repo.task_root(&["overlaps", "--json"]).code(1).json();
    let t = task(&j, "a");
    assert_eq!(t["behind"], 2);
    assert_eq!(t["base"], "main");
    assert_eq!(t["conflicts_with_base"], serde_json::json!(["README"]));
    let text = repo.task_root(&["overlaps"]).code(1);
    assert!(text.stdout.contains("behind main by 2"), "{}", text.stdout);
}

/// When the overlaps index was last written (its inode and modification time; `None`: never).
fn index_written(repo: &TestRepo) -> Option<(u64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(repo.root().join(".git/git-task/overlaps-index")).ok()?;
    Some((m.ino(), m.mtime_nsec()))
}

/// A landing that wrote only a squash on the branch is kept once (`overlaps-landings`), and
/// what the forecast knew of every other task holds across it: the next forecast reads it
/// without rewriting the index, and still names the task that now conflicts.
#[test]
fn the_forecast_keeps_what_it_knew_across_landings_without_rewriting_the_index() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    let c = repo.start("c", &[]);
    let d = repo.start("d", &[]);
    edit(&repo, &a, "src/api/b.rs", "A");
    edit(&repo, &b, "src/api/b.rs", "B");
    edit(&repo, &c, "src/db/c.rs", "C");
    edit(&repo, &d, "src/api/a.rs", "D");
    let j = repo
        .task_root(&["merge", "c", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["now_conflicting"], serde_json::json!([]), "{j}");
    let before = index_written(&repo);
    let j = repo
        .task_root(&["merge", "d", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["now_conflicting"], serde_json::json!([]), "{j}");
    assert_eq!(
        index_written(&repo),
        before,
        "nothing worth keeping changed"
    );
    let landings =
        std::fs::read_to_string(repo.root().join(".git/git-task/overlaps-landings")).unwrap();
    assert_eq!(landings.lines().count(), 2, "{landings}");
    let j = repo
        .task_root(&["merge", "a", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["now_conflicting"][0]["task"], "b", "{j}");
    assert_eq!(j["now_conflicting"].as_array().unwrap().len(), 1, "{j}");
}

/// Two landings from the same tip (the branch moved back between them, as a benchmark or an
/// undone merge does) have the same merge bases as that tip, and so as each other: what the
/// forecast knew of the other tasks after the first still holds after the second.
#[test]
fn the_forecast_keeps_what_it_knew_across_landings_from_the_same_tip() {
    let repo = repo();
    let c = repo.start("c", &[]);
    edit(&repo, &c, "src/db/c.rs", "C");
    let base = rev(&repo, "main");
    for (i, id) in ["d1", "d2"].into_iter().enumerate() {
        let d = repo.start(id, &[]);
        edit(&repo, &d, "src/api/a.rs", id);
        let before = index_written(&repo);
        let j = repo
            .task_root(&["merge", id, "--keep", "--no-checks", "--json"])
            .ok()
            .json();
        assert_eq!(j["now_conflicting"], serde_json::json!([]), "{j}");
        if i == 1 {
            assert_eq!(index_written(&repo), before, "c's work was known");
        }
        repo.git(repo.root(), &["reset", "-q", "--hard", &base]);
    }
}

#[test]
fn after_a_merge_lands_the_tasks_that_now_conflict_are_named() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    let c = repo.start("c", &[]);
    edit(&repo, &a, "src/api/b.rs", "A");
    edit(&repo, &b, "src/api/b.rs", "B");
    edit(&repo, &c, "src/db/c.rs", "C");
    let j = repo
        .task_root(&["merge", "a", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["kind"], "merge");
    assert_eq!(j["now_conflicting"][0]["task"], "b", "{j}");
    assert_eq!(
        j["now_conflicting"][0]["paths"],
        serde_json::json!(["src/api/b.rs"])
    );
    assert_eq!(
        j["now_conflicting"].as_array().unwrap().len(),
        1,
        "c merges cleanly"
    );
    let text = repo.task_root(&["merge", "c", "--no-checks"]).ok();
    assert!(
        text.stderr.contains("task 'b' now conflicts with main"),
        "{}",
        text.stderr
    );
}

#[test]
fn start_warns_about_live_tasks_whose_contracts_overlap() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    repo.start("docs", &["--allow", "docs/**"]);
    let r = repo
        .task_root(&["start", "new", "--allow", "src/**", "--json"])
        .ok();
    let j = r.json();
    let names: Vec<&str> = j["overlaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["api"], "{j}");
    let r = repo
        .task_root(&["start", "new2", "--allow", "src/api/x.rs"])
        .ok();
    // One line names every overlapping task; `overlaps` has the details.
    let warning: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("change the same paths"))
        .collect();
    assert_eq!(
        warning,
        ["warning: 2 tasks may change the same paths: 'api', 'new'; details: git task overlaps"],
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("'docs'"), "{}", r.stderr);
}

/// `start` remembers what it read of every record and then reads only the records the ledger's
/// change log names (a thousand live tasks cost nothing each): a task removed and started again
/// under the same id, with another contract, is read again, not taken for the one remembered.
#[test]
fn start_reads_a_record_made_again_under_the_same_id() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    // Old enough to be remembered (two seconds after the ref file's last change).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let j = repo
        .task_root(&["start", "n1", "--allow", "docs/**", "--json"])
        .ok()
        .json();
    assert_eq!(j["overlaps"], serde_json::json!([]), "{j}");
    repo.task_root(&["remove", "api", "--force"]).ok();
    repo.start("api", &["--allow", "docs/api/**"]);
    let j = repo
        .task_root(&["start", "n2", "--allow", "docs/**", "--json"])
        .ok()
        .json();
    let names: Vec<&str> = j["overlaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["api", "n1"], "{j}");
}

#[test]
fn list_shows_collisions_and_follows_ref_changes() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.start("c", &[]);
    edit(&repo, &a, "README", "A");
    edit(&repo, &b, "README", "B");
    let collisions = |repo: &TestRepo| -> Vec<(String, Value)> {
        let j = repo.task_root(&["list", "--json"]).ok().json();
        j["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_owned(),
                    t["collisions"].clone(),
                )
            })
            .collect()
    };
    let one = serde_json::json!({"with_base": 0, "with_tasks": 1});
    let none = serde_json::json!({"with_base": 0, "with_tasks": 0});
    assert_eq!(
        collisions(&repo),
        [
            ("a".into(), one.clone()),
            ("b".into(), one.clone()),
            ("c".into(), none.clone())
        ]
    );
    let text = repo.task_root(&["list"]).ok();
    assert!(text.stdout.contains("COLLIDES"), "{}", text.stdout);
    assert!(text.stdout.contains("1 task"), "{}", text.stdout);
    // Again from the cache: the same answer.
    assert_eq!(collisions(&repo)[0].1, one);
    // b takes a's side: the cached pair is stale (b's tip moved) and the answer follows.
    let theirs = repo.read(&a, "README");
    repo.write(&b, "README", &theirs);
    commit_all(&repo, &b, "agree with a");
    assert_eq!(collisions(&repo)[0].1, none);
    // The base moves under a: a now conflicts with it.
    edit(&repo, repo.root(), "README", "MAIN");
    let now = collisions(&repo);
    assert_eq!(now[0].1["with_base"], 1, "{now:?}");
}

#[test]
fn overlaps_refuses_unknown_and_finished_tasks() {
    let repo = repo();
    repo.start("a", &[]);
    repo.start("b", &[]);
    repo.task_root(&["overlaps", "nosuch"]).code(2);
    repo.task_root(&["overlaps", "-bad-"]).code(2);
    repo.task_root(&["merge", "b", "--no-checks"]).ok();
    repo.task_root(&["overlaps", "b"]).code(2);
    let j = repo.task_root(&["overlaps", "--json"]).ok().json();
    assert_eq!(j["tasks"].as_array().unwrap().len(), 1);
}

// ---- issue 33: the overlaps index (start's warning and merge's forecast look only at the tasks
// that can meet the new contract or the landed paths; the answers are the full computation's)

/// The tasks `start` named as neighbours.
fn neighbours(j: &Value) -> Vec<String> {
    j["overlaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("{} {}", n["task"].as_str().unwrap(), n["overlap"]))
        .collect()
}

/// The neighbours of `id` as `overlaps` computes them for every pair (no index), in the form
/// of [`neighbours`].
fn forecast_neighbours(repo: &TestRepo, id: &str) -> Vec<String> {
    let j = repo
        .task_root(&["overlaps", "--committed", "--json"])
        .json();
    let mut out: Vec<String> = j["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["contract"]["overlap"] != "no")
        .filter(|p| p["tasks"][0] == id || p["tasks"][1] == id)
        .map(|p| {
            let other = if p["tasks"][0] == id {
                &p["tasks"][1]
            } else {
                &p["tasks"][0]
            };
            format!("{} {}", other.as_str().unwrap(), p["contract"]["overlap"])
        })
        .collect();
    out.sort();
    out
}

fn index_file(repo: &TestRepo) -> std::path::PathBuf {
    repo.root().join(".git/git-task/overlaps-index")
}

#[test]
fn start_names_the_same_neighbours_with_the_index_as_without() {
    let repo = repo();
    // Contracts with and without a literal directory prefix: `**`, a name at any depth, a glob
    // in the first component and no `allowed` at all meet everything; `docs/**` and `src/db/**`
    // cannot meet `src/api/**`.
    for (id, allow) in [
        ("all", vec!["--allow", "**"]),
        ("anydepth", vec!["--allow", "*.rs"]),
        ("braces", vec!["--allow", "{src,lib}/api/**"]),
        ("db", vec!["--allow", "src/db/**"]),
        ("docs", vec!["--allow", "docs/**"]),
        ("file", vec!["--allow", "src/api/a.rs"]),
        ("free", vec![]),
        ("parent", vec!["--allow", "src"]),
        ("upper", vec!["--allow", "SRC/api/**"]),
    ] {
        repo.start(id, &allow);
    }
    for (n, id) in ["new1", "new2"].iter().enumerate() {
        if n == 1 {
            // The second start reads the index the first one wrote.
            assert!(index_file(&repo).is_file());
        }
        let j = repo
            .task_root(&["start", id, "--allow", "src/api/**", "--json"])
            .ok()
            .json();
        let mut got = neighbours(&j);
        got.sort();
        let mut want = vec![
            "all \"yes\"",
            "anydepth \"yes\"",
            "braces \"yes\"",
            "file \"yes\"",
            "free \"yes\"",
            "parent \"yes\"",
        ];
        if n == 1 {
            want.push("new1 \"yes\"");
        }
        want.sort();
        assert_eq!(got, want, "{j}");
        assert_eq!(
            got,
            forecast_neighbours(&repo, id),
            "the full computation agrees"
        );
    }
}

#[test]
fn a_task_whose_contract_changed_after_the_index_was_written_is_seen_with_the_new_one() {
    let repo = repo();
    repo.start("x", &["--allow", "docs/**"]);
    repo.start("gone", &["--allow", "docs/**"]);
    let j = repo
        .task_root(&["start", "y", "--allow", "src/**", "--json"])
        .ok()
        .json();
    assert!(neighbours(&j).is_empty(), "{j}");
    // `x` is reset with another contract, and `gone` removed and started again with one: both
    // records move on; the index still holds their old contracts under the old tips.
    repo.task_root(&[
        "start",
        "x",
        "--reset",
        "--discard-commits",
        "--allow",
        "src/api/**",
    ])
    .ok();
    repo.task_root(&["remove", "gone", "--force"]).ok();
    repo.start("gone", &["--allow", "src/db/**"]);
    let j = repo
        .task_root(&["start", "z", "--allow", "src/**", "--json"])
        .ok()
        .json();
    assert_eq!(
        neighbours(&j),
        ["gone \"yes\"", "x \"yes\"", "y \"yes\""],
        "{j}"
    );
    // A dropped task is not active: the index follows that too.
    repo.task_root(&["drop", "x"]).ok();
    let j = repo
        .task_root(&["start", "w", "--allow", "src/api/**", "--json"])
        .ok()
        .json();
    assert_eq!(neighbours(&j), ["y \"yes\"", "z \"yes\""], "{j}");
}

#[test]
fn a_forged_stale_or_deleted_index_hides_no_neighbour() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    repo.start("docs", &["--allow", "docs/**"]);
    repo.task_root(&["start", "first", "--allow", "src/**"])
        .ok();
    let index = index_file(&repo);
    let written = std::fs::read_to_string(&index).unwrap();
    let mut j: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        j["tasks"]["api"]["hull"],
        serde_json::json!(["src/api"]),
        "{j}"
    );
    let want = ["api \"yes\"", "first \"yes\""];
    let start = |id: &str| {
        let j = repo
            .task_root(&["start", id, "--allow", "src/**", "--json"])
            .ok()
            .json();
        neighbours(&j)
    };
    // Forged: `api` said to allow only `zzz/` and to be finished, under a record tip that is not
    // its record's, in an index from another repository (which followed another change log).
    j["tasks"]["api"]["hull"] = serde_json::json!(["zzz"]);
    j["tasks"]["api"]["active"] = serde_json::json!(false);
    j["tasks"]["api"]["record"] = serde_json::json!("1".repeat(40));
    j["mark"]["ino"] = serde_json::json!(1);
    std::fs::write(&index, j.to_string()).unwrap();
    assert_eq!(start("s1"), want);
    // The index written then holds `api` under its real tip and contract again.
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
    assert_eq!(j["tasks"]["api"]["hull"], serde_json::json!(["src/api"]));
    // Not JSON, an unknown version, a directory in its place, deleted: read as empty.
    let want = |more: &[&str]| {
        let mut w: Vec<String> = ["api \"yes\"", "first \"yes\"", "s1 \"yes\""]
            .iter()
            .chain(more)
            .map(|s| s.to_string())
            .collect();
        w.sort();
        w
    };
    std::fs::write(&index, "{not json").unwrap();
    assert_eq!(start("s2"), want(&[]));
    std::fs::write(&index, written.replace("\"version\":1", "\"version\":99")).unwrap();
    assert_eq!(start("s3"), want(&["s2 \"yes\""]));
    std::fs::remove_file(&index).unwrap();
    assert_eq!(start("s4"), want(&["s2 \"yes\"", "s3 \"yes\""]));
    // Stale: the index as it was before `api` was dropped, put back. The ledger's change log
    // has grown since the point it followed it to: `api` is read again.
    let before_drop = std::fs::read_to_string(&index).unwrap();
    repo.task_root(&["drop", "api"]).ok();
    std::fs::write(&index, before_drop).unwrap();
    let got = start("s5");
    assert!(!got.iter().any(|n| n.starts_with("api ")), "{got:?}");
    assert!(got.iter().any(|n| n.starts_with("s4 ")), "{got:?}");
}

/// What a task does in its worktree.
type Work = dyn Fn(&TestRepo, &Path);

#[test]
fn after_a_merge_exactly_the_tasks_that_conflict_among_many_are_named() {
    let repo = repo();
    for f in [
        "lib/l.rs",
        "docs/d.md",
        "src/api/deep/e.rs",
        "old/o1.md",
        "old/o2.md",
    ] {
        repo.write(repo.root(), f, "one\ntwo\nthree\nfour\nfive\n");
    }
    commit_all(&repo, repo.root(), "more files");
    // The landing changes a line, deletes a directory, adds one, and renames another.
    let landing = repo.start("landing", &[]);
    edit(&repo, &landing, "src/api/a.rs", "L");
    repo.git(&landing, &["rm", "-q", "-r", "lib"]);
    repo.write(&landing, "fresh/new.rs", "new\n");
    repo.git(&landing, &["mv", "old", "renamed"]);
    commit_all(&repo, &landing, "lib goes, fresh comes, old is renamed");
    // Tasks whose work meets the landing's in every way a merge can conflict, and tasks whose
    // work cannot (each of the many others has its own file under its own directory).
    let cases: &[(&str, &Work)] = &[
        // The same line of the same file: a conflict.
        ("same-line", &|r, d| edit(r, d, "src/api/a.rs", "S")),
        // The same file, another line: merged cleanly.
        ("other-line", &|r, d| {
            let t = r.read(d, "src/api/a.rs").replace("five", "FIVE");
            r.write(d, "src/api/a.rs", &t);
            commit_all(r, d, "other line");
        }),
        // A file the landing deleted, changed: modify/delete.
        ("changed-deleted", &|r, d| edit(r, d, "lib/l.rs", "C")),
        // A file where the landing has a directory, and a directory where it has a file.
        ("file-dir", &|r, d| {
            r.git(d, &["rm", "-q", "-r", "src/api"]);
            r.write(d, "src/api", "a file now\n");
            commit_all(r, d, "file where a dir was");
        }),
        ("file-where-new-dir", &|r, d| {
            r.write(d, "fresh", "a file\n");
            commit_all(r, d, "fresh as a file");
        }),
        ("dir-where-new-file", &|r, d| {
            r.write(d, "fresh/new.rs/inner", "a file below\n");
            commit_all(r, d, "a directory where the landing adds a file");
        }),
        // A file added in a directory the landing renamed, and one changed there.
        ("added-in-renamed", &|r, d| {
            r.write(d, "old/o3.md", "three\n");
            commit_all(r, d, "added in old/");
        }),
        ("changed-in-renamed", &|r, d| edit(r, d, "old/o1.md", "R")),
        // Next to the landing's file, untouched by it.
        ("neighbour-file", &|r, d| edit(r, d, "src/api/b.rs", "N")),
        ("elsewhere", &|r, d| edit(r, d, "docs/d.md", "E")),
        ("nothing", &|_, _| {}),
    ];
    for (id, work) in cases {
        let dir = repo.start(id, &[]);
        work(&repo, &dir);
    }
    for k in 0..12 {
        let id = format!("bg{k:02}");
        let dir = repo.start(&id, &[]);
        repo.write(&dir, &format!("bg/{id}/work.txt"), "work\n");
        commit_all(&repo, &dir, "work");
    }
    // `list` fills its cache and a first forecast the index (a merge of `bg00`, reset away).
    repo.task_root(&["list"]).ok();
    let before = rev(&repo, "main");
    repo.task_root(&["merge", "bg00", "--keep", "--no-checks"])
        .ok();
    repo.git(repo.root(), &["reset", "-q", "--hard", &before]);
    let j = repo
        .task_root(&["merge", "landing", "--keep", "--no-checks", "--json"])
        .ok()
        .json();
    let mut named: Vec<String> = j["now_conflicting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {}", c["task"].as_str().unwrap(), c["paths"]))
        .collect();
    named.sort();
    // Each task alone against the new tip, as `overlaps` merges it (no index): the same answer.
    let f = repo
        .task_root(&["overlaps", "--committed", "--json"])
        .json();
    let mut oracle: Vec<String> = f["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["conflicts_with_base"].as_array().unwrap().is_empty())
        .map(|t| {
            format!(
                "{} {}",
                t["task"].as_str().unwrap(),
                t["conflicts_with_base"]
            )
        })
        .collect();
    oracle.sort();
    assert_eq!(named, oracle, "{j}");
    let names: Vec<&str> = named.iter().map(|n| n.split(' ').next().unwrap()).collect();
    for sure in [
        "changed-deleted",
        "dir-where-new-file",
        "file-dir",
        "file-where-new-dir",
        "same-line",
    ] {
        assert!(names.contains(&sure), "{sure}: {named:?}");
    }
    for clean in [
        "other-line",
        "neighbour-file",
        "elsewhere",
        "nothing",
        "bg01",
    ] {
        assert!(!names.contains(&clean), "{clean}: {named:?}");
    }
}

#[test]
fn the_forecast_after_a_merge_follows_tasks_that_moved_and_a_lost_index() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    let c = repo.start("c", &[]);
    edit(&repo, &b, "src/db/c.rs", "B");
    edit(&repo, &c, "README", "C");
    edit(&repo, &a, "src/db/c.rs", "A");
    let j = repo
        .task_root(&["merge", "a", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["now_conflicting"][0]["task"], "b", "{j}");
    // `c` then changes what the next landing changes: the index knew it clean, under its old tip.
    edit(&repo, &c, "src/api/a.rs", "C");
    let d = repo.start("d", &[]);
    edit(&repo, &d, "src/api/a.rs", "D");
    std::fs::write(index_file(&repo), "[]").unwrap();
    let j = repo
        .task_root(&["merge", "d", "--no-checks", "--json"])
        .ok()
        .json();
    let named: Vec<&str> = j["now_conflicting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["task"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["b", "c"], "{j}");
    // With --merge (the task's own commits land: merge bases can move) the answer is the same.
    let e = repo.start("e", &[]);
    edit(&repo, &e, "README", "E");
    let j = repo
        .task_root(&["merge", "e", "--merge", "--no-checks", "--json"])
        .ok()
        .json();
    let named: Vec<&str> = j["now_conflicting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["task"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["b", "c"], "{j}");
}

#[test]
fn a_task_whose_contract_cannot_be_read_now_is_still_named() {
    let repo = repo();
    repo.git(repo.root(), &["branch", "dev"]);
    repo.start("on-dev", &["--base", "dev", "--allow", "docs/**"]);
    repo.start("docs", &["--allow", "docs/**"]);
    repo.task_root(&["start", "first", "--allow", "src/**"])
        .ok();
    // `dev` then gets a policy that does not compile: `on-dev`'s effective contract cannot be
    // read, so it "may" meet any contract, whatever its own prefixes say.
    let side = repo.root().join("../dev-side");
    repo.git(
        repo.root(),
        &["worktree", "add", "-q", side.to_str().unwrap(), "dev"],
    );
    repo.write(
        &side,
        ".task-policy.toml",
        "version = 1\nforbidden = [\"[\"]\n",
    );
    commit_all(&repo, &side, "a policy that does not compile");
    let j = repo
        .task_root(&["start", "second", "--allow", "src/**", "--json"])
        .ok()
        .json();
    let mut got = neighbours(&j);
    got.sort();
    assert_eq!(got, ["first \"yes\"", "on-dev \"may\""], "{j}");
    assert_eq!(
        got,
        forecast_neighbours(&repo, "second"),
        "the full computation agrees"
    );
}

/// The forecast after a merge reads a task's branch only when its contract (or the work the
/// index knew of it) reaches what the branch changed, and then exactly: a task allowed under
/// `src/` whose work the index knew clean, and that since changed the line the next landing
/// changes, is named; a task allowed only under `docs/` is not.
#[test]
fn the_forecast_reads_the_tasks_whose_contracts_reach_the_landing() {
    let repo = repo();
    let a = repo.start("a", &["--allow", "src/**"]);
    let docs = repo.start("docs", &["--allow", "docs/**"]);
    edit(&repo, &a, "src/db/c.rs", "A");
    repo.write(&docs, "docs/d.md", "d\n");
    commit_all(&repo, &docs, "docs");
    let first = repo.start("first", &[]);
    edit(&repo, &first, "src/api/b.rs", "F");
    let j = repo
        .task_root(&["merge", "first", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["now_conflicting"], serde_json::json!([]), "{j}");
    let known: Value = serde_json::from_str(
        &std::fs::read_to_string(index_file(&repo).with_file_name("overlaps-work")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        known["work"]["a"]["paths"],
        serde_json::json!(["src/db/c.rs"]),
        "{known}"
    );
    edit(&repo, &a, "src/api/a.rs", "A");
    let second = repo.start("second", &[]);
    edit(&repo, &second, "src/api/a.rs", "S");
    let j = repo
        .task_root(&["merge", "second", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["now_conflicting"][0]["task"], "a", "{j}");
    assert_eq!(j["now_conflicting"].as_array().unwrap().len(), 1, "{j}");
}

/// A record the ledger does not know is no neighbour until the user adopts it
/// (`trust --records --yes`): the adoption goes into the ledger's change log, so the next
/// `start` reads it although its index had followed the log past that record.
#[test]
fn an_adopted_record_is_a_neighbour_from_then_on() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    std::fs::remove_file(repo.root().join(".git/git-task/ledger/records/api")).unwrap();
    // The next start reads every record (no index yet), finds `api`'s unknown and follows the
    // change log from there.
    std::fs::remove_file(index_file(&repo)).unwrap();
    let j = repo
        .task_root(&["start", "n1", "--allow", "src/**", "--json"])
        .ok()
        .json();
    assert_eq!(neighbours(&j), Vec::<String>::new(), "{j}");
    repo.task_root(&["trust", "--records", "--yes", "api"]).ok();
    let j = repo
        .task_root(&["start", "n2", "--allow", "src/**", "--json"])
        .ok()
        .json();
    assert_eq!(neighbours(&j), ["api \"yes\"", "n1 \"yes\""], "{j}");
}
