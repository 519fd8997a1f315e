//! `wright-no-userns PROGRAM ARGS…`: runs PROGRAM where user namespaces cannot be made, as
//! on distributions that restrict them for unprivileged users (recent Ubuntu): a seccomp
//! filter refuses `unshare` and `clone` with CLONE_NEWUSER (EPERM) and `clone3` (ENOSYS,
//! so callers fall back to `clone`). `.ci/run` runs the suite under it as an unprivileged
//! user, to prove that `--sandbox auto` falls back, says what holds, and stays closed.

use seccompiler::SeccompAction;
use seccompiler::SeccompCmpArgLen;
use seccompiler::SeccompCmpOp;
use seccompiler::SeccompCondition;
use seccompiler::SeccompFilter;
use seccompiler::SeccompRule;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;

#[cfg(target_arch = "x86_64")]
const ARCH: seccompiler::TargetArch = seccompiler::TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: seccompiler::TargetArch = seccompiler::TargetArch::aarch64;

const CLONE_NEWUSER: u64 = 0x1000_0000;

fn refuse(
    errno: u32,
    rules: BTreeMap<i64, Vec<SeccompRule>>,
) -> Result<seccompiler::BpfProgram, String> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        ARCH,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

fn newuser_flag(arg: u8) -> Result<SeccompRule, String> {
    let condition = SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(CLONE_NEWUSER),
        CLONE_NEWUSER,
    )
    .map_err(|e| e.to_string())?;
    SeccompRule::new(vec![condition]).map_err(|e| e.to_string())
}

fn main() -> Result<(), String> {
    let mut args = std::env::args_os().skip(1);
    let program = args.next().ok_or("usage: wright-no-userns PROGRAM ARGS…")?;
    let userns = BTreeMap::from([
        (libc::SYS_unshare, vec![newuser_flag(0)?]),
        (libc::SYS_clone, vec![newuser_flag(0)?]),
    ]);
    let clone3 = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    for program in [
        refuse(libc::EPERM as u32, userns)?,
        refuse(libc::ENOSYS as u32, clone3)?,
    ] {
        seccompiler::apply_filter(&program).map_err(|e| e.to_string())?;
    }
    let error = std::process::Command::new(&program).args(args).exec();
    Err(format!("cannot run {}: {error}", program.to_string_lossy()))
}
