//! RFC 6570 URI templates for resource templates: parsing (levels 1–4),
//! expansion, and matching a concrete URI back to its variables.
//!
//! Every variable holds one string. Expansion follows RFC 6570 §3.2 for all
//! eight operators and the prefix modifier; the explode modifier changes
//! nothing for a string value, so it is accepted and ignored. Matching is the
//! inverse of expansion: `{id}` matches a non-empty run of unreserved
//! characters and percent-escapes and yields the decoded value, `{+path}`
//! and `{#frag}` also match reserved characters and yield the text as
//! written. `{id}` and `{+path}` must match something; the other operators
//! may match nothing (an absent query parameter, say).
//!
//! What each operator can hand a handler, since handlers often map values
//! to files or keys:
//!
//! | operator | decoded | can yield |
//! |---|---|---|
//! | `{x}`, `{/x}`, `{.x}`, `{;x}` | yes | one path segment: never a `/` (not even from `%2F`), never `.` or `..` (nor `%2E%2E`); any other character, `\` and NUL included |
//! | `{?x}`, `{&x}` | yes | any string, `/` and `..` included (a query value is not a path) |
//! | `{+x}`, `{#x}` | no | the text as written: `/`, `..` and escapes such as `%2F` stay in it |
//!
//! So a URI whose one-segment value would decode to `/` or be a dot segment
//! matches no template with that variable (`test://t/..%2Fetc` does not
//! match `test://t/{id}`), and such a `resources/read` gets the usual
//! `-32602` for a URI nothing answers. A handler that takes `{+x}` or a
//! query value into a path must check it itself.
//!
//! Spec: server/resources.mdx#resource-templates (RFC 6570)

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The longest URI matched against a template, in bytes. Longer URIs match
/// no template, which keeps the (backtracking) matcher cheap.
const MAX_MATCH_LEN: usize = 4 * 1024;

/// A parsed RFC 6570 URI template, such as `file:///{+path}` or
/// `test://template/{id}/data`.
///
/// ```
/// use toolwire::UriTemplate;
///
/// let t: UriTemplate = "test://items/{id}{?page}".parse().unwrap();
/// let vars = t.match_uri("test://items/a%20b?page=2").unwrap();
/// assert_eq!(vars["id"], "a b");
/// assert_eq!(vars["page"], "2");
/// assert_eq!(t.expand(|n| vars.get(n).map(String::as_str)), "test://items/a%20b?page=2");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
    names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expr {
    op: Op,
    vars: Vec<VarSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    prefix: Option<usize>,
}

/// The expression operators of RFC 6570 §3.2.1 (Appendix A's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Self::Reserved,
            '#' => Self::Fragment,
            '.' => Self::Label,
            '/' => Self::Path,
            ';' => Self::PathParam,
            '?' => Self::Query,
            '&' => Self::QueryCont,
            _ => return None,
        })
    }

    fn first(self) -> &'static str {
        match self {
            Self::Simple | Self::Reserved => "",
            Self::Fragment => "#",
            Self::Label => ".",
            Self::Path => "/",
            Self::PathParam => ";",
            Self::Query => "?",
            Self::QueryCont => "&",
        }
    }

    fn sep(self) -> &'static str {
        match self {
            Self::Simple | Self::Reserved | Self::Fragment => ",",
            Self::Label => ".",
            Self::Path => "/",
            Self::PathParam => ";",
            Self::Query | Self::QueryCont => "&",
        }
    }

    fn named(self) -> bool {
        matches!(self, Self::PathParam | Self::Query | Self::QueryCont)
    }

    /// What follows the name of an empty named value: `;x` but `?x=`.
    fn ifemp(self) -> &'static str {
        match self {
            Self::Query | Self::QueryCont => "=",
            _ => "",
        }
    }

    fn allow_reserved(self) -> bool {
        matches!(self, Self::Reserved | Self::Fragment)
    }

    /// Whether a value stands for (part of) one path segment, so that its
    /// decoded form may not hold a `/` nor be a dot segment: a handler that
    /// maps such a value to a file must not be led out of its directory by
    /// `..%2F` or `..`. Query values (`{?x}`, `{&x}`) are not path segments;
    /// `{+x}` and `{#x}` are not decoded.
    // RFC 3986 §3.3: `/` separates segments; `.` and `..` are dot segments.
    fn one_segment(self) -> bool {
        matches!(
            self,
            Self::Simple | Self::Label | Self::Path | Self::PathParam
        )
    }
}

