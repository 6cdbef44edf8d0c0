//! A script being read: its text, and the spans the parser reports turned into text.
//! The parser counts characters, not bytes; turning one into the other must not cost
//! a walk from the start of the script for every command.

use std::cell::OnceCell;

use brush_parser::SourceSpan;
use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item, SourceLocation};

pub(super) struct Source {
    pub text: String,
    /// Which script this is, so that the same command read twice (a function called
    /// twice) is known as one.
    pub id: usize,
    ascii: bool,
    /// The byte offset of each character, built on first use; not needed when the
    /// script is ASCII.
    offsets: OnceCell<Vec<usize>>,
}

impl Source {
    pub fn new(text: String, id: usize) -> Self {
        Self {
            ascii: text.is_ascii(),
            text,
            id,
            offsets: OnceCell::new(),
        }
    }

    pub fn byte(&self, char_index: usize) -> usize {
        if self.ascii {
            return char_index.min(self.text.len());
        }
        let offsets = self
            .offsets
            .get_or_init(|| self.text.char_indices().map(|(at, _)| at).collect());
        offsets.get(char_index).copied().unwrap_or(self.text.len())
    }

    /// The text a span covers, if it lies in this script.
    pub fn slice(&self, span: &SourceSpan) -> Option<&str> {
        let (start, end) = (self.byte(span.start.index), self.byte(span.end.index));
        self.text.get(start..end)
    }

    /// A simple command as written, and where it starts.
    pub fn simple(&self, simple: &ast::SimpleCommand) -> (String, usize) {
        let items = simple.prefix.iter().flat_map(|p| &p.0);
        let items = items.chain(simple.suffix.iter().flat_map(|s| &s.0));
        let spans = items.filter_map(Item::location);
        let spans = spans.chain(
            simple
                .word_or_name
                .as_ref()
                .and_then(SourceLocation::location),
        );
        let (start, end) = spans.fold((usize::MAX, 0), |(start, end), span| {
            (start.min(span.start.index), end.max(span.end.index))
        });
        if start >= end {
            return (simple.to_string(), 0);
        }
        let (start, end) = (self.byte(start), self.byte(end));
        (self.text.get(start..end).unwrap_or("").to_owned(), start)
    }
}
