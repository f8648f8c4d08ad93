//! Parse errors name the right line and column and say what was expected; no input panics.

use softgpu_jit::ir::text::{parse_program, print_program, ParseError};
use softgpu_jit::ir::validate::validate;
use std::path::PathBuf;

fn err(src: &str) -> ParseError {
    match parse_program(src) {
        Ok(p) => panic!("expected an error, parsed {p:?}"),
        Err(e) => e,
    }
}

#[test]
fn unknown_opcode() {
    let e = err("FRAG\nDCL TEMP[0]\n  0: FOO TEMP[0], TEMP[0]\n");
    assert_eq!((e.line, e.column), (3, 6));
    assert_eq!(e.found, "`FOO`");
    assert_eq!(
        e.to_string(),
        "line 3, column 6: expected opcode, found `FOO`"
    );
    // Without an instruction number the line could also have been a header item.
    let e = err("FRAG\nBAR\n");
    assert!(e.expected.contains("DCL"), "{e}");
}

#[test]
fn unknown_register_file() {
    let e = err("FRAG\nDCL TEMP[0]\n\n\n\n\n  0: MOV TEMP[0], FOO[1]\n");
    assert_eq!(
        e.to_string(),
        "line 7, column 19: expected register file name, found `FOO`"
    );
}

#[test]
fn missing_header() {
    let e = err("DCL TEMP[0]\n");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.expected.contains("processor header"), "{e}");
    let e = err("");
    assert_eq!(e.found, "end of input");
    let e = err("\n\n   \n");
    assert_eq!(e.found, "end of input");
}

