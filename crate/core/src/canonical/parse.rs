//! The lossless JSON reader behind [`super::canonicalize`].
//!
//! It builds a flat tree (`Doc`): nodes in one vector, array elements and object members in
//! two more, strings either as a range of the input (no escapes, the common case: no copy)
//! or as a range of one shared buffer of decoded text. Numbers stay lexemes. The reader is
//! a loop over an explicit stack, not a recursion, so nesting depth cannot overflow the
//! call stack, and every error carries the byte offset and the JSON path where it happened.

use super::{push_key_segment, CanonicalError, Form, Location};

/// A string value: a slice of the input (it had no escapes) or of `Doc::decoded`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Text {
    Raw { start: usize, end: usize },
    Decoded { start: usize, end: usize },
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Node {
    Null,
    True,
    False,
    /// An integer lexeme (`-?(0|[1-9][0-9]*)`), kept exactly.
    Int {
        start: usize,
        end: usize,
    },
    /// A number lexeme with a fraction or an exponent.
    Float {
        start: usize,
        end: usize,
    },
    /// Python's extensions (python form only).
    NaN,
    Infinity,
    NegInfinity,
    Str(Text),
    /// `len` elements starting at `Doc::elems[start]`.
    Array {
        start: usize,
        len: usize,
    },
    /// `len` members starting at `Doc::members[start]`, in input order until written.
    Object {
        start: usize,
        len: usize,
    },
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    pub key: Text,
    /// Byte offset of the key's opening quote, for error messages.
    pub key_offset: usize,
    pub value: usize,
}

pub(super) struct Doc<'a> {
    pub text: &'a str,
    pub decoded: String,
    pub nodes: Vec<Node>,
    pub elems: Vec<usize>,
    pub members: Vec<Member>,
    pub root: usize,
}

/// The string a [`Text`] refers to. A free function so callers can borrow the two buffers
/// while mutating the member list.
pub(super) fn text_of<'d>(text: &'d str, decoded: &'d str, t: Text) -> &'d str {
    match t {
        Text::Raw { start, end } => text.get(start..end).unwrap_or(""),
        Text::Decoded { start, end } => decoded.get(start..end).unwrap_or(""),
    }
}

struct Frame {
    is_object: bool,
    /// Where this container's children start in the temporary child stack.
    tmp_start: usize,
    /// Children read so far (for error paths).
    count: usize,
    /// The key whose value is being read (objects).
    key: Option<(Text, usize)>,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    form: Form,
    decoded: String,
    nodes: Vec<Node>,
    elems: Vec<usize>,
    members: Vec<Member>,
    stack: Vec<Frame>,
    tmp_elems: Vec<usize>,
    tmp_members: Vec<Member>,
    /// The first error that does not stop the reading (a lone surrogate, `NaN` in JCS).
    /// A syntax error anywhere in the document wins over it, as in Python, where `json.loads`
    /// fails before the encoder ever sees the surrogate.
    deferred: Option<CanonicalError>,
}

enum State {
    Value,
    After(usize),
    Key,
}

pub(super) fn parse(text: &str, form: Form) -> Result<Doc<'_>, CanonicalError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        i: 0,
        form,
        decoded: String::new(),
        nodes: Vec::new(),
        elems: Vec::new(),
        members: Vec::new(),
        stack: Vec::new(),
        tmp_elems: Vec::new(),
        tmp_members: Vec::new(),
        deferred: None,
    };
    let root = p.run()?;
    if let Some(err) = p.deferred {
        return Err(err);
    }
    Ok(Doc {
        text,
        decoded: p.decoded,
        nodes: p.nodes,
        elems: p.elems,
        members: p.members,
        root,
    })
}

