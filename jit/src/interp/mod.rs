//! Reference interpreter.
