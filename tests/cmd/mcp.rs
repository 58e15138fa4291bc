//! `git task mcp`: the MCP server, driven by the official clients (the Python SDK and the
//! inspector's CLI) and, for the protocol details, by JSON-RPC lines written here.

use crate::common::task_command;
use crate::common::{bin, TestRepo};
use crate::hooks::tools;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A Python interpreter that can `import mcp` (the official SDK), or a visible skip.
fn python_with_mcp(test: &str) -> Option<PathBuf> {
    let candidates = [tools::venv_bin().join("python"), PathBuf::from("python3")];
    let found = candidates.into_iter().find(|py| {
        std::process::Command::new(py)
            .args(["-c", "from mcp import ClientSession, stdio_client"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        let msg = format!(
            "{test}: the MCP Python SDK (PyPI mcp) is not installed; run tests/tools/install-hook-tools.sh (it installs into {})",
            tools::prefix().display()
        );
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("SKIP: {msg}");
    }
    found
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tools")
        .join(name)
}

/// The official Python SDK runs a whole life cycle over MCP (start → edit → checkpoint →
/// check → merge) and gets the refused merge's report with its repair instruction; git sees
/// the merged work on main and nothing of the refused task.
#[test]
fn python_sdk_drives_a_task_life_cycle_and_a_refused_merge() {
    let Some(python) = python_with_mcp("python_sdk_drives_a_task_life_cycle_and_a_refused_merge")
    else {
        return;
    };
    let repo = TestRepo::new();
    let mut cmd = repo.command(&python, repo.root());
    cmd.arg(script("mcp_client.py")).arg(bin()).arg(repo.root());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Python client failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));

    // Each answer is the command's --json document.
    assert_eq!(seen["start"]["kind"], "start");
    assert_eq!(
        seen["start"]["worktree"],
        repo.task_dir("py").display().to_string()
    );
    assert_eq!(seen["checkpoint"]["number"], 1);
    assert_eq!(seen["check"]["kind"], "contract_ok");
    assert_eq!(seen["merge"]["tasks"][0]["task"], "py");
    // git is the oracle: the work landed on main, the refused task did not.
    let main_lib = repo.git(repo.root(), &["show", "main:src/lib.rs"]);
    assert!(main_lib.contains("pub fn from_mcp() {}"), "{main_lib}");
    assert_eq!(
        seen["merge"]["new_tip"],
        repo.git(repo.root(), &["rev-parse", "main"])
    );
    assert_eq!(repo.git(repo.root(), &["show", "main:README.md"]), "# demo");

    let refused = &seen["refused"];
    assert_eq!(refused["kind"], "contract_violation", "{refused}");
    assert_eq!(refused["task"], "bad");
    assert_eq!(refused["violations"][0]["file"], "README.md");
    assert_eq!(refused["violations"][0]["reason"], "not_allowed");
    let repair = refused["repair"].as_str().unwrap();
    assert!(
        repair.contains("src/**") && repair.contains("restore") && repair.contains("README.md"),
        "{repair}"
    );

    let error = &seen["error"];
    assert_eq!(error["kind"], "error");
    assert_eq!(error["error"], "input");
    assert_eq!(error["exit_code"], 2);
    assert!(!error["hints"].as_array().unwrap().is_empty(), "{error}");
}

/// An agent with only the MCP tools (the official Python SDK, `tests/tools/mcp_agent_loop.py`)
/// gets from each refused merge to a landed task by doing what the refusal says: its `next`
/// tool calls (and, for a conflict, resolving the markers), never the same refusal twice.
/// Uncommitted work partly outside the contract, a committed change outside it, and a conflict
/// with the base each land; git sees the task's work on main and nothing from outside the fence.
#[test]
fn python_sdk_agent_follows_each_refusal_to_a_landed_task() {
    let Some(python) = python_with_mcp("python_sdk_agent_follows_each_refusal_to_a_landed_task")
    else {
        return;
    };
    let repo = TestRepo::new();
    let mut cmd = repo.command(&python, repo.root());
    cmd.arg(script("mcp_agent_loop.py"))
        .arg(bin())
        .arg(repo.root());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the agent got stuck:\n{stderr}");
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let tools = |task: &str| -> Vec<String> {
        seen[task]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let kind = s["kind"].as_str().unwrap_or_default();
                match s["error"].as_bool().unwrap() {
                    true => format!("{}!{kind}", s["tool"].as_str().unwrap()),
                    false => s["tool"].as_str().unwrap().to_owned(),
                }
            })
            .collect()
    };
    // The refusals the agent met and the calls they named.
    let dirty = tools("dirty");
    // One refusal, the three steps it names, landed.
    assert_eq!(
        dirty,
        ["merge!uncommitted_work", "revert", "commit", "merge"],
        "{dirty:?}"
    );
    let fenced = tools("fenced");
    assert_eq!(fenced[0], "merge!contract_violation", "{fenced:?}");
    assert_eq!(fenced[1], "revert", "{fenced:?}");
    assert_eq!(
        seen["fenced"][1]["arguments"],
        json!({"id": "fenced", "paths": ["README.md"]})
    );
    assert_eq!(
        fenced.last().map(String::as_str),
        Some("merge"),
        "{fenced:?}"
    );
    let clash = tools("clash");
    assert_eq!(clash[0], "merge!merge_conflict", "{clash:?}");
    assert_eq!(clash[1], "sync!sync_conflict", "{clash:?}");
    assert_eq!(clash.last().map(String::as_str), Some("merge"), "{clash:?}");

    // git is the oracle: every task's work is on main, nothing from outside the fence is.
    let show = |path: &str| repo.git(repo.root(), &["show", &format!("main:{path}")]);
    assert_eq!(show("src/dirty.rs"), "pub fn dirty() {}");
    assert_eq!(show("src/fenced.rs"), "pub fn fenced() {}");
    let lib = show("src/lib.rs");
    assert!(
        lib.contains("from_the_task") && lib.contains("from_main") && !lib.contains("<<<<<<<"),
        "{lib}"
    );
    assert_eq!(show("README.md"), "# demo");
    for task in ["dirty", "fenced", "clash"] {
        let status = repo.task_root(&["status", "--json", task]).ok().json();
        assert_eq!(status["status"], "merged", "{task}: {status}");
    }
    repo.fsck();
}

