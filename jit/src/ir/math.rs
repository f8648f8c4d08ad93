//! How a program computes EX2, LG2, POW, SIN and COS: a [`MathMode`] is part of what a program
//! means, so executors compile for it and caches key on it. Its `apply`/`applied` methods, which
//! rewrite a program into ordinary instructions for the `Llvmpipe` mode, live with that rewrite
//! in `opt::lpmath`.

use std::fmt;
use std::str::FromStr;

/// How EX2, LG2, POW, SIN and COS are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MathMode {
    /// glibc-exact (`powf`, `logf`, `sinf`, …): what softpipe computes. The default.
    #[default]
    Exact,
    /// Mesa 22.3 llvmpipe/lavapipe's polynomial approximations, bit for bit.
    Llvmpipe,
}

impl MathMode {
    /// Every mode.
    pub const ALL: [MathMode; 2] = [MathMode::Exact, MathMode::Llvmpipe];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MathMode::Exact => "exact",
            MathMode::Llvmpipe => "llvmpipe",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(s: &str) -> Option<MathMode> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl fmt::Display for MathMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MathMode {
    type Err = String;

    fn from_str(s: &str) -> Result<MathMode, String> {
        MathMode::from_name(s)
            .ok_or_else(|| format!("unknown math mode `{s}` (expected `exact` or `llvmpipe`)"))
    }
}
