//! `assert_golden` driven by the environment (`SOFTGPU_GOLDEN_DIR`, `SOFTGPU_BLESS`,
//! `CARGO_MANIFEST_DIR`). One test only: it changes this process's environment.

use image::{Rgba, RgbaImage};
use softgpu::golden::{assert_golden, Golden, BLESS_ENV, DIR_ENV};
use std::path::PathBuf;

#[test]
fn environment_selects_directory_and_bless_mode() {
    // Without an override the goldens live under the package being tested (cargo sets
    // CARGO_MANIFEST_DIR in the test process's environment).
    std::env::remove_var(DIR_ENV);
    std::env::remove_var(BLESS_ENV);
    assert_eq!(
        Golden::new("x").resolved_dir().unwrap(),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reference-images")
    );

    let tmp = tempfile::tempdir().unwrap();
    std::env::set_var(DIR_ENV, tmp.path());
    let image = RgbaImage::from_pixel(4, 4, Rgba([9, 8, 7, 255]));
    let golden = tmp.path().join("env/case.png");

    std::env::set_var(BLESS_ENV, "1");
    assert_golden("env/case", &image);
    assert!(golden.exists());

    for off in ["0", "", "false"] {
        std::env::set_var(BLESS_ENV, off);
        assert_golden("env/case", &image);
        let mut other = image.clone();
        other.put_pixel(0, 0, Rgba([0, 0, 0, 255]));
        let failed = std::panic::catch_unwind(|| assert_golden("env/case", &other));
        assert!(
            failed.is_err(),
            "{BLESS_ENV}={off:?} must compare, not bless"
        );
        assert!(tmp.path().join("env/case.diff.png").exists());
    }
    std::env::remove_var(BLESS_ENV);
    std::env::remove_var(DIR_ENV);
}