/// The official inspector's CLI (`tests/tools/mcp-inspector.sh`, named by the README) lists
/// the tools without a schema warning, starts a task, lists it and reads a tool error.
#[test]
fn inspector_cli_script_passes() {
    let Some(_) = tools::require("mcp-inspector", "inspector_cli_script_passes") else {
        return;
    };
    let repo = TestRepo::new();
    let mut cmd = repo.command("bash", repo.root());
    cmd.arg(script("mcp-inspector.sh")).arg(bin());
    if let Some(dir) = std::env::var_os("HOOK_TOOLS") {
        cmd.env("HOOK_TOOLS", dir);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    for step in [
        "tools/list",
        "tools/call start",
        "tools/call list",
        "tools/call status",
    ] {
        assert!(text.contains(&format!("ok: {step}")), "{text}");
    }
}

/// A session with `git task mcp`: JSON-RPC lines in, answers by id.
pub(super) struct Session {
    pub(super) child: std::process::Child,
    pub(super) lines: std::sync::mpsc::Receiver<String>,
    pub(super) next: u64,
}

impl Session {
    pub(super) fn open(repo: &TestRepo, dir: &Path) -> Session {
        Session::spawn(&mut task_command(repo, dir, &["mcp"]))
    }

    fn spawn(command: &mut std::process::Command) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Session {
            child,
            lines,
            next: 1,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "git-task", "{init}");
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, message: Value) {
        self.send_line(&message.to_string());
    }

    /// Writes one line to the server as it is (a malformed request too).
    pub(super) fn send_line(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Every line the server writes until the answer to request `id`, that answer last (every
    /// stdout line must be JSON-RPC).
    pub(super) fn until(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("no answer to request {id}; seen: {seen:?}"));
            let msg: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("stdout carried a line that is not JSON-RPC ({e}): {line}")
            });
            let done = msg["id"] == id;
            seen.push(msg);
            if done {
                return seen;
            }
        }
    }

    /// Sends a request and waits for its answer (every stdout line must be JSON-RPC).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until(id).pop().unwrap()
    }

    /// Calls a tool; returns (isError, the first content parsed as JSON, the whole result).
    pub(super) fn call(&mut self, tool: &str, args: Value) -> (bool, Value, Value) {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = answer["result"].clone();
        assert!(
            result.is_object(),
            "a protocol error instead of a tool result: {answer}"
        );
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let doc = serde_json::from_str(text).unwrap_or(Value::Null);
        (result["isError"] == true, doc, result)
    }

    pub(super) fn close(mut self) -> i32 {
        drop(self.child.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }

    /// Closes the session; returns its exit code and what the server wrote on its stderr.
    fn close_with_stderr(mut self) -> (i32, String) {
        use std::io::Read;
        drop(self.child.stdin.take());
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr).unwrap();
        }
        (self.child.wait().unwrap().code().unwrap_or(-1), stderr)
    }
}

