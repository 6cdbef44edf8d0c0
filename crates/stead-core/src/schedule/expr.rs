//! The cron expression grammar: five fields or an `@` macro, read the way
//! Debian's cron reads them, plus croner's `L`, `W` and `#`.
//!
//! Every field is checked here, so errors can name the field and the value.
//! The result is rendered as a croner pattern with every list spelled out:
//! croner then only finds wall-clock matches, and never applies its own
//! reading of `*`, which differs from Debian's in the day rule and in which
//! jobs count as fixed-time.

use std::fmt::Display;

/// A checked expression.
pub(crate) struct Parsed {
    /// The expression in croner's syntax, lists spelled out.
    pub(crate) pattern: String,
    /// Debian's wildcard job: the minute or hour field starts with `*`.
    /// Every other job is fixed-time, even with lists or ranges, because
    /// Debian's cron decides this by the field's first character alone.
    pub(crate) wildcard: bool,
    /// The five fields as written, macros expanded, for messages.
    pub(crate) fields: [String; 5],
    /// A day must match both day fields rather than either.
    pub(crate) days_and: bool,
    /// The day-of-month field allows every day.
    pub(crate) dom_all: bool,
    /// The day-of-week field allows every weekday.
    pub(crate) dow_all: bool,
    /// The earliest hour and minute allowed, for probing whether a day fires.
    pub(crate) first_hour: i8,
    pub(crate) first_minute: i8,
}

const FIELD_NAMES: &str = "minute hour day-of-month month day-of-week";

const MACROS: [(&str, &str); 7] = [
    ("@hourly", "0 * * * *"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@weekly", "0 0 * * 0"),
    ("@monthly", "0 0 1 * *"),
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
];

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// Checks an expression; the error is the reason, without the expression.
pub(crate) fn parse(expr: &str) -> Result<Parsed, String> {
    let words: Vec<&str> = expr.split_ascii_whitespace().collect();
    let fields: Vec<&str> = match words.as_slice() {
        [] => return Err(format!("it is empty; expected five fields: {FIELD_NAMES}")),
        [first, rest @ ..] if first.starts_with('@') => {
            let expansion = expand_macro(first)?;
            if !rest.is_empty() {
                return Err(format!("{first} takes no further fields"));
            }
            expansion.split(' ').collect()
        }
        _ if words.len() != 5 => return Err(count_error(words.len())),
        _ => words,
    };
    let [minute, hour, dom, month, dow] = [0, 1, 2, 3, 4].map(|i| fields[i]);

    let minutes = Field::Minute.parse(minute)?;
    let hours = Field::Hour.parse(hour)?;
    let days = Field::DayOfMonth.parse(dom)?;
    let months = Field::Month.parse(month)?;
    let mut weekdays = Field::DayOfWeek.parse(dow)?;
    // 7 is Sunday again; croner and the checks below want one bit for it.
    weekdays.bits = (weekdays.bits | weekdays.bits >> 7) & 0x7f;

    let days_and = dom.starts_with('*') || dow.starts_with('*');
    let pattern = format!(
        "{} {} {} {} {}{}",
        minutes.render(),
        hours.render(),
        days.render(),
        months.render(),
        if days_and { "+" } else { "" },
        weekdays.render(),
    );
    Ok(Parsed {
        pattern,
        wildcard: minute.starts_with('*') || hour.starts_with('*'),
        fields: [minute, hour, dom, month, dow].map(str::to_string),
        days_and,
        dom_all: days.bits == every(1, 31),
        dow_all: weekdays.bits == every(0, 6),
        first_hour: hours.bits.trailing_zeros() as i8,
        first_minute: minutes.bits.trailing_zeros() as i8,
    })
}

fn expand_macro(word: &str) -> Result<&'static str, String> {
    let lower = word.to_ascii_lowercase();
    if lower == "@reboot" {
        return Err("@reboot is not supported; stead runs jobs on time schedules only".into());
    }
    MACROS
        .iter()
        .find(|(name, _)| *name == lower)
        .map(|(_, fields)| *fields)
        .ok_or_else(|| {
            format!(
                "unknown macro {word:?}; expected @hourly, @daily, @midnight, @weekly, \
                 @monthly, @yearly or @annually"
            )
        })
}

