//! The golden-image toolkit (`softgpu::golden`, `softgpu compare`, `softgpu test`): metrics on
//! constructed images, the diff heat map, the bless → pass → fail cycle of `Golden`, suite
//! parsing errors, case selection, the HTML report, preset cases, and deterministic output across
//! thread counts.

use image::{Rgb, RgbImage, Rgba, RgbaImage};
use softgpu::golden::runner::{self, CaseStatus};
use softgpu::golden::suite::{name_matches, parse_shard, Selection, Suite};
use softgpu::golden::{
    compare_images, diff_image, heat_colour, CompareOptions, Golden, GoldenError, GoldenOutcome,
    WITHIN_TOLERANCE_COLOUR,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn refs() -> PathBuf {
    root().join("reference-images/draw")
}

fn solid(w: u32, h: u32, c: [u8; 4]) -> RgbaImage {
    RgbaImage::from_pixel(w, h, Rgba(c))
}

fn opts(tolerance: u8, max_pixels_percent: f64) -> CompareOptions {
    CompareOptions {
        tolerance,
        max_pixels_percent,
    }
}

fn softgpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .expect("run softgpu")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// ---------------------------------------------------------------- metrics

#[test]
fn identical_images_have_infinite_psnr_and_no_difference() {
    let a = solid(7, 5, [10, 20, 30, 255]);
    let r = compare_images(&a, &a, &CompareOptions::default()).unwrap();
    assert_eq!(r.max_channel_diff, 0);
    assert_eq!(r.pixels_over, 0);
    assert_eq!(r.total_pixels, 35);
    assert!(r.psnr_db.is_infinite() && r.psnr_db > 0.0);
    assert_eq!(r.psnr_text(), "inf");
    assert_eq!(r.mean_abs_diff, 0.0);
    assert!(r.matches());
}

#[test]
fn psnr_mean_and_counts_of_one_changed_channel() {
    // 10x10 pixels = 400 samples; one sample off by 10: MSE = 100/400, MAD = 10/400.
    let a = solid(10, 10, [100, 100, 100, 255]);
    let mut b = a.clone();
    b.put_pixel(3, 4, Rgba([100, 110, 100, 255]));
    let r = compare_images(&a, &b, &CompareOptions::default()).unwrap();
    assert_eq!(r.max_channel_diff, 10);
    assert_eq!(r.pixels_over, 1);
    assert!((r.percent_over() - 1.0).abs() < 1e-12);
    let psnr = 10.0 * (255.0f64 * 255.0 / 0.25).log10();
    assert!((r.psnr_db - psnr).abs() < 1e-9, "{} vs {psnr}", r.psnr_db);
    assert!((r.psnr_db - 54.151).abs() < 1e-3);
    assert!((r.mean_abs_diff - 0.025).abs() < 1e-12);
    assert!(!r.matches());
    assert_eq!(r.psnr_text(), "54.15");
}

#[test]
fn tolerance_edge_is_inclusive() {
    let a = solid(4, 4, [50, 50, 50, 50]);
    let mut b = a.clone();
    b.put_pixel(0, 0, Rgba([53, 50, 50, 50])); // differs by exactly 3
    b.put_pixel(1, 0, Rgba([50, 50, 50, 46])); // differs by 4 (alpha counts)
    assert_eq!(
        compare_images(&a, &b, &opts(3, 0.0)).unwrap().pixels_over,
        1
    );
    assert_eq!(
        compare_images(&a, &b, &opts(4, 0.0)).unwrap().pixels_over,
        0
    );
    assert!(compare_images(&a, &b, &opts(4, 0.0)).unwrap().matches());
    assert_eq!(
        compare_images(&a, &b, &opts(2, 0.0)).unwrap().pixels_over,
        2
    );
}

#[test]
fn max_pixels_share_edge_is_inclusive() {
    // 1000 pixels: 0.1% allows exactly one pixel over the tolerance.
    let a = solid(40, 25, [0, 0, 0, 255]);
    let mut b = a.clone();
    b.put_pixel(0, 0, Rgba([9, 0, 0, 255]));
    let r = compare_images(&a, &b, &opts(0, 0.1)).unwrap();
    assert_eq!((r.pixels_over, r.allowed_pixels), (1, 1));
    assert!(r.matches());
    b.put_pixel(1, 0, Rgba([9, 0, 0, 255]));
    let r = compare_images(&a, &b, &opts(0, 0.1)).unwrap();
    assert_eq!((r.pixels_over, r.allowed_pixels), (2, 1));
    assert!(!r.matches());
    assert!(compare_images(&a, &b, &opts(0, 0.2)).unwrap().matches());
    assert_eq!(opts(0, 0.0).allowed_pixels(1000), 0);
    assert_eq!(opts(0, 100.0).allowed_pixels(1000), 1000);
}

#[test]
fn bad_options_and_sizes_are_errors() {
    let a = solid(2, 2, [0; 4]);
    let b = solid(2, 3, [0; 4]);
    match compare_images(&a, &b, &CompareOptions::default()) {
        Err(GoldenError::SizeMismatch { first, second }) => {
            assert_eq!((first, second), ((2, 2), (2, 3)))
        }
        other => panic!("expected a size mismatch, got {other:?}"),
    }
    assert!(diff_image(&a, &b, &CompareOptions::default()).is_err());
    for bad in [-1.0, 100.5, f64::NAN] {
        let e = compare_images(&a, &a, &opts(0, bad)).unwrap_err();
        assert!(e.to_string().contains("percentage"), "{e}");
    }
}

// ---------------------------------------------------------------- diff image

#[test]
fn diff_image_colours() {
    let mut a = solid(3, 2, [200, 100, 40, 255]);
    a.put_pixel(2, 1, Rgba([255, 255, 255, 255]));
    let mut b = a.clone();
    b.put_pixel(1, 0, Rgba([201, 100, 40, 255])); // within tolerance 1
    b.put_pixel(2, 0, Rgba([200, 100, 40, 245])); // 10 over
    b.put_pixel(0, 1, Rgba([0, 100, 40, 255])); // 200 over
    let d = diff_image(&a, &b, &opts(1, 0.0)).unwrap();
    assert_eq!(d.dimensions(), (3, 2));
    // Unchanged pixels: a quarter of A's luma, grey, opaque.
    let luma = (299 * 200 + 587 * 100 + 114 * 40) / 1000 / 4;
    assert_eq!(
        d.get_pixel(0, 0).0,
        [luma as u8, luma as u8, luma as u8, 255]
    );
    assert_eq!(d.get_pixel(2, 1).0, [63, 63, 63, 255]);
    assert_eq!(*d.get_pixel(1, 0), WITHIN_TOLERANCE_COLOUR);
    assert_eq!(*d.get_pixel(2, 0), heat_colour(10));
    assert_eq!(*d.get_pixel(0, 1), heat_colour(200));
    // The ramp: red for small differences, yellow in the middle, white at the top.
    assert_eq!(heat_colour(2).0[0], 255);
    assert_eq!(heat_colour(2).0[2], 0);
    assert_eq!(heat_colour(128).0, [255, 255, 0, 255]);
    assert_eq!(heat_colour(255).0, [255, 255, 255, 255]);
    // Every diff pixel is opaque and no unchanged pixel is brighter than a difference.
    assert!(d.pixels().all(|p| p.0[3] == 255));
}

// ---------------------------------------------------------------- compare CLI

fn write_rgba(path: &Path, image: &RgbaImage) {
    image.save(path).unwrap();
}

#[test]
fn compare_cli_exit_codes_and_output() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.png");
    let b = tmp.path().join("b.png");
    let c = tmp.path().join("c.png");
    let small = tmp.path().join("small.png");
    let rgb = tmp.path().join("rgb.png");
    let img = solid(8, 8, [10, 20, 30, 255]);
    write_rgba(&a, &img);
    let mut other = img.clone();
    other.put_pixel(0, 0, Rgba([13, 20, 30, 255]));
    write_rgba(&b, &other);
    write_rgba(&c, &img);
    write_rgba(&small, &solid(4, 8, [0; 4]));
    RgbImage::from_pixel(8, 8, Rgb([10, 20, 30]))
        .save(&rgb)
        .unwrap();
    let (a, b, c) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
    );

    let same = softgpu(&["compare", a, c]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    let out = stdout(&same);
    for needle in [
        "max channel difference: 0/255",
        "pixels over tolerance 0: 0 of 64 (0.000%)",
        "PSNR: inf dB",
        "mean absolute difference: 0.0000/255",
        "result: match",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }

    let differs = softgpu(&["compare", a, b]);
    assert_eq!(differs.status.code(), Some(1));
    let out = stdout(&differs);
    assert!(out.contains("max channel difference: 3/255"), "{out}");
    assert!(out.contains("1 of 64 (1.562%)"), "{out}");
    assert!(out.contains("result: DIFFERENT"), "{out}");

    // Within tolerance, or within the allowed share of pixels.
    assert_eq!(
        softgpu(&["compare", a, b, "--tolerance", "3"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        softgpu(&["compare", a, b, "--max-pixels", "1.6%"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        softgpu(&["compare", a, b, "--max-pixels", "1.5"])
            .status
            .code(),
        Some(1)
    );

    let diff = tmp.path().join("out/diff.png");
    let with_diff = softgpu(&["compare", a, b, "--diff", diff.to_str().unwrap()]);
    assert_eq!(with_diff.status.code(), Some(1));
    let d = image::open(&diff).unwrap().to_rgba8();
    assert_eq!(d.dimensions(), (8, 8));
    assert_eq!(*d.get_pixel(0, 0), heat_colour(3));

    // Errors: exit 2 and one line naming the problem.
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["compare", a, small.to_str().unwrap()], "size mismatch"),
        (
            vec!["compare", a, "/nonexistent/x.png"],
            "/nonexistent/x.png",
        ),
        (vec!["compare", a, rgb.to_str().unwrap()], "format mismatch"),
        (vec!["compare", a, b, "--max-pixels", "abc"], "--max-pixels"),
        (
            vec!["compare", a, b, "--max-pixels", "101%"],
            "--max-pixels",
        ),
        (vec!["compare", a, b, "--tolerance", "256"], "tolerance"),
        (vec!["compare", a], "required"),
    ];
    for (args, needle) in cases {
        let o = softgpu(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    let err = stderr(&softgpu(&["compare", a, small.to_str().unwrap()]));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("8x8") && err.contains("4x8"), "{err}");
}

// ---------------------------------------------------------------- assert_golden

#[test]
fn golden_bless_pass_fail_cycle() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("goldens");
    let image = solid(16, 8, [1, 2, 3, 255]);
    let golden = || Golden::new("draw/cycle").dir(&dir).bless(false);
    let golden_path = dir.join("draw/cycle.png");
    let actual_path = dir.join("draw/cycle.actual.png");
    let diff_path = dir.join("draw/cycle.diff.png");

    // Missing golden: a failure that says how to create it, with the actual image written.
    match golden().check(&image).unwrap() {
        GoldenOutcome::Failed { reason, actual, .. } => {
            assert!(reason.contains("SOFTGPU_BLESS=1"), "{reason}");
            assert_eq!(actual, actual_path);
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(actual_path.exists());

    // Bless writes the golden (and clears the stale artifact); blessing again changes nothing.
    assert_eq!(
        golden().bless(true).check(&image).unwrap(),
        GoldenOutcome::Blessed {
            path: golden_path.clone(),
            written: true
        }
    );
    assert!(golden_path.exists() && !actual_path.exists());
    assert!(matches!(
        golden().bless(true).check(&image).unwrap(),
        GoldenOutcome::Blessed { written: false, .. }
    ));

    // Pass, also from a Texture with the same pixels.
    assert!(matches!(golden().assert(&image), GoldenOutcome::Matched(_)));
    let texture = softgpu::texture::Texture::from_rgba8(16, 8, image.clone().into_raw()).unwrap();
    assert!(matches!(
        golden().assert(&texture),
        GoldenOutcome::Matched(_)
    ));

    // A changed pixel: the panic names the actual and diff images, which exist.
    let mut changed = image.clone();
    changed.put_pixel(5, 5, Rgba([40, 2, 3, 255]));
    let panic = std::panic::catch_unwind(|| {
        golden().assert(&changed);
    })
    .expect_err("a different image must fail");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains(&actual_path.display().to_string()),
        "{message}"
    );
    assert!(
        message.contains(&diff_path.display().to_string()),
        "{message}"
    );
    assert!(
        message.contains("max channel difference: 39/255"),
        "{message}"
    );
    assert!(actual_path.exists() && diff_path.exists());
    assert_eq!(image::open(&actual_path).unwrap().to_rgba8(), changed);
    assert_eq!(
        image::open(&diff_path).unwrap().to_rgba8().dimensions(),
        (16, 8)
    );

    // Tolerance lets it pass, and a passing check removes the stale artifacts.
    assert!(matches!(
        golden().tolerance(40).assert(&changed),
        GoldenOutcome::Matched(_)
    ));
    assert!(!actual_path.exists() && !diff_path.exists());
    assert!(matches!(
        golden().max_pixels_percent(1.0).assert(&changed),
        GoldenOutcome::Matched(_)
    ));

    // A different size fails without a diff.
    match golden().check(&solid(8, 8, [0; 4])).unwrap() {
        GoldenOutcome::Failed { reason, diff, .. } => {
            assert!(reason.contains("size mismatch"), "{reason}");
            assert!(diff.is_none());
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn golden_names_must_stay_inside_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["", "../escape", "/abs", "a/../../b"] {
        let e = Golden::new(bad)
            .dir(tmp.path())
            .bless(true)
            .check(&solid(1, 1, [0; 4]))
            .unwrap_err();
        assert!(e.to_string().contains("invalid golden name"), "{bad}: {e}");
    }
    let (g, a, d) = Golden::new("x/y.png").dir("/g").paths().unwrap();
    assert_eq!(
        (g, a, d),
        (
            PathBuf::from("/g/x/y.png"),
            PathBuf::from("/g/x/y.actual.png"),
            PathBuf::from("/g/x/y.diff.png")
        )
    );
}

// ---------------------------------------------------------------- suites

fn parse_err(source: &str) -> String {
    match Suite::parse(Path::new("dir/suite.toml"), source) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error for:\n{source}"),
    }
}

const DRAW_CASE: &str = "[[case]]\nname = \"a\"\nvs = \"vs.tgsi\"\nfs = \"fs.tgsi\"\nvertices = \"v.txt\"\nexpected = \"a.png\"\n";

#[test]
fn suite_errors_name_file_and_line() {
    let cases = [
        (format!("{DRAW_CASE}colour = 1\n"), "dir/suite.toml:7:", "colour"),
        (format!("{DRAW_CASE}filter = \"cubic\"\n"), "dir/suite.toml:7:", "cubic"),
        (format!("{DRAW_CASE}tolerance = 300\n"), "dir/suite.toml:7:", ""),
        (format!("\n\n{DRAW_CASE}size = \"64by64\"\n"), "dir/suite.toml:9:", "WxH"),
        (format!("{DRAW_CASE}{DRAW_CASE}"), "dir/suite.toml:", "duplicate case name"),
        (format!("{DRAW_CASE}frames = 2\n"), "dir/suite.toml:", "`frames` belongs to preset cases"),
        (format!("{DRAW_CASE}textures = {{ x = \"t.png\" }}\n"), "dir/suite.toml:", "unit numbers"),
        ("[[case]]\nname = \"p\"\npreset = \"a.slangp\"\nexpected = \"p.png\"\nvs = \"v\"\n".into(), "dir/suite.toml:", "`vs` belongs to draw cases"),
        ("\n[[case]]\nname = \"b\"\nfs = \"fs.tgsi\"\nvertices = \"v.txt\"\nexpected = \"b.png\"\n".into(), "dir/suite.toml:", "needs `vs`"),
        ("[[case]]\nname = \"b\"\nvs = \"v\"\n".into(), "dir/suite.toml:", "expected"),
        ("[defaults]\ntolerance = 1\n".into(), "dir/suite.toml", "at least one [[case]]"),
        ("[[case]\nname = 1\n".into(), "dir/suite.toml:1:", ""),
        (format!("{DRAW_CASE}max_pixels = 120\n"), "dir/suite.toml:", "percentage"),
    ];
    for (source, location, needle) in cases {
        let e = parse_err(&source);
        assert!(
            e.starts_with(location),
            "{e:?} should start with {location:?}\n{source}"
        );
        assert!(e.contains(needle), "{e:?} should contain {needle:?}");
    }
    // Columns and lines stay right after non-ASCII text.
    let e = parse_err("# ünïcödé ✓\n[[case]]\nname = \"é\"\nwrap = \"spiral\"\n");
    assert!(e.starts_with("dir/suite.toml:4:8:"), "{e}");
    let e = parse_err("[[case]]\nname = \"é\"\ntextures = { \"ü\" = 1 }\n");
    assert!(e.starts_with("dir/suite.toml:3:"), "{e}");
    // A hand-built shard with N = 0 selects nothing instead of dividing by zero.
    let none = Selection {
        filters: vec![],
        shard: Some((1, 0)),
    };
    assert!(!none.picks(0, "a"));
    // The line of a case-level problem is that case's.
    let e = parse_err(&format!(
        "{DRAW_CASE}\n[[case]]\nname = \"b\"\nexpected = \"b.png\"\n"
    ));
    assert!(
        e.starts_with("dir/suite.toml:8:") || e.starts_with("dir/suite.toml:9:"),
        "{e}"
    );
}

#[test]
fn suite_resolves_paths_and_defaults() {
    let source = "[defaults]\ntolerance = 2\nmax_pixels = 0.5\nsize = \"32x16\"\nfilter = \"nearest\"\n\
        [[case]]\nname = \"a\"\ndir = \"sub\"\nvs = \"vs.tgsi\"\nfs = \"fs.tgsi\"\nvertices = \"v.txt\"\n\
        textures = { 3 = \"t.png\" }\nexpected = \"a.png\"\ntolerance = 0\n\
        [[case]]\nname = \"p\"\npreset = \"crt.slangp\"\ninput = \"in.png\"\nframes = 3\n\
        params = { A = 1, B = 0.5 }\nexpected = \"p.png\"\n";
    let suite = Suite::parse(Path::new("base/suite.toml"), source).unwrap();
    assert_eq!(suite.cases.len(), 2);
    let a = &suite.cases[0];
    assert_eq!(a.expected, PathBuf::from("base/sub/a.png"));
    assert_eq!(
        (a.options.tolerance, a.options.max_pixels_percent),
        (0, 0.5)
    );
    match &a.kind {
        softgpu::golden::suite::CaseKind::Draw(d) => {
            assert_eq!(d.vs, PathBuf::from("base/sub/vs.tgsi"));
            assert_eq!(d.textures, vec![(3, PathBuf::from("base/sub/t.png"))]);
            assert_eq!(d.size, (32, 16));
            assert_eq!(d.filter, softgpu::texture::Filter::Nearest);
        }
        other => panic!("expected a draw case, got {other:?}"),
    }
    match &suite.cases[1].kind {
        softgpu::golden::suite::CaseKind::Preset(p) => {
            assert_eq!(p.preset, PathBuf::from("base/crt.slangp"));
            assert_eq!(p.frames, 3);
            assert_eq!(p.params.get("A"), Some(&1.0));
            assert_eq!(p.size, Some((32, 16)));
        }
        other => panic!("expected a preset case, got {other:?}"),
    }
}

#[test]
fn filter_and_shard_selection() {
    assert!(name_matches("tex", "tex_linear"));
    assert!(name_matches("linear", "tex_linear"));
    assert!(!name_matches("tex_*", "bit_ops"));
    assert!(name_matches("tex_*", "tex_linear"));
    assert!(name_matches("*_ops", "bit_ops"));
    assert!(!name_matches("*_op", "bit_ops"));
    assert!(name_matches("t?x_*r", "tex_linear"));
    assert!(name_matches("*", ""));
    assert!(!name_matches("tex?", "tex"));

    assert_eq!(parse_shard("2/3").unwrap(), (2, 3));
    for bad in ["0/3", "4/3", "1", "a/b", "1/0", ""] {
        assert!(parse_shard(bad).is_err(), "{bad}");
    }

    let suite = Suite::load(&root().join("tests/data/golden/mesa_draw.toml")).unwrap();
    assert_eq!(suite.cases.len(), 20);
    let all = suite.select(&Selection::default());
    assert_eq!(all, (0..20).collect::<Vec<_>>());
    // Shards partition the suite: every case in exactly one, by index modulo N.
    let mut seen = Vec::new();
    for k in 1..=3 {
        let shard = suite.select(&Selection {
            filters: vec![],
            shard: Some((k, 3)),
        });
        assert!(shard.iter().all(|i| i % 3 == k - 1));
        seen.extend(shard);
    }
    seen.sort();
    assert_eq!(seen, all);
    let tex = suite.select(&Selection {
        filters: vec!["tex_*".into()],
        shard: None,
    });
    let names: Vec<&str> = tex.iter().map(|&i| suite.cases[i].name.as_str()).collect();
    assert_eq!(
        names,
        [
            "tex_fetch_size_offset",
            "tex_grad_proj",
            "tex_linear",
            "tex_minify",
            "tex_nearest"
        ]
    );
    let both = suite.select(&Selection {
        filters: vec!["tex_*".into(), "bit".into()],
        shard: Some((1, 2)),
    });
    assert!(both.iter().all(|i| i % 2 == 0));
    assert!(both.contains(&0)); // bit_ops is case 0
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or("")
}

#[test]
fn committed_reference_suite_passes_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report");
    let suite = root().join("tests/data/golden/mesa_draw.toml");
    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "20 passed, 0 failed", "{out}");
    assert_eq!(out.lines().filter(|l| l.starts_with("ok ")).count(), 20);
    assert!(report.join("index.html").exists());

    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--shard",
        "2/3",
        "--jobs",
        "1",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(last_line(&stdout(&o)), "7 passed, 0 failed, 13 skipped");
    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--filter",
        "tex_*",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(last_line(&stdout(&o)), "5 passed, 0 failed, 15 skipped");

    for (args, needle) in [
        (vec!["--shard", "4/3"], "--shard"),
        (vec!["--jobs", "0"], "jobs"),
    ] {
        let mut all = vec!["test", suite.to_str().unwrap()];
        all.extend(args);
        let o = softgpu(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}");
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    }
    let o = softgpu(&["test", "/nonexistent/suite.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/suite.toml"));
}

/// A suite in a temp dir that draws `tex_linear` against copies of reference pictures.
fn temp_suite(dir: &Path, expected_from: &str, extra: &str) -> PathBuf {
    let src = refs().join("tex_linear");
    std::fs::copy(
        refs().join(expected_from).join("out.png"),
        dir.join("expected.png"),
    )
    .unwrap();
    let suite = dir.join("suite.toml");
    let text = format!(
        "[[case]]\nname = \"linear\"\ndir = \"{src}\"\nvs = \"vs.tgsi\"\nfs = \"fs.tgsi\"\n\
         vertices = \"vertices.txt\"\nconsts = \"consts.txt\"\ntextures = {{ 0 = \"tex0.png\" }}\n\
         expected = \"{exp}\"\ntolerance = 1\n\n\
         [[case]]\nname = \"crt <preset>\"\npreset = \"crt.slangp\"\ninput = \"frame.png\"\nframes = 2\n\
         expected = \"crt.png\"\n{extra}",
        src = src.display(),
        exp = dir.join("expected.png").display()
    );
    std::fs::write(&suite, text).unwrap();
    suite
}

#[test]
fn failing_suite_writes_artifacts_and_html_report() {
    let tmp = tempfile::tempdir().unwrap();
    // tex_linear rendered against tex_nearest's picture: a real, visible difference.
    let suite = temp_suite(tmp.path(), "tex_nearest", "");
    let report = tmp.path().join("report");
    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "0 passed, 2 failed", "{out}");
    let linear = out.lines().find(|l| l.contains(" linear ")).unwrap();
    assert!(linear.starts_with("FAILED"), "{linear}");
    assert!(linear.contains("PSNR"), "{linear}");
    let preset = out.lines().find(|l| l.contains("crt <preset>")).unwrap();
    assert!(preset.starts_with("FAILED"), "{preset}");
    // The suite's input frame does not exist: the case fails and names the file.
    assert!(preset.contains("frame.png"), "{preset}");

    assert!(tmp.path().join("expected.actual.png").exists());
    assert!(tmp.path().join("expected.diff.png").exists());
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("0 passed, 2 failed"));
    assert!(html.contains("id=\"case-0\"") && html.contains("id=\"case-1\""));
    // The comparison failure's three pictures, as files next to the page; names are escaped.
    for class in ["expected", "actual", "diff"] {
        let file = format!("cases/00000-{class}.png");
        assert!(
            html.contains(&format!(
                "<img class=\"{class}\" alt=\"{class}\" src=\"{file}\""
            )),
            "{class}"
        );
        assert!(report.join(&file).exists(), "{file}");
    }
    assert!(html.contains("crt &lt;preset&gt;") && !html.contains("crt <preset>"));
    assert!(html.contains("frame.png"));

    // With the preset filtered out, only the comparison fails; the summary counts the skip.
    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--filter",
        "linear",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(last_line(&stdout(&o)), "0 passed, 1 failed, 1 skipped");
}

