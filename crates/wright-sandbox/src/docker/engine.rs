//! The container's lifecycle through the Docker Engine API (bollard): reach the engine
//! (see `host`), check the image is here, create and start the container, copy archives
//! in and out of it (see `copy`), remove it. Every failure is
//! one sentence that says how to fix it, wrapped as `SandboxError::Refused`.
//!
//! Callers are synchronous (sandbox setup, `Drop`) and may run inside wright's async
//! runtime, where blocking on a future is not allowed; so each operation runs on a thread
//! of its own with a runtime and a client of its own, and the caller waits for it.

use super::host::DockerHost;
use crate::mode::SandboxError;
use bollard::errors::Error as DockerError;
use bollard::models::ContainerCreateBody;
use bollard::query_parameters::CreateContainerOptionsBuilder;
use bollard::query_parameters::DownloadFromContainerOptionsBuilder;
use bollard::query_parameters::ListContainersOptionsBuilder;
use bollard::query_parameters::RemoveContainerOptionsBuilder;
use bollard::query_parameters::UploadToContainerOptionsBuilder;
use bollard::Docker;
use std::future::Future;
use std::io::Read;
use std::io::Write;

/// Bytes of an archive sent to the engine at a time.
const UPLOAD_CHUNK: usize = 1 << 20;

/// Seconds a request to the daemon may take (creating a container can be slow on a busy
/// machine; a stuck daemon must not hang wright forever).
const REQUEST_TIMEOUT_SECS: u64 = 120;

pub(super) fn refused(reason: String) -> SandboxError {
    SandboxError::Refused(reason)
}

/// Runs `work` with a connected client on a thread of its own, and waits for its result.
pub(super) fn with_docker<T, F, Fut>(host: &DockerHost, work: F) -> Result<T, SandboxError>
where
    T: Send,
    F: FnOnce(Docker) -> Fut + Send,
    Fut: Future<Output = Result<T, SandboxError>>,
{
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let docker = connect(host).await?;
                work(docker).await
            })
        });
        worker
            .join()
            .unwrap_or_else(|_| Err(refused("the Docker client thread panicked".into())))
    })
}

async fn connect(host: &DockerHost) -> Result<Docker, SandboxError> {
    let unreachable = |why: String| {
        let advice = if why.contains("ermission denied") {
            "add your user to the docker group (then log in again), or run wright as a user who may use Docker"
        } else if host.is_local() {
            "start it (`sudo systemctl start docker`, or `sudo dockerd &`), or point DOCKER_HOST (or --docker-host) at its socket"
        } else {
            "check that the engine runs there and listens on that address (dockerd -H tcp://ADDRESS:PORT), and that this machine may reach it"
        };
        refused(format!(
            "the Docker daemon is not reachable at {host} ({why}): {advice}"
        ))
    };
    let docker = match host {
        DockerHost::Unix(socket) => {
            if !socket.exists() {
                return Err(unreachable("no such socket".into()));
            }
            let path = socket.to_string_lossy();
            Docker::connect_with_unix(&path, REQUEST_TIMEOUT_SECS, bollard::API_DEFAULT_VERSION)
        }
        DockerHost::Tcp(address) => Docker::connect_with_http(
            &format!("tcp://{address}"),
            REQUEST_TIMEOUT_SECS,
            bollard::API_DEFAULT_VERSION,
        ),
    }
    .map_err(|e| unreachable(e.to_string()))?;
    // Older daemons (Debian's 20.10 speaks API 1.41) refuse newer API versions.
    docker
        .negotiate_version()
        .await
        .map_err(|e| unreachable(cause(&e)))
}

/// The daemon's own words when it gave some, else the error.
fn cause(error: &DockerError) -> String {
    match error {
        DockerError::DockerResponseServerError { message, .. } => message.trim().to_string(),
        other => {
            let mut text = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            text
        }
    }
}

