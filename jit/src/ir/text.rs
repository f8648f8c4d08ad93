//! Mesa tgsi_text parser and printer.
