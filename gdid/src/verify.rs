//! Auditing the ids a fleet has issued ([`Ledger`]): no id twice, whichever writer got it and in
//! whichever form it was written; ids that go backwards within one writer; a summary per era and
//! authority. What `gdid verify` runs, and the checker of every fault test that counts repeats.
//!
//! ```
//! use gdid::Gdid;
//! use gdid::verify::Ledger;
//!
//! let mut ledger = Ledger::new();
//! let (a, b) = (ledger.writer("service a"), ledger.writer("service b"));
//! ledger.record(a, "0:1:1".parse::<Gdid>().unwrap());
//! ledger.record_as(b, Gdid::parse_any("000000001000000000000001").unwrap(), "000000001000000000000001", "ids.txt:2");
//! let report = ledger.report();
//! assert_eq!(report.repeated, 1); // one id, two forms
//! assert!(report.to_string().contains("0:1:1 repeated"));
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::Gdid;

/// How many repeats and ids gone backwards a [`Report`] names (it counts them all).
pub const EXAMPLES: usize = 20;

/// One writer of a [`Ledger`] (a process, a client, a file), by the order it was named in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Writer(u32);

/// Every id recorded, with who wrote it, where and in which form.
#[derive(Debug, Default)]
pub struct Ledger {
    writers: Vec<String>,
    entries: Vec<Entry>,
    /// The forms and places as read (`form\tplace`), for the entries that have them: where in
    /// `texts` each is (`Entry::read` indexes this).
    reads: Vec<(u32, u32)>,
    texts: String,
    /// The last id of each writer, and what went backwards.
    last: Vec<Option<Gdid>>,
    backwards: Vec<Backwards>,
    backwards_count: u64,
}

/// One recorded id: 20 bytes, so that millions fit.
#[derive(Debug, Clone, Copy)]
struct Entry {
    id: Gdid,
    writer: Writer,
    /// Its form and place in `reads`, or [`NOT_READ`].
    read: u32,
}

/// The `read` of an entry recorded without its form and place.
const NOT_READ: u32 = u32::MAX;

/// An id recorded more than once: each time, by whom, where and as what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The id.
    pub id: Gdid,
    /// Each time it was recorded, in the order recorded.
    pub seen: Vec<Seen>,
}

/// One time an id was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The writer's name.
    pub writer: String,
    /// The form as read (the colon form when recorded without one).
    pub form: String,
    /// Where it was read (`file:line`), if said.
    pub place: Option<String>,
}

/// An id of a writer that sorts at or before the one the writer recorded before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backwards {
    /// The writer's name.
    pub writer: String,
    /// The id before.
    pub before: Gdid,
    /// The id after it, not greater.
    pub after: Gdid,
}

/// The ids of one era and authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// How many distinct ids.
    pub ids: u64,
    /// The smallest.
    pub first: Gdid,
    /// The largest.
    pub last: Gdid,
}