fn status(error: &DockerError) -> Option<u16> {
    match error {
        DockerError::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

pub(super) async fn ensure_image(docker: &Docker, image: &str) -> Result<(), SandboxError> {
    match docker.inspect_image(image).await {
        Ok(_) => Ok(()),
        Err(error) if status(&error) == Some(404) => Err(refused(format!(
            "the image {image} is not on this machine: `docker pull {image}`, or use an image of your own with --docker-image NAME (any image with bash; `docker build -t NAME .` makes one)"
        ))),
        Err(error) => Err(refused(format!(
            "cannot inspect the image {image}: {}",
            cause(&error)
        ))),
    }
}

/// Creates and starts the container `name`; on failure nothing is left behind.
pub(super) async fn create_and_start(
    docker: &Docker,
    name: &str,
    body: ContainerCreateBody,
) -> Result<(), SandboxError> {
    let image = body.image.clone().unwrap_or_default();
    let options = CreateContainerOptionsBuilder::new().name(name).build();
    docker
        .create_container(Some(options), body)
        .await
        .map_err(|e| {
            refused(format!(
                "Docker cannot create the container from {image}: {}",
                cause(&e)
            ))
        })?;
    if let Err(error) = docker.start_container(name, None).await {
        let _ = remove(docker, name).await;
        return Err(refused(format!(
            "the container from {image} cannot start (the image needs bash): {}",
            cause(&error)
        )));
    }
    Ok(())
}

/// The host's PID of the running container's first process.
pub(super) async fn init_pid(docker: &Docker, name: &str) -> Result<i64, SandboxError> {
    let inspected = docker.inspect_container(name, None).await.map_err(|e| {
        refused(format!(
            "cannot inspect the container {name}: {}",
            cause(&e)
        ))
    })?;
    inspected
        .state
        .filter(|state| state.running == Some(true))
        .and_then(|state| state.pid)
        .filter(|pid| *pid > 0)
        .ok_or_else(|| {
            refused(format!(
                "the container {name} stopped as soon as it started"
            ))
        })
}

/// Removes the containers of wright runs that died without cleaning up (see `orphans`).
/// Best effort: a failure here must not stop a new run.
pub(super) async fn reap_orphans(docker: &Docker) {
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![super::spec::CONVERSATION_LABEL.to_string()],
    )]);
    let options = ListContainersOptionsBuilder::new()
        .all(true)
        .filters(&filters)
        .build();
    let Ok(containers) = docker.list_containers(Some(options)).await else {
        return;
    };
    for container in containers {
        let orphan = container
            .labels
            .as_ref()
            .is_some_and(super::orphans::is_orphan);
        if let (true, Some(id)) = (orphan, container.id) {
            let _ = remove(docker, &id).await;
        }
    }
}

/// Stops (SIGKILL) and removes the container; one already gone is fine.
/// Kills every process in the container and starts its keep-alive again: a container
/// with nothing of the agent's left running (its files stay).
pub(super) async fn restart(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    let options = bollard::query_parameters::RestartContainerOptionsBuilder::new()
        .t(0)
        .build();
    docker
        .restart_container(name, Some(options))
        .await
        .map_err(|error| {
            refused(format!(
                "cannot restart the container {name}: {}",
                cause(&error)
            ))
        })
}

pub(super) async fn remove(docker: &Docker, name: &str) -> Result<(), SandboxError> {
    let options = RemoveContainerOptionsBuilder::new()
        .force(true)
        .v(true)
        .build();
    match docker.remove_container(name, Some(options)).await {
        Ok(()) => Ok(()),
        Err(error) if status(&error) == Some(404) => Ok(()),
        Err(error) => Err(refused(format!(
            "cannot remove the container {name}: {}",
            cause(&error)
        ))),
    }
}

/// Unpacks the tar archive in `archive` (read from its start) into the directory `dest`
/// of the container `name`, through the archive API (the engine does the unpacking).
pub(super) async fn upload(
    docker: &Docker,
    name: &str,
    dest: &str,
    archive: std::fs::File,
) -> Result<(), SandboxError> {
    // Sent as read, a chunk at a time: a workspace may be larger than wright's memory.
    let chunks = futures_util::stream::unfold(Some(archive), |file| async move {
        let mut file = file?;
        let mut chunk = vec![0u8; UPLOAD_CHUNK];
        match file.read(&mut chunk) {
            Ok(0) => None,
            Ok(n) => {
                chunk.truncate(n);
                Some((Ok(bytes::Bytes::from(chunk)), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    });
    let options = UploadToContainerOptionsBuilder::new().path(dest).build();
    docker
        .upload_to_container(name, Some(options), bollard::body_try_stream(chunks))
        .await
        .map_err(|e| {
            refused(format!(
                "cannot copy the workspace into the container {name} (at {dest}): {}",
                cause(&e)
            ))
        })
}

/// Writes the tar archive of `path` in the container `name` to `out`.
pub(super) async fn download(
    docker: &Docker,
    name: &str,
    path: &str,
    out: &mut std::fs::File,
) -> Result<(), SandboxError> {
    use futures_util::StreamExt;
    let options = DownloadFromContainerOptionsBuilder::new()
        .path(path)
        .build();
    let mut stream = docker.download_from_container(name, Some(options));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            refused(format!(
                "cannot copy {path} out of the container {name}: {}",
                cause(&e)
            ))
        })?;
        out.write_all(&chunk)?;
    }
    out.flush()?;
    Ok(())
}