/// Why a string is not a valid URI template. Positions are byte offsets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UriTemplateError {
    /// The template is empty.
    #[error("the URI template is empty")]
    Empty,
    /// A `{` has no matching `}`.
    #[error("unclosed expression starting at byte {at}")]
    Unclosed {
        /// Where the `{` is.
        at: usize,
    },
    /// A `}` outside an expression.
    #[error("unmatched '}}' at byte {at}")]
    Unopened {
        /// Where the `}` is.
        at: usize,
    },
    /// `{}` or an expression with an empty variable list entry.
    #[error("empty expression or variable at byte {at}")]
    EmptyExpression {
        /// Where the expression starts.
        at: usize,
    },
    /// An operator RFC 6570 reserves for future use (`=`, `,`, `!`, `@`, `|`).
    #[error("operator {op:?} at byte {at} is reserved by RFC 6570")]
    ReservedOperator {
        /// The operator.
        op: char,
        /// Where the expression starts.
        at: usize,
    },
    /// A variable name with characters outside `ALPHA / DIGIT / "_" /
    /// pct-encoded`, or a misplaced `.`.
    #[error("invalid variable name {name:?} at byte {at}")]
    InvalidVariable {
        /// The name as written.
        name: String,
        /// Where the expression starts.
        at: usize,
    },
    /// A prefix modifier that is not `:1` to `:9999`.
    #[error("invalid prefix modifier {modifier:?} at byte {at}; use :1 to :9999")]
    InvalidPrefix {
        /// The modifier as written.
        modifier: String,
        /// Where the expression starts.
        at: usize,
    },
    /// A character not allowed in the literal part of a template (space,
    /// a control character, `"`, `'`, `<`, `>`, `\`, `^`, `` ` ``, `|`, or a
    /// `%` not followed by two hex digits).
    #[error("character {ch:?} at byte {at} is not allowed in a URI template")]
    InvalidLiteral {
        /// The character.
        ch: char,
        /// Where it is.
        at: usize,
    },
    /// The same variable appears twice; toolwire requires each variable once
    /// so that matching a URI gives one value per name.
    #[error("variable {0:?} appears more than once")]
    DuplicateVariable(String),
}

