//! `git task mcp`: a Model Context Protocol server on stdio, built on the official Rust SDK
//! (`rmcp`). Edge glue, like `app`: each tool call becomes one `Command` ([`tools`]), run in
//! this process with its output captured ([`call`]); the result is exactly the JSON the
//! command line gives with `--json`.
//!
//! - A negative verdict (exit 1: violation, conflict, failed check, nothing eligible) is a tool
//!   error (`isError`) whose content is the report, with `hints` and `next`: the way out as
//!   tool calls of this server (`revert` with `paths`, then `commit`, then `merge`).
//! - An error is a tool error whose content is `{"kind":"error","error":<kind>,"exit_code",
//!   "message","hints"}` ([`call::Failure`]).
//! - Calls run one at a time (a current-thread runtime, and a lock): a command may change the
//!   process's directory.
//! - **One repository.** The tools act only on the repository the server was started in (or,
//!   started outside any, the first one a call names): a `repo` naming a directory of another
//!   repository is refused (exit 2), so is a `start` whose `path` lies outside the tasks
//!   directory (`task.worktreeDir`, default `../<repo>.tasks`) or whose `base` is no commit of
//!   that repository. Nothing runs before these checks pass.
//! - Requests are lines of at most 4 MiB; a line that is no JSON-RPC message gets a JSON-RPC
//!   error ([`transport`]).

pub mod call;
pub mod tools;
pub mod transport;

use crate::error::Error;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Serves MCP on stdin/stdout until the client closes stdin.
pub fn serve() -> crate::Result<()> {
    let home = std::env::current_dir()
        .map_err(|e| Error::repo("could not read the current directory", e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::repo("could not start the MCP server", e))?;
    runtime.block_on(async {
        let server = Server::new(home);
        let stdio = transport::Guarded::new(
            tokio::io::BufReader::new(tokio::io::stdin()),
            tokio::io::stdout(),
        );
        let running = server
            .serve(stdio)
            .await
            .map_err(|e| Error::repo("the MCP client did not initialize the session", e))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::repo("the MCP server stopped unexpectedly", e))?;
        Ok(())
    })
}

/// The server: the tools, and the directory calls run in by default.
struct Server {
    home: PathBuf,
    /// The common git dir (resolved) of the one repository the server serves: the one it was
    /// started in, else the first one a call named.
    served: Mutex<Option<PathBuf>>,
    tools: Vec<tools::ToolDef>,
    listed: Vec<Tool>,
    one_at_a_time: Mutex<()>,
}

impl Server {
    fn new(home: PathBuf) -> Self {
        let tools = tools::all();
        let listed = tools.iter().map(describe).collect();
        let served = crate::git::Repo::discover(&home)
            .ok()
            .map(|r| crate::git::fs::canonical(r.common_dir()));
        Server {
            home,
            served: Mutex::new(served),
            tools,
            listed,
            one_at_a_time: Mutex::new(()),
        }
    }

    /// Refuses a call that would act outside the served repository (see the module docs):
    /// `dir` in another repository, a `start` whose `path` lies outside the tasks directory
    /// or whose `base` is no commit here.
    fn confine(
        &self,
        name: &str,
        dir: &std::path::Path,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), Error> {
        let repo = crate::git::Repo::discover(dir)?;
        let common = crate::git::fs::canonical(repo.common_dir());
        {
            let mut served = self
                .served
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match &*served {
                Some(s) if *s != common => {
                    return Err(Error::input(format!(
                        "'{}' is in another repository than the one this server serves ('{}')",
                        dir.display(),
                        s.display()
                    ))
                    .hint("MCP tools act only on the repository the server was started in; start 'git task mcp' in that other repository to work there"));
                }
                Some(_) => {}
                None => *served = Some(common),
            }
        }
        // A revision to start from (`start`'s base, `reset`'s onto): a commit of this repository.
        for key in ["base", "onto"] {
            if let Some(serde_json::Value::String(rev)) = args.get(key) {
                repo.rev_parse_commit(rev).map_err(|_| {
                    Error::input(format!(
                        "'{key}' must name a branch or commit of this repository, not '{rev}'"
                    ))
                    .hint("name a branch ('git branch' lists them) or a commit id")
                })?;
            }
        }
        if name != "start" {
            return Ok(());
        }
        if let Some(serde_json::Value::String(path)) = args.get("path") {
            let settings = crate::config::Settings::load(&repo)?;
            let place = crate::git::normalize(&dir.join(path));
            if !in_tasks_dir(&settings.worktree_dir, &place) {
                return Err(Error::input(format!(
                    "'path' must lie inside the tasks directory '{}', not '{}'",
                    settings.worktree_dir.display(),
                    place.display()
                ))
                .hint("leave 'path' out: the worktree goes to <tasks directory>/<id>"));
            }
        }
        Ok(())
    }

