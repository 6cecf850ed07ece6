//! `speech` (hidden alias `tts`): text to a WAV file in the workspace, through
//! `espeak-ng` — small, offline and packaged everywhere.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use quiver_engine::permissions::command::CommandRequest;
use quiver_engine::{Capabilities, Domain, Risk, Tool, ToolContext, ToolError, ToolOutput};

use crate::util::io_error;

const PROGRAM: &str = "espeak-ng";
const MAX_TEXT_CHARS: usize = 10_000;
const MAX_VOICE_CHARS: usize = 40;
const RATE_RANGE: std::ops::RangeInclusive<u32> = 80..=450;
/// espeak-ng renders far faster than real time; a run this long is stuck.
const SYNTH_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Speech;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeechInput {
    /// Text to speak.
    pub text: String,
    /// Output .wav path in the workspace (default speech/<hash>.wav).
    #[serde(default)]
    pub path: Option<String>,
    /// espeak-ng voice, e.g. "en-us" or "en+f3".
    #[serde(default)]
    pub voice: Option<String>,
    /// Words per minute, 80-450 (default 175).
    #[serde(default)]
    pub rate: Option<u32>,
}

impl Tool for Speech {
    type Input = SpeechInput;
    const NAME: &'static str = "speech";
    const DOMAIN: Domain = Domain::Media;
    const RISK: Risk = Risk::Write;
    const CAPABILITIES: Capabilities = Capabilities::WRITES_FILES;

    fn description(&self) -> String {
        "Text to speech: write the spoken text as a WAV file in the workspace (espeak-ng).".into()
    }

    async fn run(&self, input: SpeechInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = input.text.trim();
        if text.is_empty() {
            return Err(ToolError::model("`text` is empty; give the words to speak"));
        }
        let chars = text.chars().count();
        if chars > MAX_TEXT_CHARS {
            return Err(ToolError::model(format!(
                "`text` is {chars} characters; at most {MAX_TEXT_CHARS} per call (split it into several files)"
            )));
        }
        if let Some(voice) = &input.voice {
            check_voice(voice)?;
        }
        if let Some(rate) = input.rate
            && !RATE_RANGE.contains(&rate)
        {
            return Err(ToolError::model(format!(
                "`rate` is words per minute between {} and {}, got {rate}",
                RATE_RANGE.start(),
                RATE_RANGE.end()
            )));
        }
        let raw_path = match &input.path {
            Some(p) => p.clone(),
            None => default_path(text, input.voice.as_deref(), input.rate),
        };
        let path = ctx.workspace.resolve(&raw_path)?;
        let shown = ctx.workspace.display(&path);
        if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("wav")) {
            return Err(ToolError::model(format!("`path` must end in .wav (espeak-ng writes WAV), got `{shown}`")));
        }
        if path.is_dir() {
            return Err(ToolError::model(format!("`{shown}` is a directory; give a file name ending in .wav")));
        }
        let program = locate(std::env::var_os("PATH").as_deref())?;
        let grant =
            crate::process::authorize(ctx, &CommandRequest::tool_argv(&[program.display().to_string()])).await?;
        let parent = path.parent().unwrap_or(ctx.workspace.root());
        tokio::fs::create_dir_all(parent).await.map_err(|e| io_error("create the folder for", &shown, &e))?;

        // Render into a temporary file beside the target and rename it into place, so
        // a failed run never leaves a truncated WAV under the requested name.
        let temp = tempfile::Builder::new()
            .prefix(".speech-")
            .suffix(".wav")
            .tempfile_in(parent)
            .map_err(|e| io_error("create a temporary file for", &shown, &e))?;
        // Built after the temp file exists: the sandbox's rules are computed from
        // the filesystem as it is, and the file may sit directly in a git
        // workspace's root, where a sandboxed command cannot create entries.
        let launch = crate::process::Launch::new(ctx, grant)?;
        synthesize(&launch, &program, temp.path(), text, input.voice.as_deref(), input.rate).await?;
        let info =
            wav_info(temp.path()).map_err(|e| ToolError::model(format!("espeak-ng wrote no usable audio: {e}")))?;
        // Temporary files are private (0600); the result is an ordinary workspace file.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o644))
            .map_err(|e| io_error("write", &shown, &e))?;
        temp.persist(&path).map_err(|e| io_error("write", &shown, &e.error))?;

