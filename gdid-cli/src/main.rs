//! `gdid`: issue ids from any store, inspect and convert GDIDs.
//!
//! Exit status: 0 on success, 2 when no retry helps (a value, a flag, a store URL, a missing
//! SQLite file, a store to repair), 1 for any other failure (a store that cannot be reached now,
//! a check or a verify that finds a problem). `gdid --help` says the same to users.

mod agent;
mod bench;
mod check;
mod convert;
mod failure;
mod form;
mod inspect;
mod issuer;
mod next;
mod reference;
mod schema;
mod sequences;
mod serve;
mod store;
mod verify;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use gdid::Form;

use crate::agent::AgentArgs;
use crate::bench::BenchArgs;
use crate::check::CheckArgs;
use crate::failure::Failure;
use crate::form::{ByName, Format, InputForm};
use crate::inspect::Inspection;
use crate::issuer::{IssueArgs, Issuer};
use crate::next::{NoSuchForm, Printed};
use crate::schema::SchemaCommand;
use crate::sequences::SequencesCommand;
use crate::serve::{ServeArgs, TokenArgs};
use crate::verify::VerifyArgs;

#[derive(Debug, Parser)]
#[command(
    name = "gdid",
    version,
    about = "Global distributed ids: issue them from any store, inspect and convert GDIDs",
    after_help = "Store URLs: every command that takes --store URL also takes --store-file FILE (one
URL a line, `#` comments) or reads the GDID_STORE environment variable (URLs separated by
whitespace), in that order, so that no password needs the command line; without any of them,
sqlite:gdid.sqlite (made by the commands that issue; the commands that only read create nothing).

Exit status: 0 on success; 2 when no retry helps (a bad value, flag or store URL, a SQLite file
that does not exist, a store an operator must repair first); 1 otherwise (a store that cannot be
reached now, a check or a verify that finds a problem). Errors are one line on stderr."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Issue ids and print them, one a line.
    #[command(after_help = "Examples:
  gdid next --count 5                                  # GDIDs from ./gdid.sqlite (created on first use)
  gdid next --store mysql://root@127.0.0.1/test --store postgres://postgres@127.0.0.1/test
  gdid next --store memory --count 3 --format json
  gdid next --count 3 --form hex                       # or leb, compact, elink (GDIDs only)
  gdid next --strategy sharded --digits 12 --store postgres://postgres@127.0.0.1/test
  gdid next --strategy uuid-v7 --count 2
  GDID_STORE='postgres://app:secret@db/ids' gdid next  # no password in the command line
  gdid next --store-file /etc/gdid/stores              # one URL a line

Every id printed was issued (and, for a store, made durable) before it was printed: a process
killed midway has printed only ids that will never be issued again.")]
    Next(NextArgs),
    /// Print the fields and every form of one id.
    #[command(
        after_help = "Examples:\n  gdid inspect 1293:3:57\n  gdid inspect --from hex 0000050d3000000000000039 --format json\n  gdid inspect --from compact 8d0a9307\n  gdid inspect --from auto AUCKIR-ABASVITILT\n\nThe ELink shown is spelled with seed 0: the same id always shows the same link."
    )]
    Inspect {
        /// The form VALUE is given in; hex, leb and compact take hex digits.
        #[arg(long, value_parser = ByName::<InputForm>::new(), default_value_t = InputForm::Form(Form::Text))]
        from: InputForm,
        /// text: a table; json: one JSON object (every field and form).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
        /// The id.
        value: String,
    },
    /// Convert ids from one form to another: the VALUEs given, or else stdin, one a line.
    #[command(after_help = "Examples:
  gdid convert --to hex 1293:3:57
  gdid convert --from hex --to text 0000050d3000000000000039
  gdid next --count 3 | gdid convert --to compact
  gdid convert --from compact --to text 8d0a9307
  gdid convert --to elink 1280:2:8902382                # AUCKIR-ABASVITILT (seed 0)
  gdid convert --from auto --to text AUCKIR-ABASVITILT  # colon, hex or ELink