/// Each tool's answer is byte for byte what the command line prints with `--json`, and many
/// calls are served by one process (started outside any repository: `repo` says where).
#[test]
fn tools_answer_the_cli_json_and_one_server_serves_many_calls() {
    let repo = TestRepo::new();
    let outside = repo.base().join("home");
    let mut s = Session::open(&repo, &outside);
    let root = repo.root().display().to_string();

    let (err, started, result) = s.call(
        "start",
        json!({"id": "t1", "allow": ["src/**"], "repo": root}),
    );
    assert!(!err, "{started}");
    // What the command says on stderr (here: the hooks are not installed) follows the JSON.
    let notes = result["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        notes.starts_with("warning: ") && notes.contains("git task hooks install"),
        "{result}"
    );
    let wt = repo.task_dir("t1");
    assert_eq!(started["worktree"], wt.display().to_string());
    repo.write(&wt, "src/lib.rs", "pub fn changed() {}\n");
    for (tool, args, cli) in [
        ("list", json!({}), vec!["list", "--json"]),
        (
            "status",
            json!({"id": "t1"}),
            vec!["status", "--json", "t1"],
        ),
        (
            "changes",
            json!({"id": "t1"}),
            vec!["changes", "--json", "t1"],
        ),
        ("diff", json!({"id": "t1"}), vec!["diff", "--json", "t1"]),
        ("check", json!({"id": "t1"}), vec!["check", "--json", "t1"]),
        ("overlaps", json!({}), vec!["overlaps", "--json"]),
    ] {
        let mut args = args;
        args["repo"] = json!(root);
        let answer = s.request("tools/call", json!({"name": tool, "arguments": args}));
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        let want = repo.task_root(&cli).ok().stdout;
        assert_eq!(text, want, "{tool}");
        assert_eq!(answer["result"]["isError"], false, "{tool}");
        let structured = &answer["result"]["structuredContent"];
        assert_eq!(
            structured,
            &serde_json::from_str::<Value>(&want).unwrap(),
            "{tool}"
        );
    }
    // `repo` relative to the server's directory, and the task's own worktree as `repo`: its
    // active task is the default id.
    let (err, status, _) = s.call("status", json!({"repo": wt.display().to_string()}));
    assert!(!err, "{status}");
    assert_eq!(status["task"], "t1");
    let (err, _, _) = s.call(
        "checkpoint",
        json!({"id": "t1", "message": "one", "repo": "../repo"}),
    );
    assert!(!err);
    assert_eq!(
        repo.refs("refs/tasks/t1/checkpoints/"),
        vec!["refs/tasks/t1/checkpoints/1".to_owned()]
    );
    assert_eq!(s.close(), 0);
}

/// Errors are tool errors carrying the error's kind, exit code and hints; a negative verdict is
/// a tool error whose content is the report; arguments the tool does not take (a shell command
/// to run among them) are refused before anything runs.
#[test]
fn errors_and_negative_verdicts_are_tool_errors() {
    let repo = TestRepo::new();
    let mut s = Session::open(&repo, repo.root());

    let (err, doc, _) = s.call("status", json!({"id": "nope"}));
    assert!(err);
    assert_eq!(
        (
            doc["kind"].as_str(),
            doc["error"].as_str(),
            doc["exit_code"].as_u64()
        ),
        (Some("error"), Some("input"), Some(2)),
        "{doc}"
    );
    assert!(
        doc["hints"][0].as_str().unwrap().contains("git task list"),
        "{doc}"
    );

    // Not a directory in a repository: the repository error (exit 128).
    let (err, doc, _) = s.call(
        "list",
        json!({"repo": repo.base().join("home").display().to_string()}),
    );
    assert!(err);
    assert_eq!(doc["exit_code"], 128, "{doc}");
    assert_eq!(doc["error"], "repo", "{doc}");

    // A violation: exit 1 on the command line, the report here.
    let wt = repo.start("fenced", &["--allow", "src/**"]);
    repo.write(&wt, "README.md", "outside\n");
    let (err, doc, _) = s.call("check", json!({"id": "fenced"}));
    assert!(err);
    assert_eq!(doc["kind"], "contract_violation", "{doc}");
    assert_eq!(doc["violations"][0]["file"], "README.md");
    let cli = repo.task_root(&["check", "--json", "fenced"]).code(1);
    assert_eq!(doc, cli.json());

    // Arguments no tool takes: a setup or check command, a shell command, an option for an id.
    let before = repo.refs("refs/");
    for (tool, args) in [
        ("start", json!({"id": "x", "setup": "touch pwned"})),
        ("start", json!({"id": "x", "check": ["touch pwned"]})),
        ("merge", json!({"ids": ["fenced"], "no_checks": true})),
        ("start", json!({"id": "--setup=touch pwned"})),
        (
            "exec",
            json!({"id": "fenced", "command": ["touch", "pwned"]}),
        ),
        ("start", json!({"id": 7})),
    ] {
        let (err, doc, _) = s.call(tool, args.clone());
        assert!(err, "{tool} {args}");
        assert_eq!(doc["error"], "input", "{tool} {args}: {doc}");
        assert_eq!(doc["exit_code"], 2, "{tool} {args}: {doc}");
    }
    assert_eq!(repo.refs("refs/"), before);
    assert!(!repo.root().join("pwned").exists());
    assert_eq!(s.close(), 0);
}