        let seconds = info.duration_ms as f64 / 1000.0;
        Ok(ToolOutput::text(format!(
            "Wrote `{shown}`: {seconds:.1} s of speech, {} Hz, {} bytes.",
            info.sample_rate, info.bytes
        ))
        .with_meta("path", shown)
        .with_meta("bytes", info.bytes)
        .with_meta("duration_ms", info.duration_ms)
        .with_meta("sample_rate", info.sample_rate))
    }
}

/// espeak-ng on `path_var`, or an error that names the package to install.
fn locate(path_var: Option<&OsStr>) -> Result<PathBuf, ToolError> {
    crate::util::which_in(PROGRAM, path_var.map(OsStr::to_os_string)).ok_or_else(|| {
        ToolError::model(
            "speech needs `espeak-ng`, which is not installed (not on PATH); install the `espeak-ng` package \
                 (e.g. `apt-get install espeak-ng` or `brew install espeak-ng`) and retry",
        )
    })
}

/// Voice names are short identifiers such as `en-us`, `en+f3` or `mb-en1`. Anything
/// else (notably a leading `-`) could be read by espeak-ng as an option.
fn check_voice(voice: &str) -> Result<(), ToolError> {
    let ok = !voice.is_empty()
        && voice.len() <= MAX_VOICE_CHARS
        && !voice.starts_with('-')
        && voice.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/'));
    if ok {
        Ok(())
    } else {
        Err(ToolError::model(format!(
            "`voice` {voice:?} is not a voice name; use one like \"en-us\" or \"en+f3\" (`espeak-ng --voices` lists them)"
        )))
    }
}

/// Same words, voice and rate give the same file name, so repeating a call
/// overwrites instead of piling up copies.
fn default_path(text: &str, voice: Option<&str>, rate: Option<u32>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(voice.unwrap_or("").as_bytes());
    hasher.update([0]);
    hasher.update(rate.unwrap_or(0).to_le_bytes());
    hasher.update(text.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("speech/{hex}.wav")
}

/// Text goes in on stdin, so nothing in it can be taken for a command-line option.
async fn synthesize(
    launch: &crate::process::Launch,
    program: &Path,
    out: &Path,
    text: &str,
    voice: Option<&str>,
    rate: Option<u32>,
) -> Result<(), ToolError> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("-w").arg(out);
    if let Some(voice) = voice {
        cmd.args(["-v", voice]);
    }
    if let Some(rate) = rate {
        cmd.args(["-s", &rate.to_string()]);
    }
    cmd.arg("--stdin").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let running = launch.prepare(&mut cmd).map_err(|e| ToolError::model(format!("cannot run espeak-ng: {e}")))?;
    let mut child = cmd.spawn().map_err(|e| ToolError::model(format!("cannot run espeak-ng: {e}")))?;
    running.started(child.id());
    // Dropping stdin closes it: espeak-ng speaks what it read and exits. A failed
    // write (espeak-ng quit early, e.g. on an unknown voice) is reported after its
    // exit status, which says why.
    let sent = match child.stdin.take() {
        Some(mut stdin) => stdin.write_all(text.as_bytes()).await,
        None => Ok(()),
    };
    let output = match tokio::time::timeout(SYNTH_TIMEOUT, child.wait_with_output()).await {
        Ok(result) => result.map_err(|e| ToolError::model(format!("espeak-ng failed: {e}")))?,
        Err(_) => {
            return Err(ToolError::model(format!("espeak-ng did not finish within {}s", SYNTH_TIMEOUT.as_secs())));
        }
    };
    if !output.status.success() {
        let mut why = String::from_utf8_lossy(&output.stderr).trim().to_string();
        if why.is_empty() {
            why = String::from_utf8_lossy(&output.stdout).trim().to_string();
        }
        return Err(ToolError::model(format!("espeak-ng failed ({}): {why}", output.status)));
    }
    sent.map_err(|e| ToolError::model(format!("cannot send the text to espeak-ng: {e}")))
}

struct WavInfo {
    bytes: u64,
    sample_rate: u32,
    duration_ms: u64,
}

fn wav_info(path: &Path) -> Result<WavInfo, String> {
    let bytes = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    let reader = hound::WavReader::open(path).map_err(|e| e.to_string())?;
    let sample_rate = reader.spec().sample_rate;
    if sample_rate == 0 || reader.duration() == 0 {
        return Err("the WAV file has no samples".into());
    }
    let duration_ms = u64::from(reader.duration()) * 1000 / u64::from(sample_rate);
    Ok(WavInfo { bytes, sample_rate, duration_ms })
}

#[cfg(test)]
#[path = "speech_tests.rs"]
mod tests;