impl Parser<'_> {
    fn run(&mut self) -> Result<usize, CanonicalError> {
        let mut state = State::Value;
        loop {
            state = match state {
                State::Value => self.value()?,
                State::Key => {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.syntax("a property name in double quotes"));
                    }
                    let key_offset = self.i;
                    let key = self.string()?;
                    self.skip_ws();
                    if self.peek() != Some(b':') {
                        return Err(self.syntax("':' after the property name"));
                    }
                    self.i += 1;
                    if let Some(frame) = self.stack.last_mut() {
                        frame.key = Some((key, key_offset));
                    }
                    State::Value
                }
                State::After(id) => {
                    let Some(frame) = self.stack.last_mut() else {
                        self.skip_ws();
                        if self.i < self.bytes.len() {
                            return Err(
                                self.syntax("the end of the input (extra data after the value)")
                            );
                        }
                        return Ok(id);
                    };
                    frame.count += 1;
                    if frame.is_object {
                        let (key, key_offset) = frame
                            .key
                            .take()
                            .unwrap_or((Text::Raw { start: 0, end: 0 }, 0));
                        self.tmp_members.push(Member {
                            key,
                            key_offset,
                            value: id,
                        });
                    } else {
                        self.tmp_elems.push(id);
                    }
                    let is_object = frame.is_object;
                    self.skip_ws();
                    match (self.peek(), is_object) {
                        (Some(b','), false) => {
                            self.i += 1;
                            State::Value
                        }
                        (Some(b','), true) => {
                            self.i += 1;
                            State::Key
                        }
                        (Some(b']'), false) | (Some(b'}'), true) => {
                            self.i += 1;
                            State::After(self.close())
                        }
                        (_, false) => return Err(self.syntax("',' or ']'")),
                        (_, true) => return Err(self.syntax("',' or '}'")),
                    }
                }
            };
        }
    }

    /// Pops the innermost container and moves its children into place.
    fn close(&mut self) -> usize {
        let Some(frame) = self.stack.pop() else {
            return self.push(Node::Null);
        };
        if frame.is_object {
            let start = self.members.len();
            self.members
                .extend(self.tmp_members.drain(frame.tmp_start..));
            self.push(Node::Object {
                start,
                len: self.members.len() - start,
            })
        } else {
            let start = self.elems.len();
            self.elems.extend(self.tmp_elems.drain(frame.tmp_start..));
            self.push(Node::Array {
                start,
                len: self.elems.len() - start,
            })
        }
    }

    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn rest_starts_with(&self, lit: &str) -> bool {
        self.bytes[self.i..].starts_with(lit.as_bytes())
    }

    /// Reads one value; containers are opened (pushed) rather than read to their end.
    fn value(&mut self) -> Result<State, CanonicalError> {
        self.skip_ws();
        let python = self.form == Form::Python;
        let node = match self.peek() {
            Some(b'{') => {
                self.i += 1;
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    Node::Object {
                        start: self.members.len(),
                        len: 0,
                    }
                } else {
                    self.stack.push(Frame {
                        is_object: true,
                        tmp_start: self.tmp_members.len(),
                        count: 0,
                        key: None,
                    });
                    return Ok(State::Key);
                }
            }
            Some(b'[') => {
                self.i += 1;
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    Node::Array {
                        start: self.elems.len(),
                        len: 0,
                    }
                } else {
                    self.stack.push(Frame {
                        is_object: false,
                        tmp_start: self.tmp_elems.len(),
                        count: 0,
                        key: None,
                    });
                    return Ok(State::Value);
                }
            }
            Some(b'"') => Node::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') if self.rest_starts_with("true") => {
                self.i += 4;
                Node::True
            }
            Some(b'f') if self.rest_starts_with("false") => {
                self.i += 5;
                Node::False
            }
            Some(b'n') if self.rest_starts_with("null") => {
                self.i += 4;
                Node::Null
            }
            Some(b'N') if python && self.rest_starts_with("NaN") => {
                self.i += 3;
                Node::NaN
            }
            Some(b'I') if python && self.rest_starts_with("Infinity") => {
                self.i += 8;
                Node::Infinity
            }
            Some(b'N' | b'I')
                if !python
                    && (self.rest_starts_with("NaN") || self.rest_starts_with("Infinity")) =>
            {
                let nan = self.rest_starts_with("NaN");
                let lexeme = if nan { "NaN" } else { "Infinity" };
                let at = self.location(self.i);
                self.defer(CanonicalError::NonFinite {
                    lexeme: lexeme.into(),
                    at,
                });
                self.i += lexeme.len();
                if nan {
                    Node::NaN
                } else {
                    Node::Infinity
                }
            }
            _ => return Err(self.syntax("a JSON value")),
        };
        let id = self.push(node);
        Ok(State::After(id))
    }

    fn number(&mut self) -> Result<Node, CanonicalError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
            if self.rest_starts_with("Infinity") {
                if self.form == Form::Jcs {
                    let at = self.location(start);
                    self.defer(CanonicalError::NonFinite {
                        lexeme: "-Infinity".into(),
                        at,
                    });
                }
                self.i += 8;
                return Ok(Node::NegInfinity);
            }
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.syntax("a digit")),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.syntax("a digit after the decimal point"));
            }
            self.digits();
            float = true;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.syntax("a digit in the exponent"));
            }
            self.digits();
            float = true;
        }
        let end = self.i;
        Ok(if float {
            Node::Float { start, end }
        } else {
            Node::Int { start, end }
        })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    /// Reads a string starting at its opening quote. Strings without escapes are not copied.
    fn string(&mut self) -> Result<Text, CanonicalError> {
        self.i += 1;
        let start = self.i;
        // Fast path: scan to the closing quote.
        loop {
            match self.peek() {
                Some(b'"') => {
                    let end = self.i;
                    self.i += 1;
                    return Ok(Text::Raw { start, end });
                }
                Some(b'\\') => break,
                Some(0x00..=0x1F) => {
                    return Err(self.syntax(
                        "a string without raw control characters (write them as \\u escapes)",
                    ))
                }
                Some(_) => self.i += 1,
                None => return Err(self.syntax("the closing '\"' of the string")),
            }
        }
        let dstart = self.decoded.len();
        self.decoded.push_str(&self.text[start..self.i]);
        loop {
            let run = self.i;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // `run..i` ends before an ASCII byte, so it is a char boundary.
            self.decoded.push_str(&self.text[run..self.i]);
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Text::Decoded {
                        start: dstart,
                        end: self.decoded.len(),
                    });
                }
                Some(b'\\') => self.escape()?,
                Some(_) => {
                    return Err(self.syntax(
                        "a string without raw control characters (write them as \\u escapes)",
                    ))
                }
                None => return Err(self.syntax("the closing '\"' of the string")),
            }
        }
    }

    fn escape(&mut self) -> Result<(), CanonicalError> {
        let at = self.i;
        self.i += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.i += 1;
                let unit = self.hex4()?;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        let low = if self.rest_starts_with("\\u") {
                            let save = self.i;
                            self.i += 2;
                            let low = self.hex4()?;
                            if (0xDC00..=0xDFFF).contains(&low) {
                                Some(low)
                            } else {
                                self.i = save;
                                None
                            }
                        } else {
                            None
                        };
                        match low {
                            Some(low) => 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                            None => self.lone(unit, at),
                        }
                    }
                    0xDC00..=0xDFFF => self.lone(unit, at),
                    _ => unit,
                };
                // Every value here is a scalar value (surrogates were handled above).
                self.decoded.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                return Ok(());
            }
            _ => {
                return Err(
                    self.syntax("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)")
                )
            }
        };
        self.i += 1;
        self.decoded.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, CanonicalError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.syntax("four hex digits after \\u")),
            };
            v = v * 16 + u32::from(d);
            self.i += 1;
        }
        Ok(v)
    }

    /// Records a lone surrogate and stands U+FFFD in for it, so reading goes on: a later
    /// syntax error must still be reported as such.
    fn lone(&mut self, unit: u32, at: usize) -> u32 {
        let escape = format!("\\u{unit:04x}");
        let at = self.location(at);
        self.defer(CanonicalError::LoneSurrogate { escape, at });
        0xFFFD
    }

    fn defer(&mut self, err: CanonicalError) {
        if self.deferred.is_none() {
            self.deferred = Some(err);
        }
    }

    fn syntax(&self, expected: &'static str) -> CanonicalError {
        CanonicalError::Syntax {
            expected,
            at: self.location(self.i),
        }
    }

    /// The location of `offset` with the path of the value being read.
    fn location(&self, offset: usize) -> Location {
        let mut path = String::from("$");
        for frame in &self.stack {
            if frame.is_object {
                if let Some((key, _)) = frame.key {
                    push_key_segment(&mut path, text_of(self.text, &self.decoded, key));
                }
            } else {
                path.push('[');
                path.push_str(&frame.count.to_string());
                path.push(']');
            }
        }
        Location::at(self.bytes, offset, path)
    }
}
