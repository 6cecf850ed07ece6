use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_environment_then_the_user_config_then_the_default_install() {
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let config = tmp.path().join("config.toml");
    let dir = |p: &Path| ModelChoice::Dir(p.to_path_buf());
    // nothing anywhere: the model compiled into the binary
    assert_eq!(resolve(None, Some(&config), Some(&models)).unwrap(), ModelChoice::Embedded);
    assert_eq!(resolve(None, None, None).unwrap(), ModelChoice::Embedded);
    // a pulled default model is found
    write(&models.join(DEFAULT_MODEL).join("config.json"), "{}");
    assert_eq!(resolve(None, Some(&config), Some(&models)).unwrap(), dir(&models.join(DEFAULT_MODEL)));
    // the user's config wins over it, and can turn it off or pick the embedded one
    write(&config, "[search]\nmodel = \"/opt/bge\"\n");
    assert_eq!(resolve(None, Some(&config), Some(&models)).unwrap(), dir(Path::new("/opt/bge")));
    write(&config, "[search]\nmodel = \"off\"\n");
    assert_eq!(resolve(None, Some(&config), Some(&models)).unwrap(), ModelChoice::Off);
    write(&config, "[search]\nmodel = \"embedded\"\n");
    assert_eq!(resolve(None, Some(&config), Some(&models)).unwrap(), ModelChoice::Embedded);
    // the environment wins over both
    assert_eq!(resolve(Some("/m"), Some(&config), Some(&models)).unwrap(), dir(Path::new("/m")));
    assert_eq!(resolve(Some("off"), None, Some(&models)).unwrap(), ModelChoice::Off);
    assert_eq!(resolve(Some(" "), None, Some(&models)).unwrap(), ModelChoice::Off);
    assert_eq!(resolve(Some("embedded"), Some(&config), Some(&models)).unwrap(), ModelChoice::Embedded);
    // a config without [search] falls through to the default install
    write(&config, "[providers.x]\nbase_url = \"http://localhost\"\n");
    assert_eq!(resolve(None, Some(&config), Some(&models)).unwrap(), dir(&models.join(DEFAULT_MODEL)));
}

#[test]
fn a_bad_search_setting_is_a_precise_error() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    write(&config, "[search]\nmodel = 3\n");
    let e = format!("{:#}", resolve(None, Some(&config), None).unwrap_err());
    assert!(e.contains("[search] model must be a directory path"), "{e}");
    write(&config, "[search\n");
    let e = format!("{:#}", resolve(None, Some(&config), None).unwrap_err());
    assert!(e.contains("is not TOML"), "{e}");
}
