//! `headroom prices import`: a provider's own price list read into a price table that
//! `--prices FILE` and `[plan] prices` take, every row naming the file, its date and its
//! SHA-256.

use std::path::PathBuf;

use anyhow::{Context, Result};
use headroom_pricing::PriceTable;
use headroom_pricing::import::{Import, ImportError, aws, azure, hetzner};

use crate::exit;
use crate::outputs::{Output, Outputs};

#[derive(clap::Subcommand)]
pub enum ImportCommand {
    /// An AWS Price List bulk offer file (no credentials:
    /// https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/<offer>/current/<region>/index.json),
    /// streamed, on demand: AmazonEC2 (Linux instances on shared tenancy, EBS volumes),
    /// AmazonRDS (database classes, Single-AZ, no licence) or AmazonVPC (the public IPv4
    /// address in use).
    Aws {
        /// The offer file (JSON).
        file: PathBuf,
        /// Only this region's products (`us-east-1`); the file's own region otherwise.
        #[arg(long)]
        region: Option<String>,
        /// The engine of the AmazonRDS offer's classes, as the offer writes it.
        #[arg(long, default_value = "PostgreSQL")]
        engine: String,
        /// Write the table here (atomically) instead of to stdout: a new file, or one
        /// `prices import` wrote.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace the `--out` file even if `prices import` did not write it.
        #[arg(long, requires = "out")]
        force: bool,
    },
    /// Hetzner Cloud's `GET /v1/pricing` answer (JSON, with a project's API token): server
    /// types at one location, net of VAT and without their primary IPv4, which is a line of
    /// its own with volumes and backups.
    Hetzner {
        /// The answer (JSON).
        file: PathBuf,
        /// The location priced: `fsn1`, `nbg1`, `hel1`, `ash`, `hil`, `sin`.
        #[arg(long)]
        location: String,
        /// Whose prices the answer's are: new orders and rescales (today's), or servers
        /// ordered before 2026-06-15, which keep the 2026-04-01 rate.
        #[arg(long, value_enum, default_value = "new-orders")]
        tier: Tier,
        /// A price table with the server types' cores and memory (the answer has neither);
        /// the shipped one by default.
        #[arg(long, value_name = "FILE")]
        specs: Option<PathBuf>,
        /// Write the table here (atomically) instead of to stdout: a new file, or one
        /// `prices import` wrote.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace the `--out` file even if `prices import` did not write it.
        #[arg(long, requires = "out")]
        force: bool,
    },
    /// Pages of Azure's Retail Prices API (JSON, no credentials:
    /// https://prices.azure.com/api/retail/prices?$filter=serviceName eq 'Virtual Machines' and
    /// armRegionName eq '<region>', each page's `NextPageLink` the next): Linux virtual
    /// machines, pay as you go, in US dollars. The pages carry no cores or memory: give the
    /// region's sizes with `--sizes`.
    Azure {
        /// The pages (JSON), in the order the API gave them.
        #[arg(required = true)]
        pages: Vec<PathBuf>,
        /// The region priced, as `armRegionName` writes it: `eastus`, `westeurope`.
        #[arg(long)]
        region: String,
        /// The region's virtual machine sizes: what `az vm list-sizes --location <region>`
        /// prints (or the REST API's `vmSizes` answer). A size it does not list is left out,
        /// and said.
        #[arg(long, value_name = "FILE")]
        sizes: Option<PathBuf>,
        /// Write the table here (atomically) instead of to stdout: a new file, or one
        /// `prices import` wrote.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace the `--out` file even if `prices import` did not write it.
        #[arg(long, requires = "out")]
        force: bool,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Tier {
    NewOrders,
    OrderedBefore20260615,
}

impl ImportCommand {
    /// The files it reads, and what each is.
    fn inputs(&self) -> Vec<(&std::path::Path, &'static str)> {
        match self {
            ImportCommand::Aws { file, .. } => vec![(file.as_path(), "the offer file")],
            ImportCommand::Hetzner { file, specs, .. } => [(file.as_path(), "the pricing answer")]
                .into_iter()
                .chain(specs.as_deref().map(|s| (s, "the --specs table")))
                .collect(),
            ImportCommand::Azure { pages, sizes, .. } => pages
                .iter()
                .map(|p| (p.as_path(), "one of the pages"))
                .chain(sizes.as_deref().map(|s| (s, "the --sizes file")))
                .collect(),
        }
    }

    /// `--out` and `--force`.
    fn out(&self) -> (Option<&std::path::Path>, bool) {
        match self {
            ImportCommand::Aws { out, force, .. }
            | ImportCommand::Hetzner { out, force, .. }
            | ImportCommand::Azure { out, force, .. } => (out.as_deref(), *force),
        }
    }
}

/// Imports as `command` asks; `today` dates a file that carries no date of its own, and no
/// file is published after it. `--out` is claimed by the guard every output passes before
/// any file is read: never an input, a device or a file `prices import` did not write.
pub fn run(command: &ImportCommand, today: jiff::civil::Date) -> Result<u8> {
    let claimed = match command.out() {
        (Some(out), force) => {
            let mut outputs = Outputs::new(force);
            for (input, what) in command.inputs() {
                outputs.input(input, what);
            }
            Some(outputs.claim(out, "--out", Output::PriceTable)?)
        }
        (None, _) => None,
    };
    let import = match command {
        ImportCommand::Aws {
            file,
            region,
            engine,
            ..
        } => {
            let filter = aws::Filter {
                region: region.clone(),
                engine: engine.clone(),
            };
            aws_offer(file, &filter, today)?
        }
        ImportCommand::Hetzner {
            file,
            location,
            tier,
            specs,
            ..
        } => hetzner_answer(file, location, *tier, specs.as_deref(), today)?,
        ImportCommand::Azure {
            pages,
            region,
            sizes,
            ..
        } => azure_pages(pages, region, sizes.as_deref(), today)?,
    };
    let text = import
        .to_toml()
        .context("the imported table could not be written as TOML")?;
    match &claimed {
        Some(claimed) => {
            crate::outputs::write(claimed, &text)
                .with_context(|| format!("{}: cannot write the table", claimed.path.display()))?;
            let rows = import.table.rows();
            eprintln!(
                "{}: {rows} {} from {}",
                claimed.path.display(),
                if rows == 1 { "row" } else { "rows" },
                import.provenance.source()
            );
        }
        None => print!("{text}"),
    }
    for note in &import.notes {
        eprintln!("note: left out: {note}");
    }
    Ok(exit::OK)
}

/// Hetzner's answer at `location`, its server types' cores and memory from `specs` (the
/// shipped table without it).
fn hetzner_answer(
    file: &std::path::Path,
    location: &str,
    tier: Tier,
    specs: Option<&std::path::Path>,
    today: jiff::civil::Date,
) -> Result<Import> {
    let (table, name) = match specs {
        Some(path) => {
            let text =
                crate::read_bounded(path, crate::MAX_PRICE_TABLE_BYTES, "the price table", "")?;
            let table = PriceTable::from_toml(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            (table, path.display().to_string())
        }
        None => (
            PriceTable::embedded().context("the shipped price table is broken")?,
            headroom_pricing::SHIPPED.to_owned(),
        ),
    };
    let reader = std::fs::File::open(file)
        .with_context(|| format!("{}: cannot open the pricing answer", file.display()))?;
    let options = hetzner::Options {
        location: location.to_owned(),
        tier: match tier {
            Tier::NewOrders => hetzner::Tier::NewOrders,
            Tier::OrderedBefore20260615 => hetzner::Tier::OrderedBefore,
        },
        specs: (&table, &name),
        today: today.to_string(),
    };
    let read = hetzner::import(reader, &file.display().to_string(), &options);
    said(file, read)
}

/// An AWS offer file read as `filter` asks.
fn aws_offer(
    file: &std::path::Path,
    filter: &aws::Filter,
    today: jiff::civil::Date,
) -> Result<Import> {
    let reader = std::fs::File::open(file)
        .with_context(|| format!("{}: cannot open the offer file", file.display()))?;
    said(
        file,
        aws::import(
            reader,
            &file.display().to_string(),
            filter,
            &today.to_string(),
        ),
    )
}

/// Azure's pages read with the region's sizes (`sizes`, when given).
fn azure_pages(
    pages: &[PathBuf],
    region: &str,
    sizes: Option<&std::path::Path>,
    today: jiff::civil::Date,
) -> Result<Import> {
    let sizes = match sizes {
        Some(path) => {
            let file = std::fs::File::open(path)
                .with_context(|| format!("{}: cannot open the sizes", path.display()))?;
            Some(said(
                path,
                azure::Sizes::read(file, &path.display().to_string()),
            )?)
        }
        None => None,
    };
    let mut readers = Vec::new();
    for page in pages {
        let file = std::fs::File::open(page)
            .with_context(|| format!("{}: cannot open the page", page.display()))?;
        readers.push((file, page.display().to_string()));
    }
    let options = azure::Options {
        region: region.to_owned(),
        sizes: sizes.as_ref(),
        today: today.to_string(),
    };
    let read = azure::import(readers, &options);
    // An error names its page itself; a format error of several pages names them all.
    let named = match pages {
        [one] => one.clone(),
        _ => PathBuf::from(
            pages
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        ),
    };
    said(&named, read)
}

/// The import, or its error naming the file and where in it.
fn said<T>(file: &std::path::Path, read: Result<T, ImportError>) -> Result<T> {
    const NOT_AS_DOWNLOADED: &str = "not the provider's JSON file as downloaded (`headroom prices import --help` says where each comes from)";
    read.map_err(|error| match &error {
        ImportError::Json {
            message,
            line,
            column,
        } => anyhow::anyhow!(
            "{}:{line}:{column}: {message}: {NOT_AS_DOWNLOADED}",
            file.display()
        ),
        ImportError::JsonIn { .. } => anyhow::anyhow!("{error}: {NOT_AS_DOWNLOADED}"),
        // It names its file itself (one of several pages).
        ImportError::TooLarge { .. } => anyhow::anyhow!("{error}"),
        other => anyhow::anyhow!("{}: {other}", file.display()),
    })
}