#[test]
fn bless_writes_expected_images_then_the_suite_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = temp_suite(tmp.path(), "tex_nearest", "");
    let report = tmp.path().join("report");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "test",
            suite.to_str().unwrap(),
            "--filter",
            "linear",
            "--report",
            report.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        softgpu(&args)
    };
    let o = run(&["--bless"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).lines().any(|l| l.starts_with("blessed  linear")));
    assert_eq!(
        image::open(tmp.path().join("expected.png"))
            .unwrap()
            .to_rgba8(),
        image::open(refs().join("tex_linear/out.png"))
            .unwrap()
            .to_rgba8()
    );
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(last_line(&stdout(&o)), "1 passed, 0 failed, 1 skipped");
    assert!(!tmp.path().join("expected.actual.png").exists());

    // Blessing a preset case cannot write anything: it fails.
    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--bless",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(last_line(&stdout(&o)), "1 passed, 1 failed");
    assert!(!tmp.path().join("crt.png").exists());
}

#[test]
fn preset_case_without_input_fails_through_the_library() {
    let suite = Suite::parse(
        Path::new("s.toml"),
        "[[case]]\nname = \"p\"\npreset = \"x.slangp\"\nexpected = \"p.png\"\n",
    )
    .unwrap();
    let r = runner::run_case(0, &suite.cases[0], false, None);
    assert_eq!(r.status, CaseStatus::Failed);
    let message = r.message.unwrap();
    assert!(
        message.contains("x.slangp") && message.contains("input"),
        "{message}"
    );
}