fn count_error(given: usize) -> String {
    let noun = if given == 1 { "field" } else { "fields" };
    let hint = match given {
        6 => "; stead has no seconds field",
        7 => "; stead has no seconds or year fields",
        _ => "",
    };
    format!("{given} {noun} given, 5 expected ({FIELD_NAMES}){hint}")
}

/// The bits for every value in `start..=end`.
fn every(start: u8, end: u8) -> u64 {
    stepped(start, end, 1)
}

/// The bits for `start`, `start + step`, ... up to `end`.
fn stepped(start: u8, end: u8, step: u32) -> u64 {
    (start..=end)
        .step_by(step as usize)
        .fold(0, |bits, value| bits | 1 << value)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

/// A parsed field: plain values as bits, plus croner tokens for `L`, `W`
/// and `#`, whose days depend on the month.
struct Values {
    bits: u64,
    special: Vec<String>,
}

impl Values {
    fn render(&self) -> String {
        let mut tokens: Vec<String> = (0..64)
            .filter(|value| self.bits & 1 << value != 0)
            .map(|value| value.to_string())
            .collect();
        tokens.extend(self.special.iter().cloned());
        tokens.join(",")
    }
}

impl Field {
    fn label(self) -> &'static str {
        match self {
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
        }
    }

    fn bounds(self) -> (u8, u8) {
        match self {
            Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::DayOfMonth => (1, 31),
            Field::Month => (1, 12),
            Field::DayOfWeek => (0, 7),
        }
    }

    /// Names stand for consecutive values from the field's lowest value.
    fn names(self) -> &'static [&'static str] {
        match self {
            Field::Month => &MONTHS,
            Field::DayOfWeek => &WEEKDAYS,
            _ => &[],
        }
    }

    fn parse(self, text: &str) -> Result<Values, String> {
        let field = Checker { field: self, text };
        let mut values = Values {
            bits: 0,
            special: Vec::new(),
        };
        for item in text.split(',') {
            if item.is_empty() {
                return Err(field.whole("has an empty list entry"));
            }
            if item == "?" {
                return Err(field.part(item, "is not supported; use * instead"));
            }
            let special = match self {
                Field::DayOfMonth => field.day_of_month_special(item)?,
                Field::DayOfWeek => field.day_of_week_special(item)?,
                _ => None,
            };
            match special {
                Some(tokens) => values.special.extend(tokens),
                None => values.bits |= field.item(item)?,
            }
        }
        Ok(values)
    }
}

/// Checks the items of one field, and phrases errors about it.
struct Checker<'a> {
    field: Field,
    text: &'a str,
}

