//! The committed C header, `include/softgpu.h`, is what cbindgen generates from the crate's
//! source today: regenerated here and compared byte for byte (`SOFTGPU_BLESS=1` rewrites it).

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("capi/cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let header = crate_dir.join("include/softgpu.h");
    let bless = std::env::var("SOFTGPU_BLESS").is_ok_and(|v| !matches!(v.trim(), "" | "0"));
    if bless {
        std::fs::write(&header, &generated).expect("include/softgpu.h is writable");
        return;
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: run `SOFTGPU_BLESS=1 cargo test -p softgpu-capi --test header` and \
         commit the result. Generated:\n{}",
        header.display(),
        String::from_utf8_lossy(&generated)
    );
}