#[test]
fn preset_cases_render_through_the_chain_and_match_the_peer() {
    // The project's own presets against librashader's images (tests/chain, reference-images/chain).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "[defaults]\ntolerance = 2\n\n\
             [[case]]\nname = \"stock\"\ndir = \"{root}\"\npreset = \"tests/chain/stock.slangp\"\n\
             input = \"tests/chain/inputs/blocks32x24.png\"\nsize = \"96x72\"\n\
             expected = \"reference-images/chain/stock.png\"\n\n\
             [[case]]\nname = \"wrong size\"\ndir = \"{root}\"\npreset = \"tests/chain/stock.slangp\"\n\
             input = \"tests/chain/inputs/blocks32x24.png\"\nsize = \"48x36\"\n\
             expected = \"reference-images/chain/stock.png\"\n",
            root = root.display()
        ),
    )
    .unwrap();
    let report = tmp.path().join("report");
    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "1 passed, 1 failed", "{out}");
    let bad = out.lines().find(|l| l.contains("wrong size")).unwrap();
    assert!(bad.starts_with("FAILED"), "{bad}");
}

// ---------------------------------------------------------------- determinism

#[test]
fn renders_are_byte_identical_across_thread_counts() {
    // 200x150 spans several 64x64 raster tiles, so the tile scheduling order varies.
    let source = format!(
        "[[case]]\nname = \"det\"\ndir = \"{}\"\nvs = \"vs.tgsi\"\nfs = \"fs.tgsi\"\n\
         vertices = \"vertices.txt\"\nconsts = \"consts.txt\"\ntextures = {{ 0 = \"tex0.png\" }}\n\
         size = \"200x150\"\nexpected = \"unused.png\"\n",
        refs().join("derivatives").display()
    );
    let suite = Suite::parse(Path::new("det.toml"), &source).unwrap();
    let render = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let image = pool
            .install(|| runner::render(&suite.cases[0], None))
            .unwrap();
        softgpu::golden::encode_png(&image)
    };
    let one = render(1);
    assert!(!one.is_empty());
    for threads in [2, 4, 8] {
        assert!(
            render(threads) == one,
            "{threads} threads changed the PNG bytes"
        );
    }
    assert!(
        render(1) == one,
        "a second 1-thread run changed the PNG bytes"
    );
}