/// Every tool has an object input schema with `repo`, single-typed properties, and the
/// annotations its effect calls for: destructive ones `destructiveHint`, read-only ones
/// `readOnlyHint`, the others neither.
#[test]
fn tools_list_has_schemas_and_annotations() {
    let repo = TestRepo::new();
    let mut s = Session::open(&repo, repo.root());
    let answer = s.request("tools/list", json!({}));
    let tools: BTreeMap<String, Value> = answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "changes",
            "check",
            "checkpoint",
            "commit",
            "diff",
            "drop",
            "list",
            "log",
            "merge",
            "overlaps",
            "queue",
            "remove",
            "reset",
            "revert",
            "start",
            "status",
            "sync"
        ]
    );
    for (name, tool) in &tools {
        let a = &tool["annotations"];
        let destructive =
            ["revert", "remove", "merge", "reset", "drop", "queue"].contains(&name.as_str());
        let read_only = [
            "list", "status", "check", "changes", "diff", "log", "overlaps",
        ]
        .contains(&name.as_str());
        assert_eq!(a["destructiveHint"], destructive, "{name}: {a}");
        assert_eq!(a["readOnlyHint"], read_only, "{name}: {a}");
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["properties"]["repo"]["type"], "string", "{name}");
        for (prop, def) in schema["properties"].as_object().unwrap() {
            if let Some(t) = def.get("type") {
                assert!(t.is_string(), "{name}.{prop}: {t}");
            }
            for forbidden in ["setup", "check", "no_checks", "patch_file", "contract"] {
                assert_ne!(prop, forbidden, "{name}");
            }
        }
    }
    assert_eq!(tools["remove"]["inputSchema"]["required"], json!(["id"]));
    assert_eq!(s.close(), 0);
}

/// What a command writes on stderr (warnings, notes, an error's hints) comes back in its tool
/// result, after the JSON, as the man page says; the server's own stderr stays empty, and a
/// refusal's next step is a tool call in the result.
#[test]
fn command_stderr_is_in_the_result_and_not_on_the_servers_stderr() {
    let repo = TestRepo::new();
    let mut s = Session::open(&repo, repo.root());
    // A warning (the hooks are not installed) on a success.
    let (err, _, result) = s.call("start", json!({"id": "w", "allow": ["src/**"]}));
    assert!(!err);
    assert!(
        result["content"][1]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("warning: ")),
        "{result}"
    );
    // A refusal: its hints and its next step, as tool calls, in the result.
    repo.write(&repo.task_dir("w"), "src/lib.rs", "pub fn w() {}\n");
    let (err, doc, _) = s.call("merge", json!({"ids": ["w"]}));
    assert!(err);
    assert_eq!(doc["kind"], "uncommitted_work", "{doc}");
    assert!(!doc["hints"].as_array().unwrap().is_empty(), "{doc}");
    assert_eq!(
        doc["next"][0],
        json!({"tool": "commit", "arguments": {"id": "w"}})
    );
    // An error, with its hints, and the tool that shows the tasks there are.
    let (err, doc, _) = s.call("status", json!({"id": "nope"}));
    assert!(err);
    assert!(!doc["hints"].as_array().unwrap().is_empty(), "{doc}");
    assert_eq!(
        doc["next"],
        json!([{"tool": "list", "arguments": {}}]),
        "{doc}"
    );
    let (code, stderr) = s.close_with_stderr();
    assert_eq!(code, 0);
    assert_eq!(stderr, "", "the server wrote on its own stderr");
}

