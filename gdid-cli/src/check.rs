//! `gdid check`: whether each store's acknowledged blocks survive a crash and a failover, from
//! its server's settings (`gdid::Store::check`).

use std::io::{self, Write};
use std::path::PathBuf;

use gdid::{Durability, Store, Verdict};

use crate::failure::Failure;
use crate::form::Format;
use crate::store::StoreUrl;

/// `gdid check …`.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// The store: sqlite:PATH, mysql://…, postgres://…, mongodb://…; several: each is checked.
    /// Without --store: the URLs of --store-file, else of the
    /// GDID_STORE environment variable (separated by whitespace), else sqlite:gdid.sqlite.
    #[arg(long = "store", value_name = "URL", value_parser = StoreUrl)]
    pub stores: Vec<String>,
    /// A file of store URLs, one a line (`#` starts a comment), instead of --store: no password
    /// in the command line.
    #[arg(long, value_name = "FILE", conflicts_with = "stores")]
    pub store_file: Option<PathBuf>,
    /// text: each setting and its verdict; json: one JSON array, a report per store.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Checks every store of `args`, printing each report to `out`; `Err(AtRisk)` names every
/// setting that is not safe.
pub(crate) async fn run(args: &CheckArgs, out: &mut impl Write) -> Result<(), Failure> {
    let mut reports = Vec::with_capacity(args.stores.len());
    for url in &args.stores {
        let report = Store::options().check(url).await?;
        reports.push((crate::store::label(url), report));
    }
    if args.format == Format::Json {
        let json: Vec<_> = reports
            .iter()
            .map(|(store, report)| json_of(store, report))
            .collect();
        serde_json::to_writer_pretty(&mut *out, &json).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        for (i, (store, report)) in reports.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            write_text(store, report, out)?;
        }
    }
    out.flush()?;
    let at_risk: Vec<String> = reports
        .iter()
        .flat_map(|(store, report)| {
            report
                .at_risk()
                .map(move |setting| format!("{store}: {} ({})", setting.name, setting.verdict))
        })
        .collect();
    if at_risk.is_empty() {
        Ok(())
    } else {
        Err(Failure::AtRisk(at_risk.join(", ")))
    }
}

/// One store's report as text: the store, the server, each setting, and the verdict.
fn write_text(store: &str, report: &Durability, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "store: {store}")?;
    write!(out, "{report}")?;
    let verdict = match report.worst() {
        Verdict::Safe => {
            "safe: no acknowledged block is lost by a crash or a failover of this server"
        }
        Verdict::Unknown => "unknown: a setting could not be judged here (see above)",
        Verdict::LostOnFailover => {
            "at risk: a failover can lose acknowledged blocks (GDIDs stay unique in a new era; \
             counters, ranges and windows stop until skipped)"
        }
        Verdict::IssuedAgain => "at risk: a crash can issue acknowledged ids again",
    };
    writeln!(out, "verdict: {verdict}")
}

/// One store's report as a JSON object.
fn json_of(store: &str, report: &Durability) -> serde_json::Value {
    serde_json::json!({
        "store": store,
        "server": report.server,
        "safe": report.is_safe(),
        "verdict": report.worst().label(),
        "settings": report.settings.iter().map(|setting| serde_json::json!({
            "name": setting.name,
            "value": setting.value,
            "verdict": setting.verdict.label(),
            "meaning": setting.meaning,
        })).collect::<Vec<_>>(),
    })
}
