//! The kernel side of the fence (Linux): Landlock for writes, one seccomp filter for
//! terminal input injection.

use super::{Enforced, Fence, Grant, Level, Support};
use crate::error::{Error, Result};
use landlock::{
    AccessFs, BitFlags, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd, RestrictSelf,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, ABI,
};

/// The write rights the fence takes away everywhere but where a [`Grant`] gives them back:
/// every Landlock write right up to ABI 3 (Linux 6.2): write, create, remove, make any kind
/// of node, `Refer` (ABI 2: link or rename across directories) and `Truncate` (ABI 3).
///
/// Not handled, so not restricted: reads and execution; `IoctlDev` (ABI 5: terminals need
/// device ioctls, and they write no file); `ResolveUnix` (ABI 9: the network, which the
/// fence does not touch); the ABI 6 scopes. ABI 4 (TCP) and 7+ (logging, thread sync) add
/// no file system right, so any kernel of ABI ≥ 3 enforces the whole set.
fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_write(ABI::V3)
}

fn access(grant: Grant) -> BitFlags<AccessFs> {
    match grant {
        Grant::Tree => handled(),
        // `<ref>.lock` is created (MakeReg), written, and renamed over `<ref>` (RemoveFile).
        Grant::RefDir => AccessFs::MakeReg | AccessFs::WriteFile | AccessFs::RemoveFile,
        Grant::File => AccessFs::WriteFile | AccessFs::Truncate,
        Grant::Append | Grant::Device => AccessFs::WriteFile.into(),
    }
}

/// Probes the running kernel: one `landlock_create_ruleset` version query, no restriction.
pub fn support() -> Support {
    let probe = RestrictSelf::default().no_new_privs(false).apply();
    match probe.map(|s| s.landlock) {
        Ok(LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        }) => {
            let abi = kernel_abi
                .map(|v| v as u32)
                .unwrap_or_else(|| effective_abi.to_string().parse().unwrap_or(0));
            if effective_abi >= ABI::V3 {
                Support::full(abi)
            } else {
                Support::partial(
                    abi,
                    "truncating files is not restricted and, before ABI 2, no file can be renamed across directories (needs Landlock ABI 3, Linux 6.2)",
                )
            }
        }
        Ok(LandlockStatus::NotEnabled) => Support::none(
            "the kernel has Landlock but it is not enabled (add 'landlock' to the lsm= boot parameter)",
        ),
        Ok(LandlockStatus::NotImplemented) => Support::none(
            "the kernel is built without Landlock (it needs Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)",
        ),
        Err(e) => Support::none(&format!("could not query Landlock: {e}")),
    }
}

/// Restricts the calling thread, and every process it becomes or starts, to `fence`; sets
/// `no_new_privs`. Only this thread: call it on the thread that then execs the command.
pub fn apply(fence: &Fence, level: Level) -> Result<Enforced> {
    let compat = match level {
        Level::Required => CompatLevel::HardRequirement,
        Level::BestEffort => CompatLevel::BestEffort,
    };
    let ll = |e: landlock::RulesetError| Error::input(format!("cannot confine: {e}"));
    let mut ruleset = Ruleset::default()
        .set_compatibility(compat)
        .handle_access(handled())
        .map_err(ll)?
        .create()
        .map_err(ll)?;
    for rule in &fence.rules {
        let fd = match PathFd::new(&rule.path) {
            Ok(fd) => fd,
            Err(e) => {
                return Err(Error::input(format!(
                    "cannot confine: '{}' cannot be opened: {e}",
                    rule.path.display()
                )))
            }
        };
        let mut rights = access(rule.grant);
        if !std::fs::metadata(&rule.path).is_ok_and(|m| m.is_dir()) {
            // A rule on a file may only carry file rights.
            rights &= AccessFs::from_file(ABI::V3);
        }
        ruleset = ruleset.add_rule(PathBeneath::new(fd, rights)).map_err(ll)?;
    }
    let status = ruleset.restrict_self().map_err(ll)?;
    let mut injection_blocked = true;
    if let Err(why) = deny_terminal_injection() {
        if level == Level::Required && tiocsti_possible() {
            return Err(Error::input(format!("cannot confine: {why}")));
        }
        injection_blocked = !tiocsti_possible();
    }
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced if injection_blocked => Enforced::Fully,
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Enforced::Partially,
        RulesetStatus::NotEnforced => Enforced::Not,
    })
}

/// Refuses, with EPERM, the two ioctls that push input into a terminal: `TIOCSTI` (the
/// shell that started git-task would read and run the typed characters once the session
/// ends, outside the fence) and `TIOCLINUX` (the same through a virtual console's
/// selection). Landlock cannot stop them: the terminal was opened before the fence. A
/// seccomp filter on this thread, inherited like the Landlock domain; every other system
/// call passes. Only the low 32 bits of the request are compared, as the kernel does.
fn deny_terminal_injection() -> std::result::Result<(), String> {
    use seccompiler::{
        apply_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
        SeccompFilter, SeccompRule, TargetArch,
    };
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let request = |value: u64| -> std::result::Result<SeccompRule, String> {
        let cond = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .map_err(|e| e.to_string())?;
        SeccompRule::new(vec![cond]).map_err(|e| e.to_string())
    };
    // The request constants are `c_ulong` on glibc, `c_int` on musl.
    #[allow(clippy::unnecessary_cast)]
    let rules = vec![
        request(libc::TIOCSTI as u64)?,
        request(libc::TIOCLINUX as u64)?,
    ];
    let mut map = std::collections::BTreeMap::new();
    map.insert(libc::SYS_ioctl, rules.clone());
    if std::env::consts::ARCH == "x86_64" {
        // __X32_SYSCALL_BIT | 514: the x32 ABI's ioctl.
        map.insert(0x4000_0000 + 514, rules);
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    apply_filter(&program).map_err(|e| format!("could not block TIOCSTI: {e}"))
}

/// Whether a process could inject terminal input if not filtered: `dev.tty.legacy_tiocsti`
/// is 1 (or unknown), or it runs as root.
fn tiocsti_possible() -> bool {
    let legacy = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map_or(true, |v| v.trim() != "0");
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false);
    legacy || root
}