impl Checker<'_> {
    fn whole(&self, problem: impl Display) -> String {
        format!("{} field {:?} {problem}", self.field.label(), self.text)
    }

    /// An error about `token`, a part of the field, or all of it.
    fn part(&self, token: &str, problem: impl Display) -> String {
        if token == self.text {
            self.whole(problem)
        } else {
            format!(
                "{} field {:?}: {token:?} {problem}",
                self.field.label(),
                self.text
            )
        }
    }

    /// `*`, a value or a range `a-b`; `*` and ranges may take a step `/s`.
    fn item(&self, item: &str) -> Result<u64, String> {
        let (low, high) = self.field.bounds();
        let Some((base, step)) = item.split_once('/') else {
            let (start, end) = self.range(item, item)?;
            return Ok(every(start, end));
        };
        let step = self.step(item, step)?;
        if !base.contains(['*', '-']) {
            // Debian's cron ignores such a step without a word; croner
            // rejects it. Refusing it, with the likely meaning, is kinder.
            self.value(base)?;
            return Err(self.part(
                item,
                format!("has a step but no range; write */{step} or {base}-{high}/{step}"),
            ));
        }
        let (start, end) = if base == "*" {
            (low, high)
        } else {
            self.range(item, base)?
        };
        Ok(stepped(start, end, step))
    }

    /// `*`, a single value, or `a-b`, as a start and end.
    fn range(&self, item: &str, text: &str) -> Result<(u8, u8), String> {
        if text == "*" {
            return Ok(self.field.bounds());
        }
        let Some((first, last)) = text.split_once('-') else {
            let value = self.value(text)?;
            return Ok((value, value));
        };
        let (start, end) = (self.value(first)?, self.value(last)?);
        if start > end {
            return Err(self.part(
                item,
                if self.field == Field::DayOfWeek && end == 0 {
                    format!("runs backwards; to end a range on Sunday use 7, as in {first}-7")
                } else {
                    "runs backwards; write the smaller value first".to_string()
                },
            ));
        }
        Ok((start, end))
    }

    fn step(&self, item: &str, text: &str) -> Result<u32, String> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.part(item, "has a step that is not a number"));
        }
        // A step beyond the field's span selects only the start, as in
        // Debian's cron, so an absurdly long one is the same as the largest.
        match text.parse::<u32>().unwrap_or(u32::MAX) {
            0 => Err(self.part(item, "has a step of 0; the step must be at least 1")),
            step => Ok(step),
        }
    }

    fn value(&self, token: &str) -> Result<u8, String> {
        let (low, high) = self.field.bounds();
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            return match token.parse::<u8>() {
                Ok(value) if (low..=high).contains(&value) => Ok(value),
                _ => Err(self.part(token, format!("is out of range {low}-{high}"))),
            };
        }
        if let Some(index) = self
            .field
            .names()
            .iter()
            .position(|name| name.eq_ignore_ascii_case(token))
        {
            return Ok(low + index as u8);
        }
        Err(self.part(token, self.not_a_value(token)))
    }

    fn not_a_value(&self, token: &str) -> &'static str {
        let upper = token.to_ascii_uppercase();
        let special = upper == "L"
            || upper.contains('#')
            || upper
                .strip_suffix(['L', 'W'])
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()));
        match self.field {
            Field::Minute | Field::Hour | Field::Month if special => {
                "uses L, W or #, which only the day fields allow"
            }
            Field::DayOfMonth if upper.contains('#') => {
                "uses #, which only the day-of-week field allows"
            }
            Field::DayOfWeek if special && upper.ends_with('W') => {
                "uses W, which only the day-of-month field allows"
            }
            Field::Month => "is not a number or a month name (JAN-DEC)",
            Field::DayOfWeek => "is not a number or a day name (SUN-SAT)",
            _ => "is not a number",
        }
    }

    /// `L` (last day), `LW` (last weekday) and `nW` (weekday nearest the
    /// nth, within the month).
    fn day_of_month_special(&self, item: &str) -> Result<Option<Vec<String>>, String> {
        let upper = item.to_ascii_uppercase();
        if upper == "L" || upper == "LW" {
            return Ok(Some(vec![upper]));
        }
        match upper.strip_suffix('W') {
            Some(day) if !day.is_empty() && day.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(Some(vec![format!("{}W", self.value(day)?)]))
            }
            _ => Ok(None),
        }
    }

    /// `d#n` (nth d of the month), `d#L` and `dL` (last d of the month),
    /// where `d` is a weekday or a range of them.
    fn day_of_week_special(&self, item: &str) -> Result<Option<Vec<String>>, String> {
        let (days, nth) = if let Some((days, nth)) = item.split_once('#') {
            let nth = match nth.to_ascii_uppercase().as_str() {
                "L" => "L".to_string(),
                n @ ("1" | "2" | "3" | "4" | "5") => n.to_string(),
                _ => {
                    return Err(self.part(
                        item,
                        format!("asks for occurrence {nth:?}; use 1-5, or L for the last"),
                    ));
                }
            };
            (days, nth)
        } else if item.eq_ignore_ascii_case("L") {
            return Err(self.part(
                item,
                "needs a weekday before it, as in 5L or FRI#L for the last Friday",
            ));
        } else {
            match item.strip_suffix(['L', 'l']) {
                Some(day) if self.value(day).is_ok() => (day, "L".to_string()),
                _ => return Ok(None),
            }
        };
        if days.contains('*') {
            return Err(self.part(item, "needs a weekday or a range of them before # or L"));
        }
        let (start, end) = self.range(item, days)?;
        Ok(Some(
            (start..=end)
                .map(|day| format!("{}#{nth}", day % 7))
                .collect(),
        ))
    }
}
