//! The container a conversation's commands run in, as the Engine API's create request:
//! the one place its isolation is decided.
//!
//! Guarantees, for every container wright creates: only the workspace is bind-mounted
//! (read-write, at the same absolute path, so the paths the file editor and the shell use
//! agree), plus any read-only paths the caller names, each as `binds` resolved it, and the
//! directories holding protected ones (pinned, read-write: mount points the agent cannot
//! rename); the image's root filesystem is
//! read-only and /tmp is a private tmpfs; no network but loopback unless the policy allows
//! it; every capability dropped and no-new-privileges (also for `docker exec`, which
//! inherits both); the uid:gid that owns the workspace; memory (no swap on top), process,
//! file-size and open-file limits from the policy; an init process that reaps orphans;
//! the label `wright.conversation=<id>`, so leftovers can be found. When the workspace is
//! the user's own tree, the seccomp profile of `seccomp` (Unix sockets refused) in place of
//! Docker's default.

use super::binds::Binds;
use super::DockerSettings;
use crate::confine::Policy;
use bollard::models::ContainerCreateBody;
use bollard::models::HostConfig;
use bollard::models::Mount;
use bollard::models::MountType;
use bollard::models::ResourcesUlimits;
use std::collections::HashMap;
use std::path::Path;

/// Label naming the conversation a container belongs to.
pub const CONVERSATION_LABEL: &str = "wright.conversation";

/// What the container runs until it is removed: bash (which the terminal needs anyway)
/// blocked reading a stdin that stays open and silent (`open_stdin`).
const KEEP_ALIVE: &[&str] = &["bash", "-c", "read -r _"];

