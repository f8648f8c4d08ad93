//! Program validator.