/// What a [`Ledger`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Ids recorded, repeats included.
    pub recorded: u64,
    /// Writers named.
    pub writers: usize,
    /// Records of an id recorded before (an id recorded three times counts 2).
    pub repeated: u64,
    /// The first [`EXAMPLES`] ids recorded more than once.
    pub repeats: Vec<Repeat>,
    /// Ids that sort at or before their writer's previous one (repeats within a writer too).
    pub went_backwards: u64,
    /// The first [`EXAMPLES`] of them.
    pub backwards: Vec<Backwards>,
    /// The distinct ids of each era and authority.
    pub spans: BTreeMap<(u32, u8), Span>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Ledger::default()
    }

    /// Names a writer (the same name twice is the same writer).
    pub fn writer(&mut self, name: &str) -> Writer {
        if let Some(at) = self.writers.iter().position(|w| w == name) {
            return Writer(u32::try_from(at).unwrap_or(u32::MAX));
        }
        self.writers.push(name.to_owned());
        self.last.push(None);
        Writer(u32::try_from(self.writers.len() - 1).unwrap_or(u32::MAX))
    }

    /// Records `id` as `writer`'s next.
    pub fn record(&mut self, writer: Writer, id: Gdid) {
        self.push(writer, id, NOT_READ);
    }

    /// Records `id` as `writer`'s next, read as `form` at `place` (`file:line`): a repeat names
    /// both forms and places.
    pub fn record_as(&mut self, writer: Writer, id: Gdid, form: &str, place: &str) {
        let start = u32::try_from(self.texts.len()).unwrap_or(u32::MAX);
        self.texts.push_str(form);
        self.texts.push('\t');
        self.texts.push_str(place);
        let len = u32::try_from(self.texts.len()).unwrap_or(u32::MAX) - start;
        let read = u32::try_from(self.reads.len()).unwrap_or(NOT_READ);
        self.reads.push((start, len));
        self.push(writer, id, read);
    }

    /// How many ids were recorded.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn push(&mut self, writer: Writer, id: Gdid, read: u32) {
        let last = &mut self.last[writer.0 as usize];
        if let Some(before) = *last
            && id <= before
        {
            self.backwards_count += 1;
            if self.backwards.len() < EXAMPLES {
                self.backwards.push(Backwards {
                    writer: self.writers[writer.0 as usize].clone(),
                    before,
                    after: id,
                });
            }
        }
        *last = Some(id);
        self.entries.push(Entry { id, writer, read });
    }

    /// The verdict: repeats (sorting the ids: `O(n log n)`), what went backwards, the spans.
    pub fn report(mut self) -> Report {
        let recorded = self.entries.len() as u64;
        // Stable: the times an id was seen stay in the order recorded. By the 12 bytes as one
        // number (id order): many times faster than comparing ids in an unoptimised build.
        self.entries.sort_by_key(|entry| key(entry.id));
        let mut report = Report {
            recorded,
            writers: self.writers.len(),
            repeated: 0,
            repeats: Vec::new(),
            went_backwards: self.backwards_count,
            backwards: std::mem::take(&mut self.backwards),
            spans: BTreeMap::new(),
        };
        for same in self.entries.chunk_by(|a, b| a.id == b.id) {
            let id = same[0].id;
            let span = report
                .spans
                .entry((id.era(), id.authority()))
                .or_insert(Span {
                    ids: 0,
                    first: id,
                    last: id,
                });
            span.ids += 1;
            span.last = id;
            if same.len() > 1 {
                report.repeated += same.len() as u64 - 1;
                if report.repeats.len() < EXAMPLES {
                    let seen = same.iter().map(|entry| self.seen(entry)).collect();
                    report.repeats.push(Repeat { id, seen });
                }
            }
        }
        report
    }

    fn seen(&self, entry: &Entry) -> Seen {
        let writer = self.writers[entry.writer.0 as usize].clone();
        let Some(&(start, len)) = self.reads.get(entry.read as usize) else {
            return Seen {
                writer,
                form: entry.id.to_string(),
                place: None,
            };
        };
        let text = &self.texts[start as usize..(start + len) as usize];
        let (form, place) = text.split_once('\t').unwrap_or((text, ""));
        Seen {
            writer,
            form: form.to_owned(),
            place: Some(place.to_owned()).filter(|p| !p.is_empty()),
        }
    }
}

/// `id`'s 12 bytes as one number: the same order as ids.
fn key(id: Gdid) -> u128 {
    id.as_bytes()
        .iter()
        .fold(0, |key, &byte| key << 8 | u128::from(byte))
}

impl Report {
    /// Whether no id was recorded twice.
    pub fn is_unique(&self) -> bool {
        self.repeated == 0
    }
}

