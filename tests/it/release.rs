//! The release archives (`scripts/release/package.sh`) and the Action's use of them
//! (`scripts/action/install.sh`): the binary of the action's own release is installed
//! when its checksum matches, a wrong checksum stops the job, and without a release the
//! action builds from source as before.
#![cfg(unix)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::cli::{stderr, stdout};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const TARGET: &str = "x86_64-unknown-linux-gnu";

fn script(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Packages the test binary as the release archive of `TARGET` under
/// `releases/vVERSION/`, as the release workflow uploads it.
fn package(dir: &Path) -> PathBuf {
    let out_dir = dir.join(format!("releases/v{VERSION}"));
    let out = Command::new("bash")
        .arg(script("scripts/release/package.sh"))
        .args([TARGET, out_dir.to_str().unwrap()])
        .env("ARKDIFF_BIN", env!("CARGO_BIN_EXE_arkdiff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let archive = out_dir.join(format!("arkdiff-{VERSION}-{TARGET}.tar.gz"));
    assert_eq!(stdout(&out).trim(), archive.to_str().unwrap());
    archive
}

/// Runs `install.sh install` as the action's step does on a Linux x64 runner at `git_ref`,
/// with releases under `releases`; without cargo on PATH, so that a build from source
/// shows as its error.
fn install(dir: &Path, root: &str, git_ref: &str, releases: &Path) -> Output {
    Command::new("bash")
        .arg(script("scripts/action/install.sh"))
        .arg("install")
        .env("PATH", "/usr/bin:/bin")
        .env("ARKDIFF_INSTALL", "auto")
        .env("ARKDIFF_ROOT", dir.join(root))
        .env("GITHUB_PATH", dir.join("github_path"))
        .env("ACTION_REPOSITORY", "owner/arkdiff")
        .env("ACTION_REF", git_ref)
        .env(
            "ARKDIFF_RELEASE_BASE",
            format!("file://{}", releases.display()),
        )
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .output()
        .unwrap()
}

#[test]
fn the_archive_holds_the_binary_and_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let archive = package(dir.path());
    let sum = std::fs::read_to_string(format!("{}.sha256", archive.display())).unwrap();
    let (hash, name) = sum.trim_end().split_once("  ").unwrap();
    assert_eq!(name, format!("arkdiff-{VERSION}-{TARGET}.tar.gz"));
    assert_eq!(hash.len(), 64);
    let list = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let list = stdout(&list);
    for file in [
        "arkdiff",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "CHANGELOG.md",
    ] {
        assert!(
            list.lines()
                .any(|l| l == format!("arkdiff-{VERSION}-{TARGET}/{file}")),
            "{file} in {list}"
        );
    }
}

#[test]
fn the_action_uses_its_release_binary_when_the_checksum_matches() {
    let dir = tempfile::tempdir().unwrap();
    let archive = package(dir.path());
    let releases = dir.path().join("releases");
    let tag = format!("v{VERSION}");

    let out = install(dir.path(), "root", &tag, &releases);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("using the release binary"),
        "{}",
        stdout(&out)
    );
    let bin = dir.path().join("root/bin/arkdiff");
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert!(stdout(&version).contains(VERSION));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("github_path")).unwrap(),
        format!("{}\n", dir.path().join("root/bin").display())
    );

    // A checksum that does not match stops the job: nothing is installed.
    let sum = format!("{}.sha256", archive.display());
    std::fs::write(&sum, format!("{}  x\n", "0".repeat(64))).unwrap();
    let out = install(dir.path(), "other-root", &tag, &releases);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("::error title=arkdiff install::the checksum of file://"),
        "{}",
        stdout(&out)
    );
    assert!(!dir.path().join("other-root/bin/arkdiff").exists());
}

#[test]
fn without_a_release_the_action_builds_from_source() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    let releases = dir.path().join("releases");
    let no_releases = dir.path().join("none");
    for (git_ref, releases, why) in [
        ("main", &releases, "not used at its release tag"),
        ("", &releases, "not used at its release tag"),
        (
            &format!("v{VERSION}")[..],
            &no_releases,
            "no release binary at",
        ),
    ] {
        let out = install(dir.path(), "root", git_ref, releases);
        // Building is what comes next; here there is no cargo to build with.
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        let log = stdout(&out);
        assert!(log.contains(why), "{log}");
        assert!(log.contains("building arkdiff needs cargo"), "{log}");
    }
}