/// How the workspace is in the container.
pub(super) enum Placed<'a> {
    /// Bind-mounted, as `binds` resolved them.
    Bound(&'a Binds),
    /// Copied (see `copy`): an empty volume at each of these directories, which the
    /// copies go into.
    Volumes(&'a [std::path::PathBuf]),
}

pub(super) fn container_body(
    settings: &DockerSettings,
    placed: Placed<'_>,
    policy: &Policy,
    user: &str,
) -> ContainerCreateBody {
    let workspace = settings.workspace.display().to_string();
    let mounts = match placed {
        Placed::Bound(binds) => bind_mounts(settings, binds, policy),
        // Anonymous: removed with the container (`remove` asks for its volumes too).
        Placed::Volumes(dirs) => dirs
            .iter()
            .map(|dir| Mount {
                target: Some(dir.display().to_string()),
                typ: Some(MountType::VOLUME),
                ..Default::default()
            })
            .collect(),
    };
    container_body_rest(settings, mounts, policy, user, workspace)
}

/// Whether a mount is at `/tmp` (then it is the container's /tmp, not a tmpfs).
fn mounted_at_tmp(mounts: &[Mount]) -> bool {
    mounts
        .iter()
        .any(|mount| mount.target.as_deref() == Some("/tmp"))
}

fn bind_mounts(settings: &DockerSettings, binds: &Binds, policy: &Policy) -> Vec<Mount> {
    let mut mounts: Vec<_> = binds
        .all()
        .iter()
        .map(|b| bind(b.path(), b.read_only))
        .collect();
    // Pinned (see `crate::protection_pins`): mount points the agent cannot rename.
    mounts.extend(
        crate::protection_pins(&policy.protected, std::slice::from_ref(&settings.workspace))
            .iter()
            .filter(|path| {
                // Never through a link in any component: Docker would follow it.
                crate::pinned::pin(path).is_ok()
                    && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
            })
            .map(|path| bind(path, false)),
    );
    mounts
}

fn container_body_rest(
    settings: &DockerSettings,
    mounts: Vec<Mount>,
    policy: &Policy,
    user: &str,
    workspace: String,
) -> ContainerCreateBody {
    // With the workspace at /tmp itself (or a copied workspace's volume there), that is
    // the container's /tmp.
    let tmpfs = (settings.workspace != Path::new("/tmp") && !mounted_at_tmp(&mounts)).then(|| {
        HashMap::from([(
            "/tmp".to_string(),
            "rw,nosuid,nodev,exec,mode=1777".to_string(),
        )])
    });
    let memory = i64::try_from(policy.max_memory_bytes)
        .ok()
        .filter(|bytes| *bytes > 0);
    let labels = HashMap::from([
        (
            CONVERSATION_LABEL.to_string(),
            settings.conversation.clone(),
        ),
        ("wright.workspace".to_string(), workspace.clone()),
        (
            super::orphans::OWNER_LABEL.to_string(),
            super::orphans::owner(),
        ),
    ]);
    let mut security_opt = vec!["no-new-privileges".to_string()];
    if policy.users_tree {
        security_opt.push(super::seccomp::security_opt());
    }
    ContainerCreateBody {
        image: Some(settings.image.clone()),
        user: Some(user.to_string()),
        working_dir: Some(workspace),
        env: Some(
            settings
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
        ),
        entrypoint: Some(KEEP_ALIVE.iter().map(|s| s.to_string()).collect()),
        open_stdin: Some(true),
        labels: Some(labels),
        host_config: Some(HostConfig {
            mounts: Some(mounts),
            tmpfs,
            network_mode: Some(if policy.network { "bridge" } else { "none" }.into()),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(security_opt),
            readonly_rootfs: Some(true),
            init: Some(true),
            memory,
            // Equal to the memory limit: no swap on top of it.
            memory_swap: memory,
            pids_limit: i64::try_from(policy.max_processes).ok(),
            ulimits: Some(vec![
                ulimit("fsize", policy.max_file_bytes),
                ulimit("nofile", policy.max_open_files),
                ulimit("core", 0),
            ]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn bind(path: &Path, read_only: bool) -> Mount {
    let path = path.display().to_string();
    Mount {
        target: Some(path.clone()),
        source: Some(path),
        typ: Some(MountType::BIND),
        read_only: Some(read_only),
        ..Default::default()
    }
}

fn ulimit(name: &str, value: u64) -> ResourcesUlimits {
    let value = i64::try_from(value).unwrap_or(i64::MAX);
    ResourcesUlimits {
        name: Some(name.into()),
        soft: Some(value),
        hard: Some(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn isolation_is_all_there() {
        let base = tempfile::tempdir().unwrap();
        let repo = base.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let settings = DockerSettings {
            image: "img".into(),
            conversation: "c1".into(),
            workspace: repo.clone(),
            read_only: vec![PathBuf::from("/nonexistent/objects")],
            needs_git: true,
            env: vec![("TERM".into(), "dumb".into())],
            host: None,
            workspace_mode: None,
        };
        let private = crate::PrivateDir::create(base.path(), "c1").unwrap();
        let mut policy = Policy::for_workspace(&repo, &private, None);
        policy.max_memory_bytes = 1 << 30;
        let binds = Binds::resolve(&repo, &repo, &settings.read_only, &[]).unwrap();
        let body = container_body(&settings, Placed::Bound(&binds), &policy, "1000:1000");
        let host = body.host_config.unwrap();
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
        assert_eq!(
            host.security_opt,
            Some(vec!["no-new-privileges".to_string()])
        );
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.memory, Some(1 << 30));
        assert_eq!(host.pids_limit, Some(512));
        assert!(host.tmpfs.unwrap().contains_key("/tmp"));
        let mounts = host.mounts.unwrap();
        assert_eq!(mounts.len(), 1, "a missing read-only path is not mounted");
        assert_eq!(mounts[0].source, mounts[0].target);
        assert_eq!(body.user.as_deref(), Some("1000:1000"));
        assert_eq!(
            body.working_dir.as_deref(),
            Some(repo.display().to_string().as_str())
        );
        assert_eq!(body.env, Some(vec!["TERM=dumb".to_string()]));
        assert_eq!(body.labels.unwrap()[CONVERSATION_LABEL], "c1");

        // The user's own tree: Unix sockets refused by the container's seccomp profile.
        policy.users_tree = true;
        let body = container_body(&settings, Placed::Bound(&binds), &policy, "1000:1000");
        let options = body.host_config.unwrap().security_opt.unwrap();
        assert_eq!(options[0], "no-new-privileges");
        assert_eq!(options[1], super::super::seccomp::security_opt());
    }
}