impl fmt::Display for Report {
    /// The summary line, the repeats and ids gone backwards named, and one line per era and
    /// authority.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} ids from {} writer(s): {} repeated, {} went backwards within a writer",
            self.recorded, self.writers, self.repeated, self.went_backwards
        )?;
        for repeat in &self.repeats {
            write!(f, "{} repeated:", repeat.id)?;
            for (i, seen) in repeat.seen.iter().enumerate() {
                let sep = if i == 0 { " " } else { "; " };
                write!(f, "{sep}as {:?} by {}", seen.form, seen.writer)?;
                if let Some(place) = &seen.place {
                    write!(f, " ({place})")?;
                }
            }
            writeln!(f)?;
        }
        if self.repeated > self.repeats.len() as u64 {
            writeln!(f, "(the first {} repeated ids named)", self.repeats.len())?;
        }
        for back in &self.backwards {
            writeln!(
                f,
                "{} went backwards: {} after {}",
                back.writer, back.after, back.before
            )?;
        }
        for ((era, authority), span) in &self.spans {
            writeln!(
                f,
                "era {era} authority {authority}: {} ids, {} to {}",
                span.ids, span.first, span.last
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Gdid {
        text.parse().unwrap()
    }

    #[test]
    fn repeats_are_counted_and_named_with_each_writer_and_form() {
        let mut ledger = Ledger::new();
        let (a, b) = (ledger.writer("a"), ledger.writer("b"));
        for n in 1..=5 {
            ledger.record(a, id(&format!("0:1:{n}")));
        }
        ledger.record_as(b, id("0:1:3"), "000000001000000000000003", "b.txt:1");
        ledger.record_as(b, id("0:1:3"), "0:1:3", "b.txt:2");
        let report = ledger.report();
        assert_eq!((report.recorded, report.repeated), (7, 2));
        assert_eq!(report.repeats.len(), 1);
        let seen = &report.repeats[0].seen;
        assert_eq!(seen.len(), 3);
        assert_eq!(
            (seen[0].writer.as_str(), seen[0].form.as_str()),
            ("a", "0:1:3")
        );
        assert_eq!(seen[1].form, "000000001000000000000003");
        assert_eq!(seen[1].place.as_deref(), Some("b.txt:1"));
        assert!(!report.is_unique());
        // b's second 0:1:3 is not after its first.
        assert_eq!(report.went_backwards, 1);
    }

    #[test]
    fn backwards_is_per_writer_and_spans_per_era_and_authority() {
        let mut ledger = Ledger::new();
        let (a, b) = (ledger.writer("a"), ledger.writer("b"));
        ledger.record(a, id("0:1:10"));
        ledger.record(b, id("0:2:1"));
        ledger.record(a, id("7:1:0"));
        ledger.record(b, id("0:2:2"));
        ledger.record(a, id("0:1:11"));
        let report = ledger.report();
        assert!(report.is_unique());
        assert_eq!(report.went_backwards, 1);
        assert_eq!(report.backwards[0].after, id("0:1:11"));
        let spans: Vec<_> = report.spans.iter().map(|(k, s)| (*k, s.ids)).collect();
        assert_eq!(spans, [((0, 1), 2), ((0, 2), 2), ((7, 1), 1)]);
        assert_eq!(report.spans[&(0, 1)].last, id("0:1:11"));
    }

    #[test]
    fn a_writer_named_twice_is_one_writer() {
        let mut ledger = Ledger::new();
        let a = ledger.writer("a");
        assert_eq!(ledger.writer("a"), a);
        assert_eq!(ledger.writers.len(), 1);
    }

    #[test]
    fn examples_are_bounded_but_everything_is_counted() {
        let mut ledger = Ledger::new();
        let a = ledger.writer("a");
        for _ in 0..2 {
            for n in 1..=100 {
                ledger.record(a, id(&format!("0:1:{n}")));
            }
        }
        let report = ledger.report();
        assert_eq!(report.repeated, 100);
        assert_eq!(report.repeats.len(), EXAMPLES);
        assert_eq!(report.went_backwards, 1);
        assert!(
            report
                .to_string()
                .contains("(the first 20 repeated ids named)")
        );
    }
}
