//! Corpus suites (`softgpu test --presets`, `softgpu test init`): a small corpus of one-pass
//! presets written by each test, one broken preset and goldens that are missing or wrong, run
//! through the binary: counts, exit status, `--bless`, `--shard`, the report's files and viewer,
//! and the TOML suite `init` writes.

mod cli_support;

use cli_support::{assert_error, softgpu, stderr, Scratch};
use softgpu::golden::corpus::corpus_entries;
use softgpu::golden::suite::Suite;
use std::path::{Path, PathBuf};
use std::process::Output;

const INVERT: &str = "#version 450
layout(push_constant) uniform Push { vec4 SourceSize; } params;
layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;
#pragma stage vertex
layout(location = 0) in vec4 Position;
layout(location = 1) in vec2 TexCoord;
layout(location = 0) out vec2 vTexCoord;
void main() { gl_Position = global.MVP * Position; vTexCoord = TexCoord; }
#pragma stage fragment
layout(location = 0) in vec2 vTexCoord;
layout(location = 0) out vec4 FragColor;
layout(set = 0, binding = 2) uniform sampler2D Source;
void main() { FragColor = vec4(1.0 - texture(Source, vTexCoord).rgb, 1.0); }
";

/// A scratch directory with `presets/` holding, in case order:
/// `invert/invert.slangp`, `invert/scaled.slangp`, `stock.slangp` and `zz/broken.cgp` (its
/// shader does not exist); plus files that are not cases (`.git/hidden.slangp`, `notes.txt`).
fn corpus() -> Scratch {
    let s = Scratch::new();
    s.write("invert.slang", INVERT);
    for dir in ["presets/invert", "presets/zz", "presets/.git"] {
        std::fs::create_dir_all(s.path(dir)).unwrap();
    }
    s.write(
        "presets/stock.slangp",
        "shaders = 1\nshader0 = ../stock.slang\nfilter_linear0 = false\nscale_type0 = viewport\n",
    );
    s.write(
        "presets/invert/invert.slangp",
        "shaders = 1\nshader0 = ../../invert.slang\nscale_type0 = viewport\n",
    );
    s.write(
        "presets/invert/scaled.slangp",
        "shaders = 2\nshader0 = ../../invert.slang\nscale_type0 = source\nscale0 = 0.5\n\
         shader1 = ../../stock.slang\nfilter_linear1 = true\nscale_type1 = viewport\n",
    );
    s.write(
        "presets/zz/broken.cgp",
        "shaders = 1\nshader0 = missing.cg\n",
    );
    s.write("presets/.git/hidden.slangp", "not a preset\n");
    s.write("presets/notes.txt", "not a case\n");
    s
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or("")
}

/// The line of the case named `name`.
fn case_line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no line for {name} in: {out}"))
}

/// `softgpu test --presets presets --input in.png --goldens goldens --size 32x24 --report
/// report` with `extra` flags.
fn run(s: &Scratch, extra: &[&str]) -> Output {
    let mut args: Vec<String> = [
        "test",
        "--presets",
        &s.arg("presets"),
        "--input",
        &s.arg("in.png"),
        "--goldens",
        &s.arg("goldens"),
        "--size",
        "32x24",
        "--frames",
        "2",
        "--report",
        &s.arg("report"),
        "--no-shader-cache",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    softgpu(&args)
}

fn report_html(s: &Scratch) -> String {
    std::fs::read_to_string(s.path("report/index.html")).unwrap()
}

#[test]
fn presets_are_found_sorted_with_mirrored_goldens() {
    let s = corpus();
    // Two presets that differ only in their extension keep it in their goldens' names.
    s.write("presets/invert/scaled.cgp", "shaders = 1\nshader0 = x.cg\n");
    let entries = corpus_entries(&s.path("presets")).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invert/invert.slangp",
            "invert/scaled.cgp",
            "invert/scaled.slangp",
            "stock.slangp",
            "zz/broken.cgp"
        ]
    );
    let goldens: Vec<PathBuf> = entries.iter().map(|e| e.golden.clone()).collect();
    assert_eq!(
        goldens,
        [
            Path::new("invert/invert.png"),
            Path::new("invert/scaled.cgp.png"),
            Path::new("invert/scaled.slangp.png"),
            Path::new("stock.png"),
            Path::new("zz/broken.png"),
        ]
    );
}