A bad value is reported on stderr with its line number; the others are still converted, and the
exit status is then 2.")]
    Convert {
        /// The form the values are given in; hex, leb and compact take hex digits.
        #[arg(long, value_parser = ByName::<InputForm>::new(), default_value_t = InputForm::Form(Form::Text))]
        from: InputForm,
        /// The form to write; hex, leb and compact as hex digits.
        #[arg(long, value_parser = ByName::<Form>::new())]
        to: Form,
        /// The ids; none: read stdin.
        values: Vec<String>,
    },
    /// Keep every shard supplied with open hi-lo windows for `gdid next --strategy window`.
    #[command(after_help = "Examples:
  gdid agent --sequence ids --min-open-windows 2 --window-size 100000      # shard: ./gdid.sqlite
  gdid agent --store mysql://root@127.0.0.1/test --store postgres://postgres@127.0.0.1/test \\
             --sequence order --sequence invoice --min-open-windows 2 --window-size 1000000
  gdid agent --store mongodb://127.0.0.1:27017/ids --min-open-windows 3 --window-size 1000000 --watch 10
  gdid next --strategy window --sequence ids --count 5                     # ids from those windows

Prints one line per window opened (`shard sequence start..end`), then what the round did. Without
--sequence, every sequence found on a shard is supplied. The agent runs only when it reaches every
shard; windows never overlap, even with several agents at once. With --watch, a round that fails
is reported on stderr and the next one runs; Ctrl-C stops the agent.")]
    Agent(AgentArgs),
    /// Measure ids per second and the latency of each id, in this process.
    #[command(after_help = "Examples:
  gdid bench --store memory --seconds 2
  gdid bench --threads 2 --seconds 10                     # ./gdid.sqlite, sequence `bench`
  gdid bench --store postgres://postgres@127.0.0.1/test --strategy one-at-a-time --format json
  gdid bench --strategy window --store sqlite:ids.sqlite --sequence ids   # after `gdid agent`

THREADS tasks call next_id in a loop on as many worker threads for SECONDS, then a table gives the
ids per second and the latency percentiles of one call. The first failed call stops the run (exit
status 1). A progress bar shows on stderr when it is a terminal.")]
    Bench(BenchArgs),
    /// Check ids a fleet issued: none twice, whatever form each was written in.
    #[command(after_help = "Examples:
  gdid verify a.txt b.txt                   # each file a writer, one id a line
  cat ids.log | gdid verify --labelled      # lines `LABEL ID`: the label is the writer
  gdid verify --ordered client-*.txt        # and each writer's ids in increasing order

Ids may be in any form `gdid convert --from auto` reads (colon, hex, ELink); one id written in two
forms is one id. Prints one line per repeat (the id, each writer, form and file:line), ids gone
backwards within a writer, and a line per era and authority. Exit status 1 when an id repeats
(or, with --ordered, went backwards), 2 for a line that is no id.")]
    Verify(VerifyArgs),
    /// Say whether a store's acknowledged blocks survive a crash and a failover, from its
    /// server's settings.
    #[command(after_help = "Examples:
  gdid check                                                # ./gdid.sqlite
  gdid check --store postgres://postgres@127.0.0.1/test --store mysql://root@127.0.0.1/test
  gdid check --store mongodb://127.0.0.1:27017/ids --format json

Prints each setting uniqueness relies on (PostgreSQL: fsync, full_page_writes, synchronous_commit,
synchronous_standby_names, the streaming standbys; MariaDB/MySQL: innodb_flush_log_at_trx_commit,
sync_binlog, read_only, replication, semi-synchronous replicas; SQLite: the file, journal_mode,
synchronous; MongoDB: the write concern), its verdict and what it means:
  safe              nothing acknowledged is lost
  lost on failover  a failover can lose blocks: GDIDs move to a new era and stay unique,
                    one-at-a-time counters, ranges and windows stop until skipped forward
  issued again      a crash can lose blocks on the same server: their ids are issued again
  unknown           not judged here (a standby, a server behind gdid serve)
