//! Release binaries keep their line tables (a panic's backtrace names the
//! file and line) but compressed: uncompressed they were most of a 262 MB
//! installed `quiver`. GNU ld, gold and lld all take the flag, and Rust's
//! backtrace reads zlib-compressed sections. Debug builds stay as they are:
//! compressing costs link time on every test rebuild.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    if release && (os == "linux" || os == "android" || os.ends_with("bsd")) {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