#[test]
fn a_corpus_blesses_passes_and_fails_case_by_case() {
    let s = corpus();
    // No goldens yet: every case fails, the broken one with its loader's error, the others
    // saying that their golden is missing.
    let o = run(&s, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "0 passed, 4 failed", "{out}");
    let stock = case_line(&out, "stock.slangp");
    assert!(stock.starts_with("FAILED"), "{stock}");
    assert!(
        stock.contains("does not exist") && stock.contains("--bless"),
        "{stock}"
    );
    let broken = case_line(&out, "zz/broken.cgp");
    assert!(
        broken.starts_with("FAILED") && broken.contains("missing.cg"),
        "{broken}"
    );

    // --bless writes the goldens in the presets' tree; the broken preset still fails.
    let o = run(&s, &["--bless"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "3 passed, 1 failed", "{out}");
    for golden in ["stock.png", "invert/invert.png", "invert/scaled.png"] {
        let image = image::open(s.path("goldens").join(golden)).unwrap();
        assert_eq!((image.width(), image.height()), (32, 24), "{golden}");
    }
    assert!(!s.path("goldens/zz").exists());

    // Compared against them, the three pass.
    let o = run(&s, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "3 passed, 1 failed", "{out}");
    assert!(case_line(&out, "invert/scaled.slangp").starts_with("ok"));

    // Without the broken preset every case passes: exit 0.
    std::fs::remove_file(s.path("presets/zz/broken.cgp")).unwrap();
    let o = run(&s, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "3 passed, 0 failed", "{out}");

    // A golden that went missing is a failure that says so.
    std::fs::remove_file(s.path("goldens/stock.png")).unwrap();
    let o = run(&s, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(case_line(&out, "stock.slangp").contains("does not exist"));
}

#[test]
fn the_report_flips_and_slides_between_expected_and_actual() {
    let s = corpus();
    std::fs::remove_file(s.path("presets/zz/broken.cgp")).unwrap();
    assert_eq!(run(&s, &["--bless"]).status.code(), Some(0));
    // A golden with other pixels: the invert case fails with a diff.
    let wrong = image::RgbaImage::from_pixel(32, 24, image::Rgba([9, 200, 30, 255]));
    wrong.save(s.path("goldens/invert/invert.png")).unwrap();
    let o = run(&s, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "2 passed, 1 failed", "{out}");

    let html = report_html(&s);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("2 passed, 1 failed"));
    // The failure's viewer: four tabs, the full-size pictures as files next to the page.
    for tab in ["expected", "actual", "diff", "slider"] {
        assert!(
            html.contains(&format!("<button type=\"button\" data-view=\"{tab}\"")),
            "{tab}"
        );
    }
    assert_eq!(html.matches("<input class=\"slider\"").count(), 1);
    assert_eq!(html.matches("class=\"over\"").count(), 1);
    let case = html.find("id=\"case-0\"").expect("invert is case 0");
    for kind in ["expected", "actual", "diff"] {
        let file = format!("cases/00000-{kind}.png");
        assert!(html[case..].contains(&format!("src=\"{file}\"")), "{kind}");
        let picture = image::open(s.path("report").join(&file)).unwrap();
        assert_eq!((picture.width(), picture.height()), (32, 24), "{kind}");
    }
    let expected = image::open(s.path("report/cases/00000-expected.png")).unwrap();
    assert_eq!(expected.to_rgba8(), wrong);
    // Passed cases keep no pictures unless asked; every case lists its passes with times.
    assert!(!s.path("report/cases/00001-actual.png").exists());
    assert_eq!(html.matches("<table class=\"passes\">").count(), 3);
    assert!(html.contains("pass 1") && html.contains("draw ms"));
    // Self-contained: no URL leaves the report directory.
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("src=\"/"));

    // --report-all: every case gets the viewer.
    let o = run(&s, &["--report-all"]);
    assert_eq!(o.status.code(), Some(1));
    let html = report_html(&s);
    assert_eq!(html.matches("<input class=\"slider\"").count(), 3);
    for index in 0..3 {
        for kind in ["expected", "actual", "diff"] {
            assert!(
                s.path(&format!("report/cases/{index:05}-{kind}.png"))
                    .exists(),
                "{index} {kind}"
            );
        }
    }
}