Exit status 0 when every setting is safe, 1 naming each one that is not (or a store that cannot
be reached), 2 for a bad URL or a SQLite file that does not exist. Nothing is created in the
store (no file, schema or table) and no authority number is read or recorded; a standby is
checked too.")]
    Check(CheckArgs),
    /// List a store's sequences, raise the floor of one, move them past a failover or a restore.
    #[command(after_help = "Examples:
  gdid sequences list                                   # ./gdid.sqlite
  gdid sequences list --store postgres://postgres@127.0.0.1/test --format json
  gdid sequences show --scope shop --sequence orders
  gdid sequences set-floor --scope shop --sequence orders --at 1000001   # after a table's largest id
  gdid sequences fence --store postgres://postgres@127.0.0.1/test --all  # after a restore from a backup

list and show print, per counter record: the authority (or `counter`), scope, sequence, era, next
counter, counters used, the last allocation's time, the recent rate (the last block's size over
the time since the block before) and the runway of the era at that rate; `unknown` without two
timed allocations. list and show create nothing (a store without gdid tables has no records; a
SQLite file that does not exist is an error, exit 2). set-floor never lowers a counter (exit 2),
is safe while ids are issued, and needs --scope and --sequence.")]
    Sequences {
        #[command(subcommand)]
        command: SequencesCommand,
    },
    /// Print or apply the DDL of a SQL store's gdid tables, for a DBA (least privilege).
    #[command(after_help = "Examples:
  gdid schema print --store postgres://dba@127.0.0.1/ids?schema=gdid > gdid.sql   # read it, apply it
  gdid schema apply --store mysql://dba@127.0.0.1/ids                             # or let gdid apply it

print creates nothing (a SQLite file that does not exist is an error, exit 2); apply creates the
file and the tables.

Each statement is idempotent (CREATE … IF NOT EXISTS). A store whose tables exist and are current
runs no DDL when it opens: the application's role then needs only SELECT, INSERT, UPDATE on them
(and DELETE on gdid_windows to prune hi-lo windows). PostgreSQL: the tables are in the URL's
schema=NAME, or else in the schema of the role's search_path that holds them (the one CREATE
TABLE would use when none does).")]
    Schema {
        #[command(subcommand)]
        command: SchemaCommand,
    },
    /// Serve a store's authority over HTTP, for generators in other processes and any language.
    #[command(after_help = "Examples:
  gdid token --scopes shop                              # a token (line 1), its tokens-file line (line 2)
  gdid token --scopes shop:metrics,billing              # shop's metrics too; billing: ids only
  gdid serve --tokens tokens.txt                        # ./gdid.sqlite's authority on 127.0.0.1:7070
  gdid serve --store postgres://postgres@127.0.0.1/test --listen 0.0.0.0:8443 \\
             --tokens tokens.txt --tls-cert cert.pem --tls-key key.pem --metrics
  GDID_TOKEN=... gdid next --store http://127.0.0.1:7070 --store http://127.0.0.1:7071
  curl -H \"Authorization: Bearer $GDID_TOKEN\" -d '{\"scope\":\"shop\",\"sequence\":\"orders\",\"count\":3}' \\
       http://127.0.0.1:7070/v1/ids

