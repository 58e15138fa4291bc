//! `git task completions bash|zsh|fish`: the shell completion scripts, and the hidden
//! `git task __complete` they call back.
//!
//! The scripts are thin: they hand the words after `task` to `__complete`, which completes
//! them with clap's own engine (`clap_complete`), so commands, flags and their values always
//! match the CLI; task ids come from the repository's records (read in-process, no `git` run).
//! `git task` is run through git, so the bash script defines `_git_task`, the function git's
//! own bash completion calls for `git task …`; zsh's `_git` calls `_git-task` the same way,
//! and fish's git completion hands `git task …` to the completions of `git-task`.

use crate::commands::Done;
use crate::output::Out;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use std::ffi::OsString;

/// Print a shell completion script (completes commands, flags and task ids)
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells a script is printed for.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// bash (with git's bash completion for `git task`)
    Bash,
    /// zsh (with zsh's git completion for `git task`)
    Zsh,
    /// fish
    Fish,
}

/// Complete a command line (called by the completion scripts)
#[derive(clap::Args, Debug)]
pub struct CompleteArgs {
    /// The position of the word to complete, counting `git task` as 0
    pub index: usize,
    /// The words after `git task`, up to the one to complete (after `--`)
    #[arg(last = true)]
    pub words: Vec<OsString>,
}

const BASH: &str = r#"# bash completion for git-task, from `git task completions bash`.
# `git task <TAB>`: git's own bash completion calls _git_task; `git-task <TAB>` works too.
# Installed as ~/.local/share/bash-completion/completions/git-task, bash-completion loads it
# when needed; without bash-completion, source this file from ~/.bashrc after git's.
_git_task_complete() {
    # $1: the position of the word to complete; the rest: the words after `task`.
    local index=$1 IFS=$'\n'
    shift
    COMPREPLY=($(git-task __complete "$index" -- "$@" 2>/dev/null))
}
_git_task() {
    # Under git's completion: its `words` and `cword`; find `task` among them.
    local -a all=("${words[@]}")
    local current=${cword:-0} i
    if [[ ${#all[@]} -eq 0 ]]; then
        all=("${COMP_WORDS[@]}")
        current=$COMP_CWORD
    fi
    for ((i = 1; i < current; i++)); do
        if [[ ${all[i]} == task ]]; then
            _git_task_complete $((current - i)) "${all[@]:i+1:current-i}"
            return
        fi
    done
}
_git_task_direct() {
    _git_task_complete "$COMP_CWORD" "${COMP_WORDS[@]:1:COMP_CWORD}"
}
complete -o bashdefault -o default -F _git_task_direct git-task
"#;

const ZSH: &str = r#"#compdef git-task
# zsh completion for git-task, from `git task completions zsh`: put it in a directory of
# $fpath as `_git-task`. `git task <TAB>`: zsh's git completion calls _git-task;
# `git-task <TAB>` works too.
_git-task() {
    # words[1] is `task` (under _git) or `git-task`; CURRENT is the word to complete.
    local -a candidates
    candidates=("${(@f)$(git-task __complete $((CURRENT - 1)) -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    candidates=(${candidates:#})
    compadd -a candidates
}
if [[ $funcstack[1] == _git-task ]]; then
    _git-task "$@"
else
    compdef _git-task git-task
fi
"#;

const FISH: &str = r#"# fish completion for git-task, from `git task completions fish`: put it in
# ~/.config/fish/completions/git-task.fish. fish's git completion hands `git task <TAB>` to it.
function __git_task_complete
    set -l words (commandline -opc) (commandline -ct)
    for i in (seq (count $words))
        if contains -- $words[$i] task git-task
            set -l rest $words[(math $i + 1)..-1]
            git-task __complete (count $rest) -- $rest 2>/dev/null
            return
        end
    end
end
complete -c git-task -f -a '(__git_task_complete)'
"#;

/// The completion script for `shell`.
pub fn script(shell: Shell) -> &'static str {
    match shell {
        Shell::Bash => BASH,
        Shell::Zsh => ZSH,
        Shell::Fish => FISH,
    }
}

/// Prints the script.
pub fn run(args: &CompletionsArgs, out: &Out) -> Done {
    match out.raw(script(args.shell)) {
        Ok(()) => Done::Ok,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Done::Ok,
        Err(_) => Done::Negative,
    }
}

/// The ids of the tasks of the repository around the current directory (none outside one).
fn task_ids() -> Vec<CompletionCandidate> {
    let Ok(dir) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(repo) = crate::git::Repo::discover(&dir) else {
        return Vec::new();
    };
    crate::record::all_ids(&repo)
        .unwrap_or_default()
        .into_iter()
        .map(|id| CompletionCandidate::new(id.as_str()))
        .collect()
}

/// The CLI, with task ids as the candidates of every `<id>` argument.
fn with_task_ids(mut cli: clap::Command) -> clap::Command {
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        cli = cli.mut_subcommand(name, |mut sub| {
            // `mut_arg` moves the argument to the end, and positionals take their index from
            // their order: every positional is moved, in order, so the order stays.
            let positionals: Vec<String> = sub
                .get_positionals()
                .map(|a| a.get_id().to_string())
                .collect();
            if positionals.iter().any(|p| p == "id" || p == "ids") {
                for p in positionals {
                    let is_id = p == "id" || p == "ids";
                    sub = sub.mut_arg(p, |a| match is_id {
                        true => a.add(ArgValueCandidates::new(task_ids)),
                        false => a,
                    });
                }
            }
            sub
        });
    }
    cli
}

/// The candidates for word `index` of `words` (the words after `git task`), one a line, from
/// `cli`, the whole command line (the front end's: `__complete` runs before `commands::run`).
pub fn complete(args: &CompleteArgs, out: &Out, cli: clap::Command) -> Done {
    let mut cli = with_task_ids(cli);
    let mut words = vec![OsString::from("git-task")];
    words.extend(args.words.iter().cloned());
    // The word to complete exists, if only empty.
    while words.len() <= args.index {
        words.push(OsString::new());
    }
    let current = words[args.index].to_string_lossy().into_owned();
    let Ok(candidates) = clap_complete::engine::complete(&mut cli, words, args.index, None) else {
        return Done::Negative;
    };
    let mut text = String::new();
    for c in candidates.iter().filter(|c| !c.is_hide_set()) {
        let value = c.get_value().to_string_lossy();
        // What the word begins with (the engine leaves that to the shell for task ids), and
        // flags only once a `-` is typed.
        if value.starts_with(current.as_str())
            && (current.starts_with('-') || !value.starts_with('-'))
        {
            text.push_str(&value);
            text.push('\n');
        }
    }
    match out.raw(&text) {
        Ok(()) => Done::Ok,
        Err(_) => Done::Ok,
    }
}
