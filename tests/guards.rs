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
        matches!(
            rel,
            "app.rs" | "cli.rs" | "main.rs" | "lib.rs" | "harness.rs"
        ) || rel.starts_with("commands/")
            || rel.starts_with("mcp/")
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

/// The `.rs` files below `src/` as (path relative to `src/` with `/` separators, text).
fn src_files() -> Vec<(String, String)> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

/// What breaks the adapter's fences in the file `rel` (relative to `src/`):
/// outside `git/`, any mention of `gix::`; inside `git/`, a `crate::` path other
/// than `crate::error` or `crate::git`, or a `super::` chain that climbs out of `git/`.
fn adapter_fence_offences(rel: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(inside) = rel.strip_prefix("git/") else {
        for (n, line) in text.lines().enumerate() {
            if line.contains("gix::") {
                out.push(format!("src/{rel}:{}: names gix:: outside src/git/", n + 1));
            }
        }
        return out;
    };
    // How many modules below `git` this file is: git/mod.rs is 0, git/x.rs and git/x/mod.rs are 1.
    let depth = inside.split('/').count() - usize::from(inside.ends_with("mod.rs"));
    for (n, line) in text.lines().enumerate() {
        for (pos, _) in line.match_indices("crate::") {
            let preceded = line[..pos]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            let rest = &line[pos + "crate::".len()..];
            let allowed = ["error", "git"].iter().any(|m| {
                rest.strip_prefix(m)
                    .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if !preceded && !allowed {
                out.push(format!(
                    "src/{rel}:{}: git/ uses the core: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
        for (pos, _) in line.match_indices("super::") {
            if line[..pos].ends_with("super::") {
                continue;
            }
            let climbs = line[pos..].matches("super::").count().min(
                line[pos..]
                    .split("super::")
                    .skip(1)
                    .take_while(|s| s.is_empty())
                    .count()
                    + 1,
            );
            if climbs > depth {
                out.push(format!(
                    "src/{rel}:{}: super:: climbs out of git/: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    out
}

/// STYLE B.3: gix stays inside the adapter (`src/git/`), and the adapter is at the bottom:
/// it uses nothing of the crate but the error type.
#[test]
fn gix_stays_in_git_and_git_uses_only_the_error_type() {
    let mut offences = Vec::new();
    for (rel, text) in src_files() {
        offences.extend(adapter_fence_offences(&rel, &text));
    }
    assert!(
        offences.is_empty(),
        "the git adapter's fences are broken (STYLE B.3):\n{}",
        offences.join("\n")
    );
}

/// The fence check itself catches what it is for (a guard that cannot fail is no guard).
#[test]
fn the_adapter_fence_check_catches_planted_violations() {
    let planted = [
        ("task/start.rs", "let id = gix::ObjectId::null(kind);"),
        ("changes/mod.rs", "use gix::bstr::BString;"),
        ("git/worktree.rs", "use crate::checks::kill_group;"),
        (
            "git/status/dirty.rs",
            "let s = crate::task::layout::branch(id);",
        ),
        ("git/mod.rs", "use super::checks;"),
        ("git/refs/note.rs", "use super::super::super::record;"),
    ];
    for (rel, line) in planted {
        assert_eq!(
            adapter_fence_offences(rel, line).len(),
            1,
            "{rel}: {line} is not caught"
        );
    }
    let fine = [
        (
            "git/refs/note.rs",
            "use super::super::objects; use crate::git::{ObjectId, Repo};",
        ),
        ("git/mod.rs", "use crate::error::{Context, Error, Result};"),
        (
            "git/diff/mod.rs",
            "crate::git::pathsafe::is_safe_component(name, false)",
        ),
        ("task/start.rs", "let flag = crate::git::interrupt::flag();"),
    ];
    for (rel, line) in fine {
        assert_eq!(
            adapter_fence_offences(rel, line),
            Vec::<String>::new(),
            "{rel}"
        );
    }
}

/// Lines of the file `rel` (relative to `src/`) outside `output/` and outside test code that
/// build an `error:`, `warning:` or `hint:` line themselves (reading git's or clap's, with
/// `strip_prefix` and the like, is fine).
fn label_offences(rel: &str, text: &str) -> Vec<String> {
    if rel.starts_with("output/") || text.contains("#![cfg(test)]") {
        return Vec::new();
    }
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let reads = [
        "strip_prefix(",
        "trim_start_matches(",
        "starts_with(",
        "contains(",
    ];
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let builds = ["error:", "warning:", "hint:"].iter().any(|label| {
            line.contains(&format!("\"{label}")) || line.contains(&format!("\\n{label}"))
        });
        if builds && !reads.iter().any(|r| line.contains(r)) && !line.trim_start().starts_with("//")
        {
            out.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
        }
    }
    out
}

/// Issue 29: every `error:`, `warning:` and `hint:` line comes from `src/output/`, so they are
/// styled, escaped and placed (stdout or stderr) one way.
#[test]
fn labelled_lines_come_from_output() {
    let mut offences = Vec::new();
    for (rel, text) in src_files() {
        offences.extend(label_offences(&rel, &text));
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
    for planted in [
        r#"out.line(format_args!("{} x", "error:".style(p.error)))?;"#,
        r#"why.push_str(&format!("\nhint: {h}"));"#,
        r#"eprintln!("warning: {w}");"#,
    ] {
        assert_eq!(
            label_offences("commands/x.rs", planted).len(),
            1,
            "{planted}"
        );
    }
    for fine in [
        r#"let m = body.strip_prefix("error: ").unwrap_or(&body);"#,
        r#"let s = "error:".style(p.error);"#,
    ] {
        assert!(label_offences("output/mod.rs", fine).is_empty(), "{fine}");
    }
    assert!(label_offences("app.rs", r#"let m = body.strip_prefix("error: ");"#).is_empty());
}

/// What breaks the rule for running git in the file `rel` (relative to `src/`): outside test
/// code, `git` is spawned only in `git/cli.rs`, and there every spawn sets `LC_ALL=C` (git's
/// messages are parsed; in another language they would not match). Test code (a
/// `#![cfg(test)]` file, or what follows `#[cfg(test)]`) is not looked at.
fn git_spawn_offences(rel: &str, text: &str) -> Vec<String> {
    if text.contains("#![cfg(test)]") {
        return Vec::new();
    }
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = Vec::new();
    let spawns: Vec<usize> = code
        .match_indices("Command::new(\"git\")")
        .map(|(at, _)| at)
        .collect();
    for &at in &spawns {
        let line = code[..at].lines().count().max(1);
        if rel != "git/cli.rs" {
            out.push(format!("src/{rel}:{line}: runs git outside src/git/cli.rs"));
            continue;
        }
        // The builder of this spawn: up to the next function.
        let rest = &code[at..];
        let end = ["\nfn ", "\npub fn ", "\npub(crate) fn "]
            .iter()
            .filter_map(|f| rest[1..].find(f))
            .min();
        let body = &rest[..end.map_or(rest.len(), |e| e + 1)];
        if !body.contains(".env(\"LC_ALL\", \"C\")") {
            out.push(format!("src/{rel}:{line}: runs git without LC_ALL=C"));
        }
    }
    out
}

/// Issue 29: every git command whose output git-task reads runs with `LC_ALL=C`, and all of
/// them are spawned in one place, `src/git/cli.rs`.
#[test]
fn git_runs_only_in_git_cli_and_in_english() {
    let mut offences = Vec::new();
    for (rel, text) in src_files() {
        offences.extend(git_spawn_offences(&rel, &text));
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
    // The check catches what it is for.
    let planted = [
        ("merge/land.rs", "let out = Command::new(\"git\").arg(\"log\").output();"),
        (
            "git/cli.rs",
            "fn f() {\n    Command::new(\"git\").arg(\"status\");\n}\nfn g() {\n    x.env(\"LC_ALL\", \"C\");\n}\n",
        ),
    ];
    for (rel, text) in planted {
        assert_eq!(git_spawn_offences(rel, text).len(), 1, "{rel}: {text}");
    }
    let fine = [
        (
            "git/cli.rs",
            "fn f() {\n    Command::new(\"git\")\n        .env(\"LC_ALL\", \"C\");\n}\n",
        ),
        (
            "merge/lock.rs",
            "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn r() { Command::new(\"git\"); }\n}\n",
        ),
    ];
    for (rel, text) in fine {
        assert_eq!(git_spawn_offences(rel, text), Vec::<String>::new(), "{rel}");
    }
}

/// No code changes the process's environment: `set_var` races with every thread that reads
/// it (`list`'s workers open repositories), and git-task passes what a child needs to the child.
#[test]
fn nothing_changes_the_process_environment() {
    let mut offences = Vec::new();
    for (rel, text) in src_files() {
        for (n, line) in text.lines().enumerate() {
            if line.contains("set_var(") || line.contains("remove_var(") {
                offences.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

/// `install.sh` installs binary and man page under PREFIX, is idempotent, warns about PATH, and uninstalls.
#[test]
fn install_script_installs_is_idempotent_and_uninstalls() {
    let tmp = crate::common::temp_dir();
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

/// On glibc Linux, `install.sh` links git-task statically (`--target <host>` with crt-static:
/// the hooks start it on every commit, and a static PIE skips the dynamic loader); elsewhere,
/// or without the C library's static archive, it builds as usual. Where the linker takes a
/// symbol ordering file (a tiny program links with it), the hook path's functions go first
/// (`link/hook-path.order`). Stand-ins for `cargo`, `cc` and `rustc` on PATH log how they were
/// called and put the binary where cargo would.
#[test]
#[cfg(unix)]
fn install_script_links_statically_on_glibc_linux() {
    use std::os::unix::fs::PermissionsExt;
    struct Case {
        host: &'static str,
        libc_a: bool,
        user_flags: Option<&'static str>,
        linker_orders: bool,
        statically: bool,
    }
    let case = |host, libc_a, user_flags, linker_orders, statically| Case {
        host,
        libc_a,
        user_flags,
        linker_orders,
        statically,
    };
    let cases = [
        case("x86_64-unknown-linux-gnu", true, None, true, true),
        // GNU ld (aarch64's default linker) has no symbol ordering file.
        case("aarch64-unknown-linux-gnu", true, None, false, true),
        case(
            "x86_64-unknown-linux-gnu",
            true,
            Some("-C opt-level=3"),
            true,
            true,
        ),
        case("x86_64-unknown-linux-gnu", true, None, false, true),
        case("x86_64-unknown-linux-gnu", false, None, true, false),
        case("x86_64-unknown-linux-musl", true, None, true, false),
        case("aarch64-apple-darwin", true, None, true, false),
    ];
    let order = root().join("link/hook-path.order");
    assert!(
        std::fs::read_to_string(&order).unwrap().lines().count() > 500,
        "the ordering file lists the hook path's functions"
    );
    let order_flags = format!(
        "-C link-arg=-Wl,--symbol-ordering-file={} -C link-arg=-Wl,--no-warn-symbol-ordering",
        order.display()
    );
    for c in cases {
        let host = c.host;
        let tmp = crate::common::temp_dir();
        let fake = tmp.path().join("fake-bin");
        std::fs::create_dir(&fake).unwrap();
        let log = tmp.path().join("cargo.log");
        let script = |name: &str, body: &str| {
            let path = fake.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        script(
            "cargo",
            r#"if [ "$1" = -vV ]; then printf 'cargo 1.95.0\nhost: %s\n' "$FAKE_HOST"; exit 0; fi
echo "args: $*" >>"$FAKE_LOG"
env | grep '^CARGO_TARGET_.*_RUSTFLAGS=' >>"$FAKE_LOG"
target= prev=
for a; do [ "$prev" = --target ] && target=$a/; prev=$a; done
mkdir -p "$CARGO_TARGET_DIR/${target}release"
cp "$FAKE_BINARY" "$CARGO_TARGET_DIR/${target}release/git-task"
"#,
        );
        script(
            "cc",
            r#"case "$1" in -print-file-name=libc.a) [ -n "$FAKE_LIBC" ] && echo /usr/lib/libc.a || echo libc.a ;; esac
"#,
        );
        // The probe: a link with the ordering file succeeds only where the linker takes it.
        script(
            "rustc",
            r#"echo "rustc: $*" >>"$FAKE_LOG"
[ -n "$FAKE_ORDERS" ]
"#,
        );
        let var = format!(
            "CARGO_TARGET_{}_RUSTFLAGS",
            host.to_uppercase().replace('-', "_")
        );
        let path = format!(
            "{}:{}",
            fake.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("sh");
        cmd.arg(root().join("install.sh"))
            .current_dir(tmp.path())
            .env("PREFIX", tmp.path().join("prefix"))
            .env("PATH", path)
            .env("CARGO_TARGET_DIR", tmp.path().join("target"))
            .env("FAKE_HOST", host)
            .env("FAKE_LOG", &log)
            .env("FAKE_BINARY", env!("CARGO_BIN_EXE_git-task"))
            .env_remove("GIT_TASK_BIN")
            .env_remove("RUSTC")
            .env_remove("RUSTFLAGS")
            .env_remove(&var);
        if c.libc_a {
            cmd.env("FAKE_LIBC", "1");
        }
        if c.linker_orders {
            cmd.env("FAKE_ORDERS", "1");
        }
        if let Some(flags) = c.user_flags {
            cmd.env(&var, flags);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{host}: install.sh failed:\n{text}");
        assert!(tmp.path().join("prefix/bin/git-task").is_file(), "{host}");
        let logged = std::fs::read_to_string(&log).unwrap();
        if c.statically {
            assert!(
                logged.contains(&format!("--release --locked --target {host}")),
                "{host}: {logged}"
            );
            let mut flags = match c.user_flags {
                Some(theirs) => format!("{var}={theirs} -C target-feature=+crt-static"),
                None => format!("{var}=-C target-feature=+crt-static"),
            };
            // The probe links for the target with the same flags and the ordering file.
            assert!(
                logged.lines().any(|l| l.starts_with(&format!(
                    "rustc: --target {host} {} {order_flags}",
                    &flags[var.len() + 1..]
                ))),
                "{host}: {logged}"
            );
            if c.linker_orders {
                flags = format!("{flags} {order_flags}");
            }
            assert!(logged.lines().any(|l| l == flags), "{host}: {logged}");
        } else {
            assert!(
                logged
                    .lines()
                    .any(|l| l == "args: build --release --locked"),
                "{host} (libc.a: {}): {logged}",
                c.libc_a
            );
            assert!(!logged.contains("crt-static"), "{host}: {logged}");
            assert!(!logged.contains("rustc:"), "{host}: {logged}");
        }
    }
}

/// Every test file under `tests/cmd/` and `tests/hooks/` is declared in its `mod.rs`: a file
/// that is not wired in compiles into nothing and its tests never run.
#[test]
fn every_test_file_is_wired_in() {
    let mut unwired = Vec::new();
    // Each directory with the file that declares its modules: `tests/cli.rs` declares the
    // top-level files and directories, each directory's `mod.rs` its files.
    let dirs = [
        ("tests", "cli.rs"),
        ("tests/cmd", "mod.rs"),
        ("tests/hooks", "mod.rs"),
        ("tests/common", "mod.rs"),
        ("tests/slow", "mod.rs"),
    ];
    for (dir, module) in dirs {
        let dir = root().join(dir);
        let module = std::fs::read_to_string(dir.join(module)).unwrap();
        let declared: Vec<&str> = module
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l
                    .strip_prefix("pub(crate) ")
                    .or_else(|| l.strip_prefix("pub "))
                    .unwrap_or(l);
                l.strip_prefix("mod ")?.strip_suffix(';')
            })
            .collect();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let stem = match name.strip_suffix(".rs") {
                Some(stem) if stem != "mod" && stem != "cli" => stem.to_owned(),
                // A directory of test modules (not fixtures or tools).
                None if path.join("mod.rs").is_file() => name.clone(),
                _ => continue,
            };
            if !declared.contains(&stem.as_str()) {
                unwired.push(path.display().to_string());
            }
        }
    }
    assert!(
        unwired.is_empty(),
        "test files not declared in their mod.rs (or tests/cli.rs): {unwired:?}"
    );
}

/// A test that `cargo test` skips (`#[ignore]`) still runs in CI: it lives in `tests/slow/` and
/// says so, and `.ci/run` runs that module's ignored tests. The only others are measurements.
#[test]
fn every_ignored_test_is_a_slow_one_ci_runs() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("tests"), &mut files);
    let slow =
        "#[ignore = \"slow: run by .ci/run (cargo test --locked --test cli slow:: -- --ignored)\"]";
    let mut wrong = Vec::new();
    let mut in_slow = 0;
    for file in files {
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if !line.starts_with("#[ignore") {
                continue;
            }
            let fine = if rel.starts_with("tests/slow/") {
                in_slow += 1;
                line == slow
            } else {
                line.starts_with("#[ignore = \"a measurement, run by hand")
            };
            if !fine {
                wrong.push(format!("{rel}:{}: {line}", n + 1));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "ignored tests CI does not run (move them to tests/slow/, marked {slow}):\n{}",
        wrong.join("\n")
    );
    assert!(in_slow > 0, "tests/slow/ has no slow test");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.contains("cargo test --locked --test cli slow:: -- --ignored"),
        ".ci/run does not run the slow tests"
    );
}