/// `git task -C DIR mcp` serves DIR by default, like every command's `-C`.
#[test]
fn dash_c_is_the_servers_directory() {
    let repo = TestRepo::new();
    let outside = repo.base().join("home");
    let mut child = task_command(&repo, &outside, &["-C", "../repo", "mcp"]);
    let mut s = Session::spawn(&mut child);
    let (err, doc, _) = s.call("list", json!({}));
    assert!(!err, "{doc}");
    assert_eq!(doc["kind"], "list");
    assert_eq!(s.close(), 0);
}

/// `start`'s `base` names a branch or commit of the served repository only: a commit of another
/// repository, or a name that resolves to nothing, is a bad input (exit 2) and nothing is made.
/// A server started outside any repository serves the first one a call names, and only it.
#[test]
fn start_takes_a_base_of_this_repository_only_and_the_server_serves_one_repository() {
    let repo = TestRepo::new();
    let other = TestRepo::new();
    other.write(other.root(), "only-there.txt", "x\n");
    other.git(other.root(), &["add", "-A"]);
    other.git(other.root(), &["commit", "-q", "-m", "only there"]);
    let foreign = other.git(other.root(), &["rev-parse", "main"]);
    let mut s = Session::open(&repo, repo.root());
    for base in [foreign.as_str(), "no-such-branch"] {
        let (err, doc, _) = s.call("start", json!({"id": "b1", "base": base}));
        assert!(err, "{doc}");
        assert_eq!(doc["exit_code"], 2, "{doc}");
    }
    assert!(repo.refs("refs/tasks/").is_empty());
    let (err, doc, _) = s.call("start", json!({"id": "b1", "base": "main"}));
    assert!(!err, "{doc}");
    assert_eq!(s.close(), 0);

    let mut s = Session::open(&repo, &repo.base().join("home"));
    let (err, doc, _) = s.call("list", json!({"repo": repo.root().display().to_string()}));
    assert!(!err, "{doc}");
    let (err, doc, _) = s.call("list", json!({"repo": other.root().display().to_string()}));
    assert!(err, "{doc}");
    assert_eq!(doc["exit_code"], 2, "{doc}");
    assert_eq!(s.close(), 0);
}

/// The MCP tools take what the command line offers for these ways out: `diff`/`changes` with
/// `stat` and `find_renames` answer what `--stat`/`--find-renames` print, and `start` with
/// `reset` and `discard_commits` lets a looser contract replace a task's own (its commits saved).
#[test]
fn diff_changes_and_start_take_the_flags_of_their_ways_out() {
    let repo = TestRepo::new();
    let wt = repo.start("m", &["--allow", "src/**"]);
    repo.git(&wt, &["mv", "src/lib.rs", "src/renamed.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "rename"]);
    let mut s = Session::open(&repo, repo.root());
    for (tool, args, cli) in [
        (
            "diff",
            json!({"id": "m", "stat": true, "find_renames": "50%"}),
            vec!["diff", "m", "--stat", "--find-renames=50%", "--json"],
        ),
        (
            "changes",
            json!({"id": "m", "stat": true, "find_renames": "50%"}),
            vec!["changes", "m", "--stat", "--find-renames=50%", "--json"],
        ),
    ] {
        let (err, doc, _) = s.call(tool, args);
        assert!(!err, "{doc}");
        assert_eq!(doc, repo.task_root(&cli).ok().json(), "{tool}");
        assert!(doc.to_string().contains("renamed.rs"), "{doc}");
    }
    let diff = repo.task_root(&["diff", "m", "--find-renames"]).ok();
    assert!(diff.stdout.contains("rename from src/lib.rs"), "{diff}");
    // A looser contract over the task's own commit: refused as it is, accepted once the commit
    // goes (saved as an attempt).
    let looser = json!({"id": "m", "reset": true, "allow": ["**"]});
    let (err, refused, _) = s.call("start", looser.clone());
    assert!(err, "{refused}");
    let mut with = looser;
    with["discard_commits"] = json!(true);
    let (err, doc, _) = s.call("start", with);
    assert!(!err, "{doc}");
    assert!(!repo
        .git(repo.root(), &["for-each-ref", "refs/tasks/m/attempts/"])
        .is_empty());
    assert_eq!(s.close(), 0);
}