Routes: GET /v1/health (no token), GET /v1/ready, GET /v1/authority, POST /v1/blocks
{scope, sequence, size}, POST /v1/blocks/give-back (tokens allowed `SCOPE:give-back`), POST /v1/ids {scope,
sequence, count, form: text|hex|leb|compact|elink}, GET /v1/metrics (tokens allowed `SCOPE:metrics`, each
seeing its scopes' series), GET /v1/openapi.json (no token: these
routes as an OpenAPI 3.1 document). Every other request carries `Authorization: Bearer TOKEN`
with a token of the tokens file allowed the scope. The URL served is
printed on stdout, warnings and errors on stderr (RUST_LOG=info for more); SIGTERM or Ctrl-C lets
the requests in flight finish, gives the unused ids of /v1/ids back (all at once, 10 s at most),
then exits; a second SIGTERM or Ctrl-C exits at once (the ids in hand are lost, never reissued).
SIGHUP reads the tokens file again, without dropping a connection (a file that cannot be used is
reported, and still revokes: the tokens it no longer lists are refused, the others kept, none
added, until a file that can be used is read). One token uses at most --max-sequences-per-token
sequences (1,000).")]
    Serve(ServeArgs),
    /// Make a new token: the token on line 1, its tokens-file line (by digest) on line 2.
    #[command(after_help = "Examples:
  gdid token --scopes shop                      # issue ids in scope shop
  gdid token --scopes 'shop:metrics,billing'    # and read shop's series at /v1/metrics
  gdid token --scopes 'shop:give-back:metrics'  # and give unused ids back (trusted clients only)
  gdid token --scopes '*'                       # every scope (quoted: the shell expands *)
  gdid token --scopes shop >> tokens.txt        # then keep line 1 for the client, delete it here")]
    Token(TokenArgs),
    /// Print a completion script for SHELL on stdout.
    #[command(after_help = "Examples:
  gdid completions bash > ~/.local/share/bash-completion/completions/gdid
  gdid completions zsh > ~/.zfunc/_gdid          # a folder of your $fpath
  gdid completions fish > ~/.config/fish/completions/gdid.fish")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the Markdown reference of every command (docs/reference/cli.md).
    #[command(hide = true)]
    Reference,
}

#[derive(Debug, clap::Args)]
struct NextArgs {
    #[command(flatten)]
    issue: IssueArgs,
    /// The sequence (think: a table).
    #[arg(long, default_value = "ids")]
    sequence: String,
    /// How many ids.
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// How each id is spelled: text (GDIDs era:authority:counter, numbers in decimal, UUIDs
    /// hyphenated, ObjectIds in hex); hex (GDIDs as 24 hex digits, numbers as 16, UUIDs as 32,
    /// ObjectIds as 24); leb, compact (as hex digits) and elink: GDIDs only.
    #[arg(long, value_parser = ByName::<Form>::new(), default_value_t = Form::Text, conflicts_with = "format")]
    form: Form,
    /// text: one id a line, in --form; json: one JSON object a line (a GDID with every field
    /// and form, as `gdid inspect --format json`; another id as {"id": …}).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

impl From<NoSuchForm> for Failure {
    fn from(e: NoSuchForm) -> Self {
        Failure::BadArguments(e.to_string())
    }
}

/// The generator `args` describe for `sequence`, its stores opened.
async fn issuer(args: IssueArgs, sequence: String, needed: Option<u64>) -> Result<Issuer, Failure> {
    let settings = args
        .settings(sequence, needed)
        .map_err(Failure::BadArguments)?;
    args.strategy.build(&args.stores, &settings).await
}

async fn next(args: NextArgs) -> Result<(), Failure> {
    let printed = Printed::of(args.form, args.format);
    printed.check(args.issue.strategy)?;
    let issuer = issuer(args.issue, args.sequence, Some(args.count)).await?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let issued = next::issue(&issuer, args.count, printed, &mut out).await;
    // What was reserved and not printed goes back to the store, so the next run goes on from
    // the last id printed; if it cannot, those ids are lost, never issued twice.
    if let Err(e) = issuer.close().await {
        eprintln!("gdid: the ids reserved and not issued could not be given back (lost): {e}");
    }
    issued
}

async fn bench(args: BenchArgs) -> Result<(), Failure> {
    let duration = args.duration().map_err(Failure::BadArguments)?;
    let (threads, strategy, stores) = (args.threads, args.issue.strategy, args.issue.labels());
    let issuer = issuer(args.issue, args.sequence, None).await?;
    let measurement = bench::measure(&issuer, threads, duration).await?;
    let report = bench::Report {
        strategy,
        stores,
        threads,
        measurement: &measurement,
    };
    let mut out = io::stdout().lock();
    if args.format == Format::Json {
        report.write_json(&mut out)?;
    } else {
        report.write_table(&mut out)?;
    }
    Ok(())
}

/// A runtime of `threads` worker threads.
fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(Failure::Runtime)
}