impl UriTemplate {
    /// Parses `template`.
    pub fn parse(template: &str) -> Result<Self, UriTemplateError> {
        if template.is_empty() {
            return Err(UriTemplateError::Empty);
        }
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut names: Vec<String> = Vec::new();
        let bytes = template.as_bytes();
        let mut i = 0;
        while i < template.len() {
            let Some(ch) = template[i..].chars().next() else {
                break;
            };
            match ch {
                '{' => {
                    let Some(close) = template[i + 1..].find('}') else {
                        return Err(UriTemplateError::Unclosed { at: i });
                    };
                    let body = &template[i + 1..i + 1 + close];
                    let expr = parse_expr(body, i)?;
                    for v in &expr.vars {
                        if names.contains(&v.name) {
                            return Err(UriTemplateError::DuplicateVariable(v.name.clone()));
                        }
                        names.push(v.name.clone());
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Expr(expr));
                    i += close + 2;
                }
                '}' => return Err(UriTemplateError::Unopened { at: i }),
                '%' => {
                    if !is_pct_at(bytes, i) {
                        return Err(UriTemplateError::InvalidLiteral { ch, at: i });
                    }
                    literal.push_str(&template[i..i + 3]);
                    i += 3;
                }
                c if c.is_control()
                    || matches!(c, ' ' | '"' | '\'' | '<' | '>' | '\\' | '^' | '`' | '|') =>
                {
                    return Err(UriTemplateError::InvalidLiteral { ch: c, at: i });
                }
                c => {
                    literal.push(c);
                    i += c.len_utf8();
                }
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Self {
            source: template.to_owned(),
            parts,
            names,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order of appearance.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Whether `name` is one of the template's variables.
    pub fn has_variable(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// Expands the template, looking each variable up with `lookup`; a
    /// variable for which it returns `None` is undefined (RFC 6570 §3.2.1).
    pub fn expand<'v>(&self, lookup: impl Fn(&str) -> Option<&'v str>) -> String {
        let mut out = String::with_capacity(self.source.len());
        for part in &self.parts {
            match part {
                Part::Literal(l) => out.push_str(l),
                Part::Expr(e) => {
                    let mut first = true;
                    for v in &e.vars {
                        let Some(value) = lookup(&v.name) else {
                            continue;
                        };
                        out.push_str(if first { e.op.first() } else { e.op.sep() });
                        first = false;
                        let value = match v.prefix {
                            Some(n) => value
                                .char_indices()
                                .nth(n)
                                .map_or(value, |(i, _)| &value[..i]),
                            None => value,
                        };
                        if e.op.named() {
                            out.push_str(&v.name);
                            if value.is_empty() {
                                out.push_str(e.op.ifemp());
                                continue;
                            }
                            out.push('=');
                        }
                        encode_into(&mut out, value, e.op.allow_reserved());
                    }
                }
            }
        }
        out
    }

    /// Whether `name` is a variable whose value stands for one path
    /// segment (`{x}`, `{/x}`, `{.x}`, `{;x}`), so never holds a `/`.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn yields_segment(&self, name: &str) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Expr(e) => e.op.one_segment() && e.vars.iter().any(|v| v.name == name),
            Part::Literal(_) => false,
        })
    }

    /// Matches a concrete URI against the template, returning the value of
    /// every variable that appears in it; `None` if the URI does not match.
    ///
    /// Values matched by `{var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}` and
    /// `{&var}` are percent-decoded (and must be UTF-8); values matched by
    /// `{+var}` and `{#var}` are returned as written. A value of `{var}`,
    /// `{.var}`, `{/var}` or `{;var}` never holds a `/` and is never `.` or
    /// `..` (see the module docs). A prefix modifier (`{var:3}`) bounds
    /// the value's characters: decoded ones, or for `{+var}` and `{#var}`
    /// the text as written (where an escape is three). A variable that takes
    /// no part in the URI (for example an absent query parameter) is not in
    /// the map. When several matches are possible, earlier variables take as
    /// much as they can.
    pub fn match_uri(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_MATCH_LEN {
            return None;
        }
        // Cheap rejections first: a leading or trailing literal must be there.
        if let Some(Part::Literal(l)) = self.parts.first()
            && !uri.starts_with(l.as_str())
        {
            return None;
        }
        if let Some(Part::Literal(l)) = self.parts.last()
            && !uri.ends_with(l.as_str())
        {
            return None;
        }
        let width = uri.len() + 1;
        let mut bases = Vec::with_capacity(self.parts.len());
        let mut states = 0;
        for part in &self.parts {
            bases.push(states);
            if let Part::Expr(e) = part {
                states += (e.vars.len() + 1) * 2 * width;
            }
        }
        let mut m = Matcher {
            parts: &self.parts,
            s: uri.as_bytes(),
            width,
            bases,
            failed: vec![false; states],
            bound: Vec::new(),
        };
        if !m.parts_from(0, 0) {
            return None;
        }
        let mut out = BTreeMap::new();
        for b in m.bound {
            let raw = &uri.as_bytes()[b.start..b.end];
            let value = if b.decode {
                decode(raw)?
            } else {
                std::str::from_utf8(raw).ok()?.to_owned()
            };
            out.insert(b.name.to_owned(), value);
        }
        Some(out)
    }
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UriTemplate").field(&self.source).finish()
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for UriTemplate {
    type Err = UriTemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn parse_expr(body: &str, at: usize) -> Result<Expr, UriTemplateError> {
    let mut chars = body.chars();
    let (op, list) = match chars.next() {
        None => return Err(UriTemplateError::EmptyExpression { at }),
        Some(c @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err(UriTemplateError::ReservedOperator { op: c, at });
        }
        Some(c) => match Op::from_char(c) {
            Some(op) => (op, &body[c.len_utf8()..]),
            None => (Op::Simple, body),
        },
    };
    let mut vars = Vec::new();
    for spec in list.split(',') {
        if spec.is_empty() {
            return Err(UriTemplateError::EmptyExpression { at });
        }
        let (name, prefix) = if let Some(name) = spec.strip_suffix('*') {
            (name, None)
        } else if let Some((name, modifier)) = spec.split_once(':') {
            let valid = !modifier.is_empty()
                && modifier.len() <= 4
                && !modifier.starts_with('0')
                && modifier.bytes().all(|b| b.is_ascii_digit());
            match modifier.parse::<usize>() {
                Ok(n) if valid => (name, Some(n)),
                _ => {
                    return Err(UriTemplateError::InvalidPrefix {
                        modifier: modifier.to_owned(),
                        at,
                    });
                }
            }
        } else {
            (spec, None)
        };
        if !valid_varname(name) {
            return Err(UriTemplateError::InvalidVariable {
                name: name.to_owned(),
                at,
            });
        }
        vars.push(VarSpec {
            name: name.to_owned(),
            prefix,
        });
    }
    Ok(Expr { op, vars })
}

/// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
fn valid_varname(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || b[0] == b'.' || b[b.len() - 1] == b'.' {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_alphanumeric() || c == b'_' => i += 1,
            b'.' if b[i - 1] != b'.' => i += 1,
            b'%' if is_pct_at(b, i) => i += 3,
            _ => return false,
        }
    }
    true
}

fn is_pct_at(b: &[u8], i: usize) -> bool {
    b.len() > i + 2 && b[i] == b'%' && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

fn encode_into(out: &mut String, value: &str, allow_reserved: bool) {
    let b = value.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_unreserved(c) || (allow_reserved && is_reserved(c)) {
            out.push(char::from(c));
        } else if allow_reserved && is_pct_at(b, i) {
            out.push_str(&value[i..i + 3]);
            i += 3;
            continue;
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
        i += 1;
    }
}

/// The byte two hex digits stand for (both already checked to be hex).
fn hex_byte(hi: u8, lo: u8) -> u8 {
    let digit = |d: u8| {
        char::from(d)
            .to_digit(16)
            .and_then(|v| u8::try_from(v).ok())
            .unwrap_or(0)
    };
    (digit(hi) << 4) | digit(lo)
}

fn decode(raw: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            let hex = std::str::from_utf8(raw.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A backtracking matcher. Failures are memoised by state: what follows a
/// position never depends on the values bound before it, so each state fails
/// at most once and the work stays polynomial.
struct Matcher<'a> {
    parts: &'a [Part],
    s: &'a [u8],
    /// `s.len() + 1`: the number of positions.
    width: usize,
    /// Where each expression's states start in `failed`.
    bases: Vec<usize>,
    /// Failed states: (part, variable, whether an item was emitted, position).
    failed: Vec<bool>,
    bound: Vec<Bound<'a>>,
}

/// A variable's value, as a range of the URI (decoded once the whole URI matched).
struct Bound<'a> {
    name: &'a str,
    start: usize,
    end: usize,
    decode: bool,
}

impl<'a> Matcher<'a> {
    fn parts_from(&mut self, pi: usize, pos: usize) -> bool {
        let Some(part) = self.parts.get(pi) else {
            return pos == self.s.len();
        };
        match part {
            Part::Literal(l) => {
                self.s[pos..].starts_with(l.as_bytes()) && self.parts_from(pi + 1, pos + l.len())
            }
            Part::Expr(_) => self.expr_from(pi, 0, false, pos),
        }
    }

    /// Matches variables `vi..` of the expression at part `pi`, then the rest.
    fn expr_from(&mut self, pi: usize, vi: usize, emitted: bool, pos: usize) -> bool {
        let key = self.bases[pi] + (vi * 2 + usize::from(emitted)) * self.width + pos;
        if self.failed[key] {
            return false;
        }
        let ok = self.try_expr(pi, vi, emitted, pos);
        if !ok {
            self.failed[key] = true;
        }
        ok
    }

    fn try_expr(&mut self, pi: usize, vi: usize, emitted: bool, pos: usize) -> bool {
        let parts = self.parts;
        let Some(Part::Expr(e)) = parts.get(pi) else {
            return false;
        };
        let Some(var) = e.vars.get(vi) else {
            // `{id}` and `{+path}` stand for something: they never match nothing.
            let optional = !matches!(e.op, Op::Simple | Op::Reserved);
            return (emitted || optional) && self.parts_from(pi + 1, pos);
        };
        let lead = if emitted { e.op.sep() } else { e.op.first() };
        if self.s[pos..].starts_with(lead.as_bytes()) {
            let start = pos + lead.len();
            if e.op.named() {
                if self.s[start..].starts_with(var.name.as_bytes()) {
                    let after = start + var.name.len();
                    // An empty value is `?x=` but `;x` (never `;x=`), so
                    // after `;x=` something must follow.
                    let allow_empty = !e.op.ifemp().is_empty();
                    if self.s.get(after) == Some(&b'=')
                        && self.value_then(pi, vi, e, var, after + 1, allow_empty)
                    {
                        return true;
                    }
                    // `;x` is how an empty value appears with `;`.
                    if e.op.ifemp().is_empty() {
                        self.bind(var, after, after, false);
                        if self.expr_from(pi, vi + 1, true, after) {
                            return true;
                        }
                        self.bound.pop();
                    }
                }
            } else if self.value_then(pi, vi, e, var, start, false) {
                return true;
            }
        }
        // The variable is undefined.
        self.expr_from(pi, vi + 1, emitted, pos)
    }

    fn bind(&mut self, var: &'a VarSpec, start: usize, end: usize, decode: bool) {
        self.bound.push(Bound {
            name: &var.name,
            start,
            end,
            decode,
        });
    }

    /// Binds a value starting at `start` (longest first), then matches on.
    fn value_then(
        &mut self,
        pi: usize,
        vi: usize,
        e: &Expr,
        var: &'a VarSpec,
        start: usize,
        allow_empty: bool,
    ) -> bool {
        let allow_reserved = e.op.allow_reserved();
        let one_segment = e.op.one_segment();
        let mut ends = Vec::new();
        if allow_empty {
            ends.push(start);
        }
        let mut q = start;
        // Characters of the value so far, as the prefix modifier counts
        // them: a decoded value's characters (an escaped UTF-8 sequence is
        // one), or the text as written for `{+x}` and `{#x}` (an escape is
        // three), so that the value matched expands back to the same text.
        let mut chars = 0;
        // Whether every character so far is a `.` (written or escaped).
        let mut dots = true;
        let limit = var.prefix.unwrap_or(usize::MAX);
        let escape_at =
            |q: usize| is_pct_at(self.s, q).then(|| hex_byte(self.s[q + 1], self.s[q + 2]));
        while q < self.s.len() {
            let c = self.s[q];
            let escaped = escape_at(q);
            let unit = match escaped {
                // A decoded `/` ends a one-segment value here.
                Some(b'/') if one_segment => break,
                Some(b) => b,
                None if is_unreserved(c) || (allow_reserved && is_reserved(c)) => c,
                None => break,
            };
            let weight = match escaped {
                Some(_) if allow_reserved => 3,
                // A UTF-8 continuation byte is part of the previous character.
                Some(b) if (0x80..0xC0).contains(&b) => 0,
                _ => 1,
            };
            if chars + weight > limit {
                break;
            }
            q += if escaped.is_some() { 3 } else { 1 };
            chars += weight;
            dots &= unit == b'.';
            // A decoded value does not end inside a UTF-8 sequence.
            let mid_char =
                !allow_reserved && escape_at(q).is_some_and(|b| (0x80..0xC0).contains(&b));
            // `.` and `..` are dot segments, never one segment's value.
            let dot_segment = one_segment && dots && chars <= 2;
            if !(mid_char || dot_segment) {
                ends.push(q);
            }
        }
        for &end in ends.iter().rev() {
            self.bind(var, start, end, !allow_reserved);
            if self.expr_from(pi, vi + 1, true, end) {
                return true;
            }
            self.bound.pop();
        }
        false
    }
}

#[cfg(test)]
mod tests;