#[test]
fn bad_operands() {
    let e = err("FRAG\nMOV TEMP[0]\n");
    assert_eq!(e.line, 2);
    assert!(e.to_string().ends_with("found end of line"), "{e}");
    assert!(e.expected.contains("operand 2 of MOV"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], TEMP[1], TEMP[2]\n");
    assert_eq!((e.line, e.column, e.found.as_str()), (2, 21, "`,`"));
    assert!(
        e.expected
            .contains("MOV takes 1 destination(s) and 1 source(s)"),
        "{e}"
    );
    let e = err("FRAG\nTEX TEMP[0], IN[0], SAMP[0]\n");
    assert!(e.expected.contains("texture target"), "{e}");
    let e = err("FRAG\nTEX TEMP[0], IN[0], SAMP[0], TEMP[1]\n");
    assert_eq!(e.column, 30);
    assert!(e.expected.contains("texture target"), "{e}");
    let e = err("FRAG\nMOV\n");
    assert!(e.expected.contains("destination"), "{e}");
    let e = err("FRAG\nMOV TEMP[0].xq, TEMP[1]\n");
    assert_eq!((e.line, e.column), (2, 14));
    assert!(e.expected.contains("write mask"), "{e}");
    let e = err("FRAG\nMOV TEMP[0]., TEMP[1]\n");
    assert!(e.expected.contains("write mask"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], TEMP[1].xyzwx\n");
    assert!(e.expected.contains("at most 4"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], TEMP[1].xq\n");
    assert!(e.expected.contains("swizzle"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], |TEMP[1]\n");
    assert!(e.expected.contains("closing `|`"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], TEMP[1] TEMP[2]\n");
    assert_eq!(e.column, 22);
    let e = err("FRAG\nMOV TEMP[0], TEMP[ADDR[0].q]\n");
    assert!(e.expected.contains("indirect component"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], TEMP[3](1)\n");
    assert!(e.expected.contains("array id"), "{e}");
    let e = err("FRAG\nMOV TEMP[0], TEMP[99999999999]\n");
    assert!(e.expected.contains("below 2^32"), "{e}");
    let e = err("FRAG\nUIF TEMP[0].xxxx :\n");
    assert!(e.expected.contains("label"), "{e}");
}

#[test]
fn bad_declarations() {
    let e = err("FRAG\nDCL TEMP[3..1]\n");
    assert!(e.expected.contains("last index"), "{e}");
    let e = err("FRAG\nDCL TEMP[0], BOGUS\n");
    assert_eq!((e.line, e.column), (2, 14));
    assert!(e.expected.contains("declaration qualifier"), "{e}");
    let e = err("FRAG\nDCL SVIEW[0], 2D\n");
    assert!(e.expected.contains("return type"), "{e}");
    let e = err("FRAG\nDCL SVIEW[0], 9D, FLOAT\n");
    assert!(e.expected.contains("texture target"), "{e}");
    let e = err("FRAG\nDCL TEMP[0..1], ARRAY(x)\n");
    assert!(e.expected.contains("array id"), "{e}");
}

#[test]
fn bad_immediates() {
    let e = err("FRAG\nIMM[1] UINT32 {1, 2, 3, 4}\n");
    assert!(e.expected.contains("immediate index 0"), "{e}");
    let e = err("FRAG\nIMM[0] UINT32 {1, 2, 3, 4, 5}\n");
    assert!(e.expected.contains("at most 4"), "{e}");
    let e = err("FRAG\nIMM[0] UINT32 {1, -2}\n");
    assert_eq!((e.line, e.column), (2, 19));
    let e = err("FRAG\nIMM[0] FLT32 {1.0, abc}\n");
    assert!(e.expected.contains("float"), "{e}");
    let e = err("FRAG\nIMM[0] FLOAT {1.0}\n");
    assert!(e.expected.contains("immediate type"), "{e}");
    let e = err("FRAG\nIMM[0] UINT32 {4294967296}\n");
    assert!(e.expected.contains("2^32"), "{e}");
}

#[test]
fn columns_count_characters_not_bytes() {
    let e = err("FRAG\nMOV TEMP[0], TEMP[1] é\n");
    assert_eq!(e.column, 22);
    assert_eq!(e.found, "`é`");
}

fn corpus() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tgsi");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .expect("corpus directory")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "tgsi").then(|| std::fs::read_to_string(p).expect("dump"))
        })
        .collect();
    out.sort();
    out
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SNIPPETS: &[&str] = &[
    "[",
    "]",
    ",",
    ".",
    "-",
    "|",
    ":",
    "(",
    ")",
    "{",
    "}",
    "..",
    " ",
    "\n",
    "x",
    "0",
    "9999999999",
    "-2147483649",
    "ADDR[0].x",
    "TEMP[",
    "IMM",
    "DCL",
    "PROPERTY",
    "ARRAY(",
    "2D",
    "BUFFER",
    "_SAT",
    "0x",
    "nan",
    "inf",
    "e-",
    "é",
    "\t",
    "\r",
];

/// Feeds thousands of mutated and truncated real dumps through parse, validate and print:
/// nothing may panic, and whatever parses must print and re-parse to the same program.
#[test]
fn mutated_dumps_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let dumps = corpus();
    assert!(!dumps.is_empty());
    let mut parsed = 0usize;
    let mut rejected = 0usize;
    for text in &dumps {
        let chars: Vec<char> = text.chars().collect();
        for round in 0..150 {
            let mut m = chars.clone();
            match round % 5 {
                0 => m.truncate(rng.below(chars.len() + 1)),
                1 => {
                    for _ in 0..1 + rng.below(3) {
                        if !m.is_empty() {
                            let at = rng.below(m.len());
                            m.remove(at);
                        }
                    }
                }
                2 => {
                    let at = rng.below(m.len() + 1);
                    let s = SNIPPETS[rng.below(SNIPPETS.len())];
                    for (k, ch) in s.chars().enumerate() {
                        m.insert(at + k, ch);
                    }
                }
                3 => {
                    if !m.is_empty() {
                        let at = rng.below(m.len());
                        m[at] = char::from(32 + rng.below(95) as u8);
                    }
                }
                _ => {
                    // Swap two lines: breaks nesting, moves DCLs after instructions, ...
                    let mut lines: Vec<String> = m
                        .iter()
                        .collect::<String>()
                        .lines()
                        .map(String::from)
                        .collect();
                    if lines.len() > 2 {
                        let a = 1 + rng.below(lines.len() - 1);
                        let b = 1 + rng.below(lines.len() - 1);
                        lines.swap(a, b);
                    }
                    m = lines.join("\n").chars().collect();
                }
            }
            let src: String = m.into_iter().collect();
            match parse_program(&src) {
                Ok(p) => {
                    parsed += 1;
                    let _ = validate(&p);
                    let printed = print_program(&p);
                    let again = parse_program(&printed)
                        .unwrap_or_else(|e| panic!("reprint failed: {e}\n{printed}"));
                    assert_eq!(again, p, "{printed}");
                }
                Err(e) => {
                    rejected += 1;
                    assert!(e.line >= 1 && e.column >= 1);
                    let line = src.lines().nth(e.line - 1).unwrap_or("");
                    assert!(
                        e.column <= line.chars().count() + 1,
                        "column {} past the end of line {:?} ({e})",
                        e.column,
                        line
                    );
                }
            }
        }
    }
    // Both outcomes must actually be exercised.
    assert!(
        parsed > 100 && rejected > 100,
        "parsed {parsed}, rejected {rejected}"
    );
}