/// Settles the store URLs of `command` (--store, --store-file, GDID_STORE, or the default)
/// before it runs.
fn resolve_stores(command: &mut Command) -> Result<(), String> {
    let many = |given: &mut Vec<String>, file: Option<&std::path::Path>| {
        *given = store::urls(given, file)?;
        Ok(())
    };
    match command {
        Command::Next(args) => args.issue.resolve_stores(),
        Command::Bench(args) => args.issue.resolve_stores(),
        Command::Agent(args) => many(&mut args.stores, args.store_file.as_deref()),
        Command::Check(args) => many(&mut args.stores, args.store_file.as_deref()),
        Command::Sequences { command } => command.store_mut().resolve(),
        Command::Schema { command } => command.store_mut().resolve(),
        Command::Serve(args) => args.resolve_store(),
        Command::Inspect { .. }
        | Command::Convert { .. }
        | Command::Verify(_)
        | Command::Token(_)
        | Command::Completions { .. }
        | Command::Reference => Ok(()),
    }
}

fn run(mut cli: Cli) -> Result<(), Failure> {
    resolve_stores(&mut cli.command).map_err(Failure::BadArguments)?;
    match cli.command {
        Command::Next(args) => runtime(2)?.block_on(next(args)),
        Command::Agent(args) => runtime(2)?.block_on(agent::run(args)),
        Command::Sequences { command } => {
            let mut out = io::stdout().lock();
            runtime(2)?.block_on(sequences::run(command, &mut out))
        }
        Command::Schema { command } => {
            let mut out = io::stdout().lock();
            runtime(2)?.block_on(schema::run(command, &mut out))
        }
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a write error, and a reader that went
            // away (`gdid completions bash | head`) is not one.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "gdid", &mut script);
            let mut out = io::stdout().lock();
            out.write_all(&script)?;
            out.flush()?;
            Ok(())
        }
        Command::Reference => {
            let mut out = io::stdout().lock();
            out.write_all(reference::markdown(Cli::command()).as_bytes())?;
            out.flush()?;
            Ok(())
        }
        Command::Serve(args) => {
            let cores = std::thread::available_parallelism().map_or(2, usize::from);
            let threads = args.threads.map_or(cores, usize::from);
            runtime(threads)?.block_on(serve::serve(args))
        }
        Command::Token(args) => serve::token(&args, &mut io::stdout().lock()),
        Command::Verify(args) => verify::run(&args, &mut io::stdout().lock()),
        Command::Check(args) => {
            let mut out = io::stdout().lock();
            runtime(2)?.block_on(check::run(&args, &mut out))
        }
        Command::Bench(args) => {
            // `worker_threads(0)` would panic: a bad --threads is reported before.
            let threads = args.threads().map_err(Failure::BadArguments)?;
            runtime(threads)?.block_on(bench(args))
        }
        Command::Inspect {
            from,
            format,
            value,
        } => {
            let id = form::read(from, &value)?;
            let inspection = Inspection::of(id);
            let mut out = io::stdout().lock();
            if format == Format::Json {
                inspection.write_json(&mut out)?;
            } else {
                inspection.write_table(&mut out)?;
            }
            out.flush()?;
            Ok(())
        }
        Command::Convert { from, to, values } => {
            let mut out = io::BufWriter::new(io::stdout().lock());
            let done = convert::convert(
                convert::values(values),
                from,
                to,
                &mut out,
                &mut io::stderr(),
            )?;
            match done.refused {
                0 => Ok(()),
                refused => Err(Failure::Refused(refused)),
            }
        }
    }
}

/// A command line clap refuses, as one line (its message and tip, without the usage): errors
/// are one line on stderr, as every other error of the command.
fn one_line(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    rendered
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more"))
        .filter(|line| !line.is_empty())
        .map(|line| match line.strip_prefix("tip: ") {
            Some(tip) => format!("({tip})"),
            None => line.strip_prefix("error: ").unwrap_or(line).to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version on stdout, and help for a command line with no command: as clap does.
        Err(e)
            if !e.use_stderr()
                || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            e.exit()
        }
        Err(e) => {
            eprintln!("gdid: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) if failure.is_closed_pipe() => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("gdid: {failure}");
            failure.exit_code()
        }
    }
}
