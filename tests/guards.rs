//! Guards that keep the project honest: the man page matches the CLI and renders
//! cleanly, the layers stay apart (STYLE B.3), and `install.sh` behaves.

use clap::CommandFactory;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The man page with roff's `\-` turned back into `-`.
fn man_text() -> String {
    std::fs::read_to_string(root().join("man/git-task.1"))
        .expect("man/git-task.1 exists")
        .replace("\\-", "-")
}

/// Every visible subcommand and every long flag is documented in `man/git-task.1`.
#[test]
fn man_page_documents_every_command_and_long_flag() {
    let man = man_text();
    let mut missing = Vec::new();
    let cli = git_task::cli::Cli::command();
    for arg in cli.get_arguments() {
        if let Some(long) = arg.get_long().filter(|_| !arg.is_hide_set()) {
            if !man.contains(&format!("--{long}")) {
                missing.push(format!("global flag --{long}"));
            }
        }
    }
    fn walk(cmd: &clap::Command, path: &str, man: &str, missing: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let name = format!("{path} {}", sub.get_name());
            let documented = if path == "git task" {
                man.contains(&format!(".SS \"{name}")) || man.contains(&format!(".SS {name}"))
            } else {
                man.contains(&name)
            };
            if !documented {
                missing.push(format!("command '{name}'"));
            }
            for arg in sub
                .get_arguments()
                .filter(|a| !a.is_hide_set() && !a.is_global_set())
            {
                if let Some(long) = arg.get_long() {
                    if !man.contains(&format!("--{long}")) {
                        missing.push(format!("'{name} --{long}'"));
                    }
                }
            }
            walk(sub, &name, man, missing);
        }
    }
    walk(&cli, "git task", &man, &mut missing);
    assert!(
        missing.is_empty(),
        "man/git-task.1 does not document: {}",
        missing.join(", ")
    );
}

/// The man page has the sections STYLE B.10 and the issue ask for.
#[test]
fn man_page_has_its_sections() {
    let man = man_text();
    for section in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "COMMANDS",
        "OPTIONS",
        "\"CONTRACT FILE\"",
        "STORAGE",
        "HOOKS",
        "\"JSON OUTPUT\"",
        "\"EXIT STATUS\"",
        "ENVIRONMENT",
        "CONFIGURATION",
        "EXAMPLES",
        "\"SEE ALSO\"",
    ] {
        let bare = section.trim_matches('"');
        assert!(
            man.contains(&format!("\n.SH {section}\n")) || man.contains(&format!("\n.SH {bare}\n")),
            "missing section {bare}"
        );
    }
    for key in [
        "task.branchPrefix",
        "task.worktreeDir",
        "task.setup",
        "task.keepOnMerge",
        "task.onViolation",
        "task.autoCommitExclude",
        "task.sparseAlways",
    ] {
        assert!(man.contains(key), "CONFIGURATION misses {key}");
    }
    for r in [
        "refs/tasks/",
        "/record",
        "/base",
        "/snapshot",
        "/checkpoints/",
        "/attempts/",
        "refs/notes/tasks",
    ] {
        assert!(man.contains(r), "STORAGE misses {r}");
    }
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Renders the page with warnings on, where groff (or man-db) is installed.
#[test]
fn man_page_renders_without_warnings() {
    let page = root().join("man/git-task.1");
    if !have("groff") {
        eprintln!("groff is not installed; skipping the rendering check");
        return;
    }
    for width in ["65n", "78n", "120n"] {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z", &format!("-rLL={width}")])
            .arg(&page)
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.trim().is_empty(),
            "groff at {width}:\n{stderr}"
        );
    }
    let man_db = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("man"));
    if man_db {
        for width in ["80", "120"] {
            let out = Command::new("man")
                .args(["--warnings", "-l"])
                .arg(&page)
                .env("MANWIDTH", width)
                .env("LC_ALL", "C")
                .env("MANPAGER", "cat")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.trim().is_empty(),
                "man --warnings at width {width}:\n{stderr}"
            );
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// STYLE B.3: core modules never print or reach up into `output`/`cli`.
#[test]
fn core_modules_do_not_print_or_use_the_edge() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let edge = |rel: &str| {
        matches!(rel, "app.rs" | "cli.rs" | "main.rs" | "lib.rs")
            || rel.starts_with("commands/")
            || rel.starts_with("output/")
    };
    let mut offences = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if edge(&rel) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for bad in [
                "println!",
                "eprintln!",
                "print!",
                "eprint!",
                "crate::output",
                "crate::cli",
                "std::process::exit",
            ] {
                if line.contains(bad) {
                    offences.push(format!("src/{rel}:{}: {bad}", n + 1));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "core modules must return data, not print (STYLE B.3):\n{}",
        offences.join("\n")
    );
}

/// STYLE B.3: a command's glue never uses another command's module.
#[test]
fn commands_do_not_use_each_other() {
    let dir = root().join("src/commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let modules: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|s| s != "mod")
        .collect();
    let mut offences = Vec::new();
    for file in &files {
        let me = file.file_stem().unwrap().to_string_lossy().into_owned();
        if me == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for prefix in ["commands::", "super::"] {
            for (pos, _) in text.match_indices(prefix) {
                let rest = &text[pos + prefix.len()..];
                let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                    group
                        .split('}')
                        .next()
                        .unwrap_or("")
                        .split(',')
                        .map(|s| s.trim().split("::").next().unwrap_or(""))
                        .collect()
                } else {
                    vec![rest
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or("")]
                };
                for name in names {
                    if name != me && modules.iter().any(|m| m == name) {
                        offences.push(format!("src/commands/{me}.rs uses commands::{name}"));
                    }
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "commands must not use each other (STYLE B.3):\n{}",
        offences.join("\n")
    );
}

/// `install.sh` installs binary and man page under PREFIX, is idempotent, warns about PATH, and uninstalls.
#[test]
fn install_script_installs_is_idempotent_and_uninstalls() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    let run = |args: &[&str]| {
        let out = Command::new("sh")
            .arg(root().join("install.sh"))
            .args(args)
            .current_dir(tmp.path())
            .env("PREFIX", &prefix)
            // Skip the release build: install the binary this test run built.
            .env("GIT_TASK_BIN", env!("CARGO_BIN_EXE_git-task"))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "install.sh {args:?} failed:\n{text}");
        text
    };
    let bin = prefix.join("bin/git-task");
    let page = prefix.join("share/man/man1/git-task.1");
    let first = run(&[]);
    assert!(bin.is_file() && page.is_file(), "{first}");
    assert!(
        first.contains("PATH"),
        "warns that PREFIX/bin is not on PATH:\n{first}"
    );
    assert_eq!(
        std::fs::read(&page).unwrap(),
        std::fs::read(root().join("man/git-task.1")).unwrap()
    );
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("git-task "));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&bin).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            std::fs::metadata(&page).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }
    run(&[]);
    assert!(bin.is_file() && page.is_file(), "a second run is fine");
    run(&["--uninstall"]);
    assert!(!bin.exists() && !page.exists());
    run(&["--uninstall"]);
    let entries: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        entries,
        vec![std::ffi::OsString::from("prefix")],
        "nothing else is written"
    );
}
