use std::ffi::OsStr;

use serde_json::json;

use crate::test_support::Harness;

#[tokio::test]
async fn writes_a_wav_file_at_a_default_or_given_path() {
    if !quiver_testkit::espeak_or_skip() {
        return;
    }
    let h = Harness::new();
    let result = h.call("speech", json!({"text": "Hello from quiver."})).await;
    assert!(!result.is_error, "{}", result.content_text());
    let path = result.metadata["path"].as_str().unwrap().to_string();
    assert!(path.starts_with("speech/") && path.ends_with(".wav") && path.len() == "speech/.wav".len() + 16, "{path}");
    let reader = hound::WavReader::open(h.path(&path)).unwrap();
    assert!(reader.duration() > 0);
    assert_eq!(result.metadata["sample_rate"], reader.spec().sample_rate);
    let ms = result.metadata["duration_ms"].as_u64().unwrap();
    assert!((300..10_000).contains(&ms), "{ms}");
    assert!(result.content_text().starts_with(&format!("Wrote `{path}`")));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(h.path(&path)).unwrap().permissions().mode() & 0o777, 0o644);
    // No temporary files are left beside it.
    assert_eq!(std::fs::read_dir(h.path("speech")).unwrap().count(), 1);

    // Voice and rate are honoured: slower speech is longer.
    let slow = h
        .call("speech", json!({"text": "Hello from quiver.", "path": "out/slow.WAV", "voice": "en-us", "rate": 90}))
        .await;
    assert!(!slow.is_error, "{}", slow.content_text());
    assert!(slow.metadata["duration_ms"].as_u64().unwrap() > ms);
    assert!(h.path("out/slow.WAV").is_file());
}

#[tokio::test]
async fn tts_alias_is_byte_identical_without_notice() {
    if !quiver_testkit::espeak_or_skip() {
        return;
    }
    let h = Harness::new();
    let args = json!({"text": "Same words twice.", "path": "same.wav"});
    let canonical = h.call("speech", args.clone()).await;
    let first = std::fs::read(h.path("same.wav")).unwrap();
    let alias = h.call("tts", args).await;
    assert!(!alias.is_error, "{}", alias.content_text());
    assert_eq!(serde_json::to_string(&canonical).unwrap(), serde_json::to_string(&alias).unwrap());
    assert!(!alias.metadata.contains_key("_deprecation"));
    assert_eq!(first, std::fs::read(h.path("same.wav")).unwrap());
}

#[tokio::test]
async fn bad_input_is_explained() {
    let h = Harness::new();
    assert!(h.err("speech", json!({"text": "  "})).await.contains("empty"));
    assert!(h.err("speech", json!({"text": "a".repeat(10_001)})).await.contains("at most 10000"));
    assert!(h.err("speech", json!({"text": "hi", "rate": 5})).await.contains("between 80 and 450"));
    assert!(h.err("speech", json!({"text": "hi", "voice": "--help"})).await.contains("not a voice name"));
    assert!(h.err("speech", json!({"text": "hi", "voice": "en us"})).await.contains("not a voice name"));
    assert!(h.err("speech", json!({"text": "hi", "path": "x.mp3"})).await.contains(".wav"));
    assert!(h.err("speech", json!({"text": "hi", "path": "../x.wav"})).await.contains("outside the workspace"));
    std::fs::create_dir(h.path("d.wav")).unwrap();
    assert!(h.err("speech", json!({"text": "hi", "path": "d.wav"})).await.contains("directory"));
    assert!(h.err("speech", json!({"text": "hi", "rate": "fast"})).await.contains("rate"));
    assert!(h.err("speech", json!({})).await.contains("text"));
    // The last check needs espeak-ng itself to refuse the voice.
    if quiver_testkit::espeak_or_skip() {
        let unknown = h.err("speech", json!({"text": "hi", "voice": "zz-nonexistent", "path": "v.wav"})).await;
        assert!(unknown.contains("espeak-ng failed") && unknown.contains("voice"), "{unknown}");
        assert!(!h.path("v.wav").exists());
    }
}

#[tokio::test]
async fn plan_mode_refuses_it() {
    let h = Harness::with_mode(quiver_engine::Mode::Plan);
    let err = h.err("speech", json!({"text": "hi"})).await;
    assert!(err.contains("plan mode"), "{err}");
    assert!(!h.path("speech").exists());
}

#[test]
fn missing_program_names_the_package() {
    let empty = tempfile::tempdir().unwrap();
    let err = super::locate(Some(empty.path().as_os_str())).unwrap_err().to_string();
    assert!(err.contains("`espeak-ng` package") && err.contains("not installed"), "{err}");
    assert!(super::locate(None).is_err());
    assert!(super::locate(Some(OsStr::new(""))).is_err());
}

#[test]
fn default_path_depends_on_text_voice_and_rate() {
    use super::default_path;
    assert_eq!(default_path("a", None, None), default_path("a", None, None));
    assert_ne!(default_path("a", None, None), default_path("b", None, None));
    assert_ne!(default_path("a", Some("en"), None), default_path("a", None, None));
    assert_ne!(default_path("a", None, Some(100)), default_path("a", None, None));
}
