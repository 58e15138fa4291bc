//! Unit-test fixture: a throwaway repository made by the real `git`, and tasks started in
//! process, for the tests of the verbs' decisions that live beside each verb.

#![cfg(test)]

use crate::config::Settings;
use crate::contract::spec::ContractSpec;
use crate::git::Repo;
use crate::lifecycle::start::{self, StartError, StartOptions, Started};
use crate::record::Record;
use crate::task::TaskId;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A repository `repo/` with `src/lib.rs`, `docs/a.md` and one commit on `main`, in a
/// temporary directory of its own (which also holds the tasks' worktrees, `repo.tasks/`).
pub struct Fixture {
    _tmp: tempfile::TempDir,
    /// The main worktree.
    pub root: PathBuf,
    home: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let base = tmp.path().canonicalize().expect("a canonical path");
        let root = base.join("repo");
        let home = base.join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let f = Fixture {
            _tmp: tmp,
            root,
            home,
        };
        f.git(&["init", "-q", "-b", "main"]);
        f.write("src/lib.rs", "pub fn lib() {}\n");
        f.write("docs/a.md", "# a\n");
        f.git(&["add", "-A"]);
        f.git(&["commit", "-q", "-m", "initial"]);
        f
    }

    /// Runs `git` in the main worktree; panics when it fails; returns its trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.root, args)
    }

    /// Runs `git` in `dir`.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
    }

    /// Writes `rel` under the main worktree.
    pub fn write(&self, rel: &str, text: &str) {
        write(&self.root, rel, text);
    }

    /// The repository, opened as a command would open it.
    pub fn repo(&self) -> Repo {
        Repo::discover(&self.root).expect("the fixture repository opens")
    }

    /// The settings a command would read.
    pub fn settings(&self) -> Settings {
        Settings::load(&self.repo()).expect("settings load")
    }

    /// Starts task `id` allowed to touch `allow`, in process; returns its record.
    pub fn start(&self, id: &str, allow: &[&str]) -> Record {
        let opts = StartOptions {
            id: Some(TaskId::parse(id).unwrap()),
            contract: ContractSpec {
                allow: allow.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
            ..Default::default()
        };
        match start::start(&self.repo(), &self.settings(), &opts, &mut |_, _, _| {}) {
            Ok(Started::Created(r)) => r,
            Ok(other) => panic!("start {id}: {other:?}"),
            Err(StartError::Other(e)) => panic!("start {id}: {e}"),
            Err(StartError::Setup(_)) => panic!("start {id}: the setup failed"),
        }
    }

    /// Every ref and where it points (`git for-each-ref`): the oracle of "nothing moved".
    pub fn refs(&self) -> String {
        self.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
    }
}

/// Writes `rel` under `dir`, making its directories.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
