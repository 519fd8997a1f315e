//! Containers left behind by runs that died without cleaning up (SIGKILL, a second
//! Ctrl-C, an abort). Each container is labelled with the wright process that owns it:
//! its pid, its PID namespace and the machine's boot id. A container is removed only when
//! all three say its owner is gone: the same boot, the same PID namespace (so a wright in
//! another container sharing the daemon is never mistaken for dead), and no such pid.

use std::collections::HashMap;

pub(super) const OWNER_LABEL: &str = "wright.owner";

/// `BOOT_ID/PID_NAMESPACE/PID` of this process.
pub(super) fn owner() -> String {
    format!("{}/{}/{}", boot_id(), pid_namespace(), std::process::id())
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Whether a container with these labels belongs to a wright process that is gone.
pub(super) fn is_orphan(labels: &HashMap<String, String>) -> bool {
    let Some(owner) = labels.get(OWNER_LABEL) else {
        return false;
    };
    let mut parts = owner.splitn(3, '/');
    let (Some(boot), Some(namespace), Some(pid)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let here_boot = boot_id();
    let here_namespace = pid_namespace();
    if boot.is_empty() || boot != here_boot || namespace.is_empty() || namespace != here_namespace {
        return false;
    }
    pid.parse::<u32>()
        .is_ok_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dead_owner_of_this_boot_and_namespace_makes_an_orphan() {
        let mine = HashMap::from([(OWNER_LABEL.to_string(), owner())]);
        assert!(!is_orphan(&mine), "this process is alive");
        let dead = owner()
            .rsplit_once('/')
            .map(|(rest, _)| format!("{rest}/999999999"))
            .unwrap();
        assert!(is_orphan(&HashMap::from([(
            OWNER_LABEL.to_string(),
            dead.clone()
        )])));
        let elsewhere = dead.replacen("pid:", "pid:x", 1);
        assert!(!is_orphan(&HashMap::from([(
            OWNER_LABEL.to_string(),
            elsewhere
        )])));
        assert!(!is_orphan(&HashMap::new()));
    }
}