#[test]
fn shards_split_the_corpus_into_disjoint_parts() {
    let s = corpus();
    let mut seen = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let o = run(&s, &["--bless", "--shard", shard]);
        let out = stdout(&o);
        let names: Vec<String> = out
            .lines()
            .filter(|l| l.starts_with("blessed") || l.starts_with("FAILED"))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .collect();
        let skipped = 4 - names.len();
        assert!(
            last_line(&out).ends_with(&format!(", {skipped} skipped")),
            "{out}"
        );
        seen.extend(names);
    }
    // Index i goes to shard i mod 3 + 1, in the sorted order of the presets.
    assert_eq!(
        seen,
        [
            "invert/invert.slangp",
            "zz/broken.cgp",
            "invert/scaled.slangp",
            "stock.slangp"
        ]
    );
    let o = run(&s, &["--shard", "2/3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(last_line(&stdout(&o)), "1 passed, 0 failed, 3 skipped");
}

#[test]
fn init_writes_a_suite_that_runs_the_same_cases() {
    let s = corpus();
    std::fs::remove_file(s.path("presets/zz/broken.cgp")).unwrap();
    assert_eq!(run(&s, &["--bless"]).status.code(), Some(0));
    let suite = s.path("suites/corpus.toml");
    let o = softgpu(&[
        "test",
        "init",
        "--presets",
        &s.arg("presets"),
        "--input",
        &s.arg("in.png"),
        "--goldens",
        &s.arg("goldens"),
        "--size",
        "32x24",
        "--frames",
        "2",
        "--tolerance",
        "1",
        "--max-pixels",
        "0.5%",
        "-o",
        suite.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("(3 cases)"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&suite).unwrap();
    // Paths relative to the suite's directory, so the suite moves with the repository.
    assert!(
        text.contains("preset = \"../presets/invert/scaled.slangp\""),
        "{text}"
    );
    assert!(
        text.contains("expected = \"../goldens/stock.png\""),
        "{text}"
    );
    let parsed = Suite::load(&suite).unwrap();
    let names: Vec<&str> = parsed.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invert/invert.slangp",
            "invert/scaled.slangp",
            "stock.slangp"
        ]
    );
    assert!(parsed
        .cases
        .iter()
        .all(|c| c.options.tolerance == 1 && c.options.max_pixels_percent == 0.5));

    let o = softgpu(&[
        "test",
        suite.to_str().unwrap(),
        "--report",
        &s.arg("report"),
        "--no-shader-cache",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert_eq!(last_line(&out), "3 passed, 0 failed", "{out}");

    // Without -o the suite goes to stdout.
    let o = softgpu(&[
        "test",
        "init",
        "--presets",
        &s.arg("presets"),
        "--input",
        &s.arg("in.png"),
        "--goldens",
        &s.arg("goldens"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("[[case]]").count(), 3);
}

#[test]
fn a_corpus_that_cannot_run_exits_2() {
    let s = corpus();
    std::fs::create_dir_all(s.path("empty")).unwrap();
    let with = |presets: &str, input: &str| {
        softgpu(&[
            "test",
            "--presets",
            &s.arg(presets),
            "--input",
            &s.arg(input),
            "--goldens",
            &s.arg("goldens"),
            "--report",
            &s.arg("report"),
        ])
    };
    assert_error(&with("nowhere", "in.png"), 2, &["--presets", "nowhere"]);
    assert_error(&with("empty", "in.png"), 2, &["no .slangp or .cgp"]);
    assert_error(&with("in.png", "in.png"), 2, &["expected a directory"]);
    assert_error(&with("presets", "none.png"), 2, &["--input", "none.png"]);
    // Flags that belong together: clap's usage errors, exit 2.
    let o = softgpu(&["test", "--presets", &s.arg("presets")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--goldens"), "{}", stderr(&o));
    let o = softgpu(&["test", "suite.toml", "--size", "8x8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--presets"), "{}", stderr(&o));
    let o = softgpu(&["test"]);
    assert_eq!(o.status.code(), Some(2));
    // A wrong --max-pixels is refused before any case runs.
    let o = softgpu(&[
        "test",
        "init",
        "--presets",
        &s.arg("presets"),
        "--input",
        &s.arg("in.png"),
        "--goldens",
        &s.arg("goldens"),
        "--max-pixels",
        "120",
    ]);
    assert_error(&o, 2, &["--max-pixels"]);
}
