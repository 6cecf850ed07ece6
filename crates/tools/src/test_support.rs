//! Test harness: a real engine with every native tool, over a temporary workspace.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use quiver_engine::{Audience, Engine, Manifest, Mode, ToolContext, ToolResult, Workspace};
use serde_json::Value;

/// The ceiling of the tests' waits: it only turns a hang into a failure, and is
/// far above any delay a loaded machine causes. Tests wait on events (a file, a
/// process gone, a line of output) and use this only as the bound.
#[allow(dead_code)]
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

#[allow(dead_code)]
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub engine: Arc<Engine>,
    pub ctx: ToolContext,
}

#[allow(dead_code)]
impl Harness {
    pub fn new() -> Self {
        Self::with_mode(Mode::Agent)
    }

    pub fn with_mode(mode: Mode) -> Self {
        Self::with_manifest(mode, "")
    }

    /// The built-in manifest with `overlay` (TOML) laid over it.
    pub fn with_manifest(mode: Mode, overlay: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let registry = crate::native_registry().expect("registry");
        let mut manifest = Manifest::builtin().expect("manifest");
        manifest.overlay_toml(overlay).expect("overlay");
        let trust = quiver_engine::permissions::trust::TrustStore::ephemeral();
        let engine = Arc::new(Engine::with_trust(registry, manifest, trust));
        let workspace = Workspace::new(dir.path()).expect("workspace");
        let audience = Audience { mode, ..Audience::default() };
        Harness { ctx: engine.context(workspace, audience), engine, dir }
    }

    pub fn path(&self, rel: &str) -> std::path::PathBuf {
        self.ctx.workspace.root().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }

    pub async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.ctx.call(name, args).await.expect("no fatal error")
    }

    /// Calls and asserts success; returns the content as text.
    pub async fn ok(&self, name: &str, args: Value) -> String {
        let result = self.call(name, args).await;
        assert!(!result.is_error, "{name} failed: {}", result.content_text());
        result.content_text()
    }

    /// Calls and asserts an error result; returns its message.
    pub async fn err(&self, name: &str, args: Value) -> String {
        let result = self.call(name, args).await;
        assert!(result.is_error, "{name} unexpectedly succeeded: {}", result.content_text());
        result.content_text()
    }
}

/// A minimal, valid two-page PDF ("First page" / "Second page"), built with
/// correct xref offsets so poppler reads it without repairs.
pub fn two_page_pdf() -> Vec<u8> {
    let page_text = ["First page", "Second page"];
    let mut objects: Vec<String> =
        vec!["<< /Type /Catalog /Pages 2 0 R >>".into(), "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>".into()];
    for i in 0..2 {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents {} 0 R /Resources << /Font << /F1 7 0 R >> >> >>",
            5 + i
        ));
    }
    for text in page_text {
        let stream = format!("BT /F1 18 Tf 20 100 Td ({text}) Tj ET");
        objects.push(format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()));
    }
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into());
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{body}\nendobj\n", i + 1));
    }
    let xref = out.len();
    out.push_str(&format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1));
    for off in offsets {
        out.push_str(&format!("{off:010} 00000 n \n"));
    }
    out.push_str(&format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1));
    out.into_bytes()
}

/// Whether this process may write into a directory it made read-only (root).
#[allow(dead_code)]
pub fn permission_bits_are_ignored() -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), Permissions::from_mode(0o555)).unwrap();
    let ignored = std::fs::write(dir.path().join("probe"), "x").is_ok();
    std::fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).unwrap();
    ignored
}

/// Runs the calling test (named by its thread, as libtest names it) in a copy
/// of this test binary as uid/gid 65534 (`nobody`), and fails if it fails
/// there or does not run at all.
#[allow(dead_code)]
pub fn run_this_test_as_nobody() {
    use std::os::unix::process::CommandExt;
    const MARK: &str = "QUIVER_TEST_AS_NOBODY";
    assert!(std::env::var_os(MARK).is_none(), "still ignoring permission bits after dropping to uid 65534");
    let name = std::thread::current().name().unwrap().to_string();
    // Somewhere `nobody` may write; the root process removes it afterwards.
    let scratch = tempfile::tempdir().unwrap();
    std::fs::set_permissions(scratch.path(), Permissions::from_mode(0o777)).unwrap();
    // A copy, because the checkout may sit below a directory `nobody` cannot
    // enter (a `mktemp -d` clone is 0700).
    let exe = scratch.path().join("test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(&exe)
        .args([name.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(MARK, "1")
        .env("TMPDIR", scratch.path())
        .env("HOME", scratch.path())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the test binary as uid 65534: {e}"));
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && report.contains("1 passed"), "as uid 65534, {name}:\n{report}");
}