    /// Runs one tool call to its result (a command that fails is a tool error, never a protocol one).
    fn call(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> CallToolResult {
        let Some(tool) = self.tools.iter().find(|t| t.name == name) else {
            return failure(
                &Error::input(format!("unknown tool '{name}'")).hint(format!(
                    "the tools are: {}",
                    self.tools
                        .iter()
                        .map(|t| t.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        };
        let mut args = args.unwrap_or_default();
        let dir = match args.remove("repo") {
            None | Some(serde_json::Value::Null) => self.home.clone(),
            Some(serde_json::Value::String(dir)) => {
                crate::git::normalize(&self.home.join(crate::git::fs::expand_home(&dir)))
            }
            Some(other) => {
                return failure(&Error::input(format!(
                    "bad arguments for '{name}': 'repo' must be a string, not {other}"
                )))
            }
        };
        if let Err(err) = self.confine(name, &dir, &args) {
            return failure(&err);
        }
        let command = match tool.command(args) {
            Ok(command) => command,
            Err(err) => return failure(&err),
        };
        let _turn = self
            .one_at_a_time
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let outcome = call::run_in(&dir, &command);
        result(outcome)
    }
}

/// Whether `path` lies strictly inside the tasks directory `tasks`, symbolic links in the part
/// of either that exists followed (a link inside the tasks directory that leads out is outside).
pub fn in_tasks_dir(tasks: &std::path::Path, path: &std::path::Path) -> bool {
    let (tasks, path) = (resolved(tasks), resolved(path));
    path != tasks && path.starts_with(&tasks)
}

/// `path` made absolute and normalized, with its longest existing ancestor resolved.
fn resolved(path: &std::path::Path) -> PathBuf {
    let path = crate::git::fs::absolute(path);
    let mut rest = Vec::new();
    let mut head = path.as_path();
    loop {
        if let Ok(real) = head.canonicalize() {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                head = parent;
            }
            _ => return path,
        }
    }
}

/// The `tools/list` entry of a tool.
fn describe(def: &tools::ToolDef) -> Tool {
    let annotations = ToolAnnotations::with_title(def.title)
        .read_only(def.effect == tools::Effect::ReadOnly)
        .destructive(def.effect == tools::Effect::Destructive)
        .idempotent(def.idempotent)
        .open_world(false);
    Tool::new(def.name, def.description, Arc::new(def.schema()))
        .with_title(def.title)
        .with_annotations(annotations)
}

/// The tool result of a command run: its JSON, an error when it did not answer yes.
fn result(outcome: call::Outcome) -> CallToolResult {
    if let Some(failure) = &outcome.error {
        let mut result = error_result(failure);
        if let Some(notes) = notes(&outcome.stderr, true) {
            result.content.push(ContentBlock::text(notes));
        }
        return result;
    }
    let mut content = vec![ContentBlock::text(outcome.stdout.clone())];
    if let Some(notes) = notes(&outcome.stderr, false) {
        content.push(ContentBlock::text(notes));
    }
    let mut result = if outcome.code == 0 {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    // A JSON object is also the structured result (an MCP structured result is an object).
    if let Ok(value @ serde_json::Value::Object(_)) = serde_json::from_str(&outcome.stdout) {
        result.structured_content = Some(value);
    }
    result
}

/// What the command wrote on stderr besides the error already reported, if anything.
fn notes(stderr: &str, failed: bool) -> Option<String> {
    let text: String = stderr
        .lines()
        .filter(|l| !(failed && (l.starts_with("error: ") || l.starts_with("hint: "))))
        .map(|l| format!("{l}\n"))
        .collect();
    (!text.trim().is_empty()).then_some(text)
}

fn error_result(failure: &call::Failure) -> CallToolResult {
    let text = serde_json::to_string(failure).unwrap_or_default();
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = serde_json::to_value(failure).ok();
    result
}

fn failure(err: &Error) -> CallToolResult {
    error_result(&call::Failure::of(err))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("git-task", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "git-task: isolated, contract-fenced tasks. Start a task, work in its worktree, checkpoint, check, then merge through the gate. Each tool returns the JSON of the git-task command of the same name; a refused merge or a violation is a tool error whose content is the report and its repair instruction. Every refusal names its way out: 'hints' in words, and 'next', the tool calls to make in order ({\"tool\", \"arguments\"}: e.g. revert with paths, then commit, then merge); a step only an edit can take (resolving conflict markers, fixing a failed check) comes before them.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(self.call(&request.name, request.arguments).into())
    }
}
